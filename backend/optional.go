package backend

import (
	"context"
	"time"

	"github.com/engram-memory/engram/memory"
)

// The optional powers of a backend, found by type assertion when the engine
// opens (engram.OpenBackend), each with one meaning and what the engine does
// without it.

// Hybrider is a backend that fuses both legs itself in one call (strategy
// "native"), as Weaviate's hybrid query does with server-side rank fusion.
// The engine uses it when a query asks for fusion "native"; without it such a
// query is fused by the engine, with the reason in degraded.
type Hybrider interface {
	Hybrid(ctx context.Context, q HybridQuery) (*HybridResult, error)
}

// HybridQuery is a LegQuery with both legs and their fusion weights.
type HybridQuery struct {
	LegQuery
	BM25Weight, VectorWeight float64
}

// HybridHit is one fused result: Score is the fused score. BM25Leg and
// VectorLeg say where each leg placed it when the backend reports that (Rank
// 0: the leg did not return it, or the backend does not say), for explain and
// relevance; RelevanceScore is as in a keyword Hit, for BM25Leg's score.
type HybridHit struct {
	Hit
	BM25Leg, VectorLeg LegPlace
}

// LegPlace is a memory's 1-based rank and raw score in one leg.
type LegPlace struct {
	Rank  int
	Score float64
}

// HybridResult is a native hybrid's answer, best first.
type HybridResult struct {
	Hits []HybridHit
	// K is the fusion's k in Engram's RRF terms, Σ w/(k+rank) with 1-based
	// ranks, when the backend fuses by rank (Weaviate's rankedFusion: 59); 0
	// otherwise. A backend's k is its own: a query's rrf_k does not change it.
	K float64
	// Bound is as in LegResult.
	Bound float64
	Took  time.Duration
}

// Settings is a backend that keeps store-level settings, such as a calibrated
// vector weight, for every process using the store. Without it a store has no
// calibrated weight and Calibrate cannot store one.
type Settings interface {
	Setting(ctx context.Context, key string) (value string, ok bool, err error)
	// SetSetting stores value under key; an empty value deletes the key.
	SetSetting(ctx context.Context, key, value string) error
}

// Forker is a backend that can make a private, read-only copy of its search
// state: every memory with its vector of model, those in replace (by
// memory.Key) standing in for the originals (their Embedding is their vector of model, or
// nil). The copy is for calibration: it never changes the store and sees no
// later write. Without it, Calibrate is unsupported.
type Forker interface {
	Fork(ctx context.Context, model string, replace map[string]*memory.Memory) (Searcher, error)
}

// Diagnoser is a backend that can list the stored memories it could not read
// as they are: skipped (not searchable, not exported) or read without a
// damaged part. It may read every row to find them: Stats asks, Open does not.
type Diagnoser interface {
	BadRows(ctx context.Context) ([]BadRow, error)
}

// BadRow is a stored memory a backend could not read as it is.
type BadRow struct {
	ID      string `json:"id"`
	Scope   string `json:"scope"`   // the scope as stored
	Problem string `json:"problem"` // what is wrong
	// Skipped: left out of every read. Otherwise read without the damaged
	// part, as Problem says.
	Skipped bool `json:"skipped"`
}

// Warmer is a backend with local state it builds on first need, such as an
// in-memory index over a file: Warm builds it now, so that the first search
// does not wait for it (a server calls it at start). Without it there is
// nothing to warm.
type Warmer interface {
	Warm(ctx context.Context) error
}

// Pinger is a backend on a server that can be down: Ping asks whether it
// answers now (a server's /readyz asks before it says ready). A backend
// without it is ready whenever it is open.
type Pinger interface {
	Ping(ctx context.Context) error
}

// StatsScoper is a backend whose BM25 statistics are kept per value of one
// scope key rather than per full scope: Weaviate keeps them per tenant, one
// shard per value of the tenant key. Scores seen in a scope that names that
// key depend on the memories of its tenant only, so a tenant never senses
// another's; memories of the same tenant outside the caller's scope (a
// sibling user of the same team) do move them. StatsKey "" means one set of
// statistics for the whole store. A backend without StatsScoper keeps them
// per full scope (Searcher.Legs), as SQLite does.
type StatsScoper interface {
	StatsKey() string
}

// Completer is a backend whose legs return partial memories to keep their
// answers small: each hit's Memory has at least its id, scope, type, scene,
// tags, source, created_at, occurred_at, favorite, use counters and
// supersession (what filters, fusion and the boosts read), and may lack its
// texts and metadata. The engine
// completes the few candidates it keeps after the boosts with one Complete
// call, which returns each memory as stored (without its vector, as a leg
// would), in order, nil for one deleted since. Without Completer the legs'
// memories are complete.
type Completer interface {
	Complete(ctx context.Context, partial []*memory.Memory) ([]*memory.Memory, error)
}
