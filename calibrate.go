package engram

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"

	"github.com/engram-memory/engram/embed"
	"github.com/engram-memory/engram/internal/calibrate"
	"github.com/engram-memory/engram/internal/index"
	"github.com/engram-memory/engram/internal/recall"
	"github.com/engram-memory/engram/memory"
)

// DefaultCalibrateSamples is how many pseudo-queries Calibrate makes.
const DefaultCalibrateSamples = 200

// MinCalibrateQueries is the fewest pseudo-queries a store must give for its
// weight to be stored: below it, one standard error spans every weight.
const MinCalibrateQueries = 30

// calibrateDepth is the ranks a pseudo-query's source is looked for in (MRR@10).
const calibrateDepth = 10

// CalibratePoint is one vector weight's outcome in a calibration.
type CalibratePoint = calibrate.Point

// CalibrateOptions shape a calibration.
type CalibrateOptions struct {
	// Method makes the pseudo-queries: "heldout" (default), "partial", "span" or "name"
	// (see internal/calibrate).
	Method string
	// Samples is the number of pseudo-queries; 0 means DefaultCalibrateSamples.
	Samples int
	// Seed fixes which memories are drawn.
	Seed uint64
	// Weights are the vector weights tried; nil means 0, .02, .05, .1, .2, .3, .5, 1.
	Weights []float64
	// DryRun measures without storing the chosen weight.
	DryRun bool
}

// CalibrateResult is what Calibrate measured and chose.
type CalibrateResult struct {
	Model   string           `json:"model"`
	Method  string           `json:"method"`
	Queries int              `json:"queries"`
	Points  []CalibratePoint `json:"points"`
	// Chosen is the weight with the best MRR (ties to the smaller weight).
	Chosen float64 `json:"chosen"`
	// Previous is the weight searches used before, and where it came from
	// (model, store or option).
	Previous       float64 `json:"previous"`
	PreviousSource string  `json:"previous_source"`
	// Stored says whether Chosen is now the store's weight for this model.
	Stored bool `json:"stored"`
}

// Calibrate estimates, without labels, how much the vector leg can be trusted
// on this store with this embedder. It makes pseudo-queries from the store's
// own memories (by default a sentence held out of each, the memory searched
// without it), runs them on a private copy of the index at each vector weight,
// picks the weight whose ranking puts the source memories highest (MRR@10),
// and stores it with SetVectorWeight unless opt.DryRun, so later searches use
// it (weight_source "store"). A weight given in Options.VectorWeight still
// overrides the stored one.
func (db *DB) Calibrate(ctx context.Context, opt CalibrateOptions) (*CalibrateResult, error) {
	if db.embedder == nil {
		return nil, fmt.Errorf("%w: calibrate needs an embedder: %w", ErrInvalid, embed.ErrNoEmbedder)
	}
	if opt.Method == "" {
		opt.Method = calibrate.MethodHeldOut
	}
	if !slices.Contains(calibrate.Methods, opt.Method) {
		return nil, fmt.Errorf("%w: calibrate method %q: want heldout, partial, span or name", ErrInvalid, opt.Method)
	}
	if opt.Samples < 0 {
		return nil, fmt.Errorf("%w: calibrate samples %d must not be negative", ErrInvalid, opt.Samples)
	}
	if opt.Samples == 0 {
		opt.Samples = DefaultCalibrateSamples
	}
	for _, w := range opt.Weights {
		if !(w >= 0) || w > 1e6 {
			return nil, fmt.Errorf("%w: calibrate weight %v must be a number in [0, 1e6]", ErrInvalid, w)
		}
	}
	if err := db.sync(ctx); err != nil {
		return nil, err
	}
	mems := db.memoriesWithVectors()
	// Each's order follows document numbers; sort so a seed means the same draw.
	slices.SortFunc(mems, func(a, b *memory.Memory) int { return strings.Compare(a.ID, b.ID) })

	set := calibrate.Make(mems, opt.Method, opt.Samples, opt.Seed)
	if len(set.Queries) < MinCalibrateQueries {
		return nil, fmt.Errorf("%w: calibrate: the store gives %d pseudo-queries (method %s), need %d: too few memories of 8 words or more",
			ErrInvalid, len(set.Queries), opt.Method, MinCalibrateQueries)
	}
	s, err := db.calibrationSearcher(ctx, mems, set.Edited, len(set.Queries))
	if err != nil {
		return nil, err
	}
	search := func(ctx context.Context, query string, w float64) ([]string, error) {
		resp, err := s.Search(ctx, memory.Query{Query: query, Limit: calibrateDepth, VectorWeight: &w, NoRecord: true})
		if err != nil {
			return nil, err
		}
		ids := make([]string, len(resp.Results))
		for i, r := range resp.Results {
			ids[i] = r.ID
		}
		return ids, nil
	}
	sw, err := calibrate.Sweep(ctx, set, opt.Weights, search)
	if err != nil {
		return nil, err
	}
	res := &CalibrateResult{Model: db.embedder.Model(), Method: sw.Method, Queries: sw.Queries, Points: sw.Points, Chosen: sw.Best}
	res.Previous, res.PreviousSource = db.vectorWeight()
	if !opt.DryRun {
		if err := db.SetVectorWeight(ctx, sw.Best); err != nil {
			return nil, fmt.Errorf("store calibrated weight: %w", err)
		}
		res.Stored = true
	}
	return res, nil
}

// memoriesWithVectors copies every memory with its stored vector from the
// current model: the index keeps vectors in the vector index, not on the
// memories, and the calibration index needs them on the memories it is built
// from.
func (db *DB) memoriesWithVectors() []*memory.Memory {
	model := db.embedder.Model()
	db.mu.RLock()
	defer db.mu.RUnlock()
	vi := db.ix.Vectors(model)
	mems := make([]*memory.Memory, 0, db.ix.Len())
	db.ix.Each(nil, func(m *memory.Memory) bool {
		c := *m
		c.Embedding = nil
		if doc, ok := db.ix.DocOf(m.ID); ok && vi != nil {
			if v := vi.Vector(doc); v != nil {
				c.Embedding = &memory.Embedding{Model: model, Dim: len(v), Vector: slices.Clone(v)}
			}
		}
		mems = append(mems, &c)
		return true
	})
	return mems
}

// calibrationSearcher builds a private index of mems in which the edited
// memories (re-embedded) replace their originals, and a searcher over it that
// embeds each pseudo-query once however many weights ask for it.
func (db *DB) calibrationSearcher(ctx context.Context, mems []*memory.Memory, edited map[string]*memory.Memory, queries int) (*recall.Searcher, error) {
	emb := embed.Cached(db.embedder, embed.NewLRU(queries+16))
	model := emb.Model()
	todo := make([]*memory.Memory, 0, len(edited))
	for _, m := range mems {
		if e, ok := edited[m.ID]; ok {
			todo = append(todo, e)
		}
	}
	err := batches(todo, func(_ int, batch []*memory.Memory) error {
		_, err := embedBatch(ctx, emb, batch, 0)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("calibrate: embedder %s: %w", model, err)
	}
	ix := index.New(db.ix.Tokenizer(), db.params)
	for _, m := range mems {
		if e, ok := edited[m.ID]; ok {
			m = e
		}
		ix.Put(m)
	}
	// The store's own configuration (fusion, floor, weights), without the
	// optional stages: only the legs and their fusion are being calibrated.
	cfg := db.searcher().Config
	cfg.Embedder, cfg.Reranker, cfg.LLM = emb, nil, nil
	return &recall.Searcher{Index: ix, Lock: &sync.RWMutex{}, Config: cfg}, nil
}
