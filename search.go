package engram

import (
	"context"

	"github.com/engram-memory/engram/internal/recall"
)

// Search runs one query through the recall pipeline (DESIGN §1) and records a
// use of every delivered result unless q.NoRecord is set. It fails only on an
// invalid query (ErrInvalidQuery) or a store error; a missing or failing
// embedder, reranker or LLM degrades the response instead.
func (db *DB) Search(ctx context.Context, q Query) (*Response, error) {
	if err := db.sync(ctx); err != nil {
		return nil, err
	}
	resp, err := db.searcher().Search(ctx, q)
	if err != nil {
		return nil, err
	}
	if !q.NoRecord {
		if err := db.recordUse(ctx, resp.Results); err != nil {
			// The results are good; failing to count a use must not lose them.
			resp.Degraded = append(resp.Degraded, Degraded{Stage: "demand", Reason: "recording the use failed: " + err.Error()})
		}
	}
	return resp, nil
}

// searcher assembles the pipeline's configuration for this store.
func (db *DB) searcher() *recall.Searcher {
	cfg := recall.Config{
		Embedder:     db.embedder,
		EmbedTimeout: db.opts.EmbedTimeout,
		Reranker:     db.opts.Reranker,
		RerankDepth:  db.opts.RerankDepth,
		LLM:          db.opts.LLM,
		StageTimeout: db.opts.StageTimeout,
	}
	if db.embedder != nil {
		cfg.VectorWeight, cfg.WeightSource = db.vectorWeight()
		def := ModelDefaults(db.embedder.Model())
		cfg.VectorFloor, cfg.Fusion = def.Floor, def.Fusion
	}
	return &recall.Searcher{Index: db.ix, Lock: &db.mu, Config: cfg}
}
