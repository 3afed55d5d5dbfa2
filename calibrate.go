package engram

import (
	"context"
	"fmt"
	"slices"

	"github.com/engram-memory/engram/backend"
	"github.com/engram-memory/engram/embed"
	"github.com/engram-memory/engram/internal/calibrate"
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
	// AllowOff stores a chosen weight of 0, which switches the vector leg off
	// for this store; without it such a choice is reported, not stored.
	AllowOff bool
	// Progress, when set, hears how many of the searches are done.
	Progress func(done, total int)
}

// CalibrateResult is what Calibrate measured and chose.
type CalibrateResult struct {
	Model   string           `json:"model"`
	Method  string           `json:"method"`
	Queries int              `json:"queries"`
	Points  []CalibratePoint `json:"points"`
	// Best is the weight with the best MRR; Chosen the weight nearest the
	// model's default among those within one standard error of it (the
	// one-standard-error rule, which keeps the measured default unless the
	// store's own evidence clearly says otherwise).
	Best   float64 `json:"best"`
	Chosen float64 `json:"chosen"`
	// Previous is the weight searches used before, and where it came from
	// (model, store or option).
	Previous       float64 `json:"previous"`
	PreviousSource string  `json:"previous_source"`
	// Stored says whether Chosen is now the store's weight for this model;
	// when it is not (a dry run, or a weight of 0 without AllowOff), NotStored
	// says why.
	Stored    bool   `json:"stored"`
	NotStored string `json:"not_stored,omitempty"`
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
	e := db.e
	if e.embedder == nil {
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
	forker := e.forker
	if forker == nil {
		return nil, fmt.Errorf("calibrate: %w", ErrUnsupported)
	}
	// List's id order means a seed means the same draw.
	var mems []*memory.Memory
	if err := e.be.List(ctx, backend.ListQuery{}, func(m *memory.Memory) error { mems = append(mems, m); return nil }); err != nil {
		return nil, fmt.Errorf("calibrate: %w", err)
	}
	set := calibrate.Make(mems, opt.Method, opt.Samples, opt.Seed)
	if len(set.Queries) < MinCalibrateQueries {
		return nil, fmt.Errorf("%w: calibrate: the store gives %d pseudo-queries (method %s), need %d: too few memories of 8 words or more",
			ErrInvalid, len(set.Queries), opt.Method, MinCalibrateQueries)
	}
	s, err := e.calibrationSearcher(ctx, forker, mems, set.Edited, len(set.Queries))
	if err != nil {
		return nil, err
	}
	weights := opt.Weights
	if len(weights) == 0 {
		weights = calibrate.DefaultWeights
	}
	done, total := 0, len(set.Queries)*len(weights)
	search := func(ctx context.Context, query string, w float64) ([]string, error) {
		if opt.Progress != nil {
			if done++; done%16 == 0 || done == total {
				opt.Progress(done, total)
			}
		}
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
	sw, err := calibrate.Sweep(ctx, set, weights, ModelDefaults(e.embedder.Model()).VectorWeight, search)
	if err != nil {
		return nil, err
	}
	res := &CalibrateResult{Model: e.embedder.Model(), Method: sw.Method, Queries: sw.Queries, Points: sw.Points, Chosen: sw.Best}
	best := sw.Points[0]
	for _, p := range sw.Points[1:] {
		if p.MRR > best.MRR || (p.MRR == best.MRR && p.Weight < best.Weight) {
			best = p
		}
	}
	res.Best = best.Weight
	if res.Previous, res.PreviousSource, err = e.vectorWeight(ctx); err != nil {
		return nil, fmt.Errorf("calibrate: %w", err)
	}
	switch {
	case opt.DryRun:
		res.NotStored = "dry run"
	case res.Chosen == 0 && !opt.AllowOff:
		res.NotStored = "a weight of 0 switches the vector leg off for this store"
	default:
		if err := db.SetVectorWeight(ctx, res.Chosen); err != nil {
			return nil, fmt.Errorf("store calibrated weight: %w", err)
		}
		res.Stored = true
	}
	return res, nil
}

// ResetCalibration removes the vector weight stored for the current model, so
// that searches use the model's default again; it returns that default.
func (db *DB) ResetCalibration(ctx context.Context) (float64, error) {
	if err := db.SetVectorWeight(ctx, -1); err != nil {
		return 0, err
	}
	w, _, err := db.e.vectorWeight(ctx)
	return w, err
}

// calibrationSearcher embeds the edited memories and searches a private copy
// of the store's index (the backend's Fork) in which they replace their
// originals; it embeds each pseudo-query once however many weights ask for it.
func (e *engine) calibrationSearcher(ctx context.Context, forker backend.Forker, mems []*memory.Memory, edited map[string]*memory.Memory, queries int) (*recall.Searcher, error) {
	emb := embed.Cached(e.embedder, embed.NewLRU(queries+16))
	model := emb.Model()
	todo := make([]*memory.Memory, 0, len(edited))
	byKey := make(map[string]*memory.Memory, len(edited)) // Fork replaces by key
	for _, m := range mems {
		if ed, ok := edited[m.ID]; ok && ed.Key() == m.Key() {
			todo = append(todo, ed)
			byKey[m.Key()] = ed
		}
	}
	err := batches(todo, func(_ int, batch []*memory.Memory) error {
		_, err := embedBatch(ctx, emb, batch, 0)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("calibrate: embedder %s: %w", model, err)
	}
	fork, err := forker.Fork(ctx, model, byKey)
	if err != nil {
		return nil, fmt.Errorf("calibrate: %w", err)
	}
	// The store's own configuration (fusion, floor, weights), without the
	// optional stages: only the legs and their fusion are being calibrated.
	s, err := e.searcher(ctx, fork)
	if err != nil {
		return nil, fmt.Errorf("calibrate: %w", err)
	}
	s.Embedder, s.Reranker, s.LLM = emb, nil, nil
	return s, nil
}
