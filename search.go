package engram

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/engram-memory/engram/backend"
	"github.com/engram-memory/engram/embed"
	"github.com/engram-memory/engram/internal/recall"
	"github.com/engram-memory/engram/memory"
)

// MaxFusionWeight bounds a fusion weight (a query's bm25_weight or
// vector_weight, Options.VectorWeight, a calibrated weight): far above any
// useful one, low enough that a weighted score never overflows.
const MaxFusionWeight = recall.MaxWeight

// Search runs one query through the recall pipeline and records a use of
// every result that clears the model's relevance bar (Response.RelevanceBar)
// unless q.NoRecord is set: a result below it was listed, not relevant. It fails only on an
// invalid query (ErrInvalidQuery) or a store error; a missing or failing
// embedder, reranker or LLM degrades the response instead. A scoped view
// searches inside its scope only.
func (v view) Search(ctx context.Context, q Query) (*Response, error) {
	if err := v.narrow(&q.Filter); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrInvalidQuery, err)
	}
	return v.search(ctx, q)
}

// search is Search for a query already inside the view's scope.
func (v view) search(ctx context.Context, q Query) (*Response, error) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel() // a prefetch still running is not waited for
	pre := v.e.prefetch(ctx, q)
	s, err := v.e.searcher(ctx, v.e.be)
	if err != nil {
		return nil, err
	}
	if pre != nil {
		s.Config.Embedder = pre
	}
	resp, err := s.Search(ctx, q)
	if err != nil {
		return nil, err
	}
	if err := v.attachNeighbours(ctx, resp.Results, q.Neighbours); err != nil {
		return nil, err
	}
	if !q.NoRecord {
		if err := v.recordUse(ctx, relevant(resp)); err != nil {
			// The results are good; failing to count a use must not lose them.
			resp.Degraded = append(resp.Degraded, Degraded{Stage: "demand", Reason: "recording the use failed: " + err.Error()})
		}
	}
	return resp, nil
}

// indexLoader is a backend that loads an index on first need (the SQLite
// one), saying whether it has.
type indexLoader interface{ IndexLoaded() bool }

// prefetch starts embedding q's text when the index is still to be loaded
// (the first search of a process: a CLI call or a hook) and the model runs
// in this process: the query's vector does not depend on the index, so the
// two proceed side by side instead of one after the other. It returns the
// embedder the search then uses, which hands over that vector, or nil when
// there is nothing to prefetch. A vector Options.FirstQuery started in Open
// is taken by the first search with a vector leg, if it is of that text
// (and dropped otherwise). The vector is the one the search would have
// computed (the model's vectors do not depend on the batch).
func (e *engine) prefetch(ctx context.Context, q Query) embed.Embedder {
	text := recall.VectorText(strings.TrimSpace(q.Query)) // as recall embeds it
	if q.Mode == memory.ModeBM25 || q.HyDE {
		return nil // no vector leg
	}
	if p := e.first.Swap(nil); p != nil && p.text == text {
		return p
	}
	if e.loader == nil || e.loader.IndexLoaded() {
		return nil // no index to wait for
	}
	if p := startQuery(ctx, e.embedder, text); p != nil {
		return p
	}
	return nil
}

// startQuery starts embedding text as a query with m, when m runs in this
// process and reads the text; nil otherwise.
func startQuery(ctx context.Context, m embed.Embedder, text string) *prefetched {
	if m == nil || !embed.IsInProcess(m) || text == "" || embed.Unread(m, text) != "" {
		return nil
	}
	p := &prefetched{Embedder: m, text: text, done: make(chan struct{})}
	go func() {
		defer close(p.done)
		vecs, err := embed.EmbedQuery(ctx, m, []string{text})
		if err == nil && len(vecs) == 1 {
			p.vec = vecs[0]
		}
	}()
	return p
}

// prefetched is an embedder whose query vector of one text is being
// computed already: EmbedQuery of that text alone waits for it (or for ctx),
// and anything else, or a prefetch that failed, is embedded as usual.
type prefetched struct {
	embed.Embedder
	text string
	done chan struct{}
	vec  []float32 // set before done closes; nil if the prefetch failed
}

// InProcess is the wrapped embedder's (embed.InProcess).
func (p *prefetched) InProcess() bool { return embed.IsInProcess(p.Embedder) }

// Scripts are the wrapped embedder's (embed.Reader): the search decides what
// the model reads as it would without the prefetch.
func (p *prefetched) Scripts() embed.Scripts { return embed.ScriptsOf(p.Embedder) }

func (p *prefetched) EmbedQuery(ctx context.Context, texts []string) ([][]float32, error) {
	if len(texts) == 1 && texts[0] == p.text {
		select {
		case <-p.done:
			if p.vec != nil {
				return [][]float32{p.vec}, nil
			}
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	return embed.EmbedQuery(ctx, p.Embedder, texts)
}

// searcher assembles the pipeline's configuration over the legs of s.
func (e *engine) searcher(ctx context.Context, s backend.Searcher) (*recall.Searcher, error) {
	cfg := recall.Config{
		Embedder:     e.embedder,
		EmbedTimeout: e.opts.EmbedTimeout,
		Reranker:     e.opts.Reranker,
		RerankDepth:  e.opts.RerankDepth,
		LLM:          e.opts.LLM,
		StageTimeout: e.opts.StageTimeout,
	}
	cfg.KeywordBar = KeywordRelevance
	if e.embedder != nil {
		var err error
		if cfg.VectorWeight, cfg.WeightSource, err = e.vectorWeight(ctx); err != nil {
			return nil, err
		}
		def := ModelDefaults(e.embedder.Model())
		cfg.VectorFloor, cfg.Fusion, cfg.RRFK = def.Floor, def.Fusion, def.RRFK
		cfg.RelevanceBar, cfg.VectorBar, cfg.Paraphrase = def.Relevance, def.VectorRelevance, def.Paraphrase
		cfg.KeywordGate = def.KeywordGate
		cfg.NonLatinBar, cfg.NonLatinVectorBar = def.NonLatinRelevance, def.NonLatinVectorRelevance
		if f := e.opts.VectorFloor; f != nil {
			cfg.VectorFloor = *f
		}
		if b := e.opts.RelevanceBar; b != nil {
			// The option is the model's bar, both legs' and the vector leg's,
			// in every script.
			cfg.RelevanceBar, cfg.VectorBar = *b, *b
			cfg.NonLatinBar, cfg.NonLatinVectorBar = 0, 0
		}
	}
	return &recall.Searcher{Backend: s, Config: cfg}, nil
}

// relevant is the results that clear the response's relevance bar: what was
// delivered and relevant, the only results that count as a use.
func relevant(resp *Response) []Result {
	out := make([]Result, 0, len(resp.Results))
	for _, r := range resp.Results {
		if r.Explain != nil && r.Explain.Relevance >= resp.RelevanceBar {
			out = append(out, r)
		}
	}
	return out
}

// recordUse counts a delivery of each result as a use, in one write per
// scope among the results (usually one) that also brings the index's counters
// up to date; memories deleted since are skipped. Each result is named
// exactly, by its id in its own scope: ids are per-scope namespaces, so a
// parent scope's results may share an id.
func (v view) recordUse(ctx context.Context, results []Result) error {
	if len(results) == 0 {
		return nil
	}
	now := time.Now().UTC()
	var order []string
	groups := map[string][]string{}
	scopes := map[string]map[string]string{}
	for _, r := range results {
		sj := memory.ScopeJSON(r.Scope)
		if _, ok := groups[sj]; !ok {
			order = append(order, sj)
			scopes[sj] = r.Scope
		}
		groups[sj] = append(groups[sj], r.ID)
	}
	for _, sj := range order {
		scope := scopes[sj]
		if len(scope) == 0 {
			scope = nil
		}
		if _, err := v.e.be.RecordUse(ctx, scope, groups[sj], now, false); err != nil {
			return err
		}
	}
	return nil
}
