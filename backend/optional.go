package backend

import (
	"context"
	"time"

	"github.com/engram-memory/engram/memory"
)

// The optional powers of a backend, found by type assertion. Each says what
// the engine does without it.

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

// KeyDeleter is a backend that deletes memories named exactly by their keys
// (memory.Key: id and scope) in one write, as delete by scope needs: an id
// held in several scopes below the caller's is ambiguous to Delete, never to
// a key. Without it the engine deletes scope by scope with Delete, naming
// each memory by its own scope (one write a scope).
type KeyDeleter interface {
	// DeleteKeys removes the memories with these keys that lie inside scope,
	// in one write, and returns how many there were. A key that names no
	// memory, or one outside scope, is skipped.
	DeleteKeys(ctx context.Context, scope map[string]string, keys []string) (int, error)
}

// Syncer is a backend with local state that other processes' writes leave
// behind, such as an in-memory index over a shared file. The engine calls Sync
// before every search, listing and count, so reads see every committed write;
// it reports whether a store setting changed, so the engine reloads its
// settings. A backend without Syncer is always current.
type Syncer interface {
	Sync(ctx context.Context) (settingsChanged bool, err error)
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

// Snapshotter is a backend that can persist its local index to speed up the
// next open; WriteSnapshot returns the bytes written.
type Snapshotter interface {
	WriteSnapshot(ctx context.Context) (int64, error)
}

// Describer is a backend that reports store-wide figures for Stats.
type Describer interface {
	Describe(ctx context.Context) (Description, error)
}

// Description is a store's store-wide figures.
type Description struct {
	Kind      string // what the backend is: "sqlite", "weaviate"
	Path      string // where the store lives (a file, a URL)
	Bytes     int64  // its size on disk, 0 if unknown
	ChangeSeq int64  // the last change applied, 0 if the store has no change log
	Memories  int    // how many memories it holds
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

// Updater is a backend that changes one memory in one atomic
// read-modify-write: Update reads the memory id names in scope, calls fn with
// it (a copy fn may change and return; nil leaves the store as it is), and
// stores the result, with no other write to that memory in between (no lost
// update, no deleted memory written back). fn runs while the backend holds
// its write lock: it must be quick and must not wait (no I/O); an error from
// it aborts the update and is returned. The result must lie inside scope; one
// moved to a scope where its id is taken is refused (wrapping
// memory.ErrInvalid). A missing id wraps memory.ErrNotFound, an ambiguous one
// memory.ErrAmbiguous. It returns the memory as stored. Without Updater the
// engine reads with Get and writes with Put, and concurrent changes to one
// memory can overwrite each other.
type Updater interface {
	Update(ctx context.Context, scope map[string]string, id string, fn func(*memory.Memory) (*memory.Memory, error)) (*memory.Memory, error)
}

// Warmer is a backend with local state it builds on first need, such as an
// in-memory index over a file: Warm builds it now, so that the first search
// does not wait for it (a server calls it at start). Without it there is
// nothing to warm.
type Warmer interface {
	Warm(ctx context.Context) error
}

// Tallier is a backend that counts memories without visiting them one by one
// (for Stats). Without it the engine counts what List visits.
type Tallier interface {
	Tally(ctx context.Context, scope map[string]string) (Tally, error)
}

// Tally counts the memories in a scope.
type Tally struct {
	Memories  int
	Favorites int
	Types     map[string]int // memories by type
	Embedded  map[string]int // memories with a stored vector, by model
}

// Merger is a backend that stores memories unless an exact duplicate is
// already stored, checked and written in one all-or-nothing unit: a memory i
// with mergeable[i] whose text key (memory.TextKey) and exact scope equal a
// stored memory's (the least id, when several do) is not stored, and
// existing[i] is that memory's id ("" for one stored). merge, when not nil,
// is called with i and the stored memory (whole, its vector included) inside
// that unit; what it returns (nil: nothing) replaces the stored memory in
// the same write, so a concurrent change is never lost. Put's other rules
// hold. Without Merger the engine stores duplicates.
type Merger interface {
	PutMerging(ctx context.Context, scope map[string]string, mems []*memory.Memory, mergeable []bool, merge MergeFunc) (existing []string, err error)
}

// MergeFunc gives what a stored memory becomes when memory i of a
// PutMerging call repeats it: the engine's rule (memory.MergeRepeat); nil
// for no change. The stored memory is the callee's to change.
type MergeFunc func(i int, stored *memory.Memory) (*memory.Memory, error)

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

// Neighbourer is a backend that finds the memories next to one in its
// episode without listing the episode: up to k before and k after the
// memory with id in exactly scope (its own scope), in episode order
// (memory.EpisodeOrder), each without its vector; none for a memory in no
// episode, or none stored. Without it the engine lists the episode
// (ListQuery with Filter.Episode) and orders it itself.
type Neighbourer interface {
	Neighbours(ctx context.Context, scope map[string]string, id string, k int) (before, after []*memory.Memory, err error)
}
