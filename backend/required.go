package backend

import (
	"context"

	"github.com/engram-memory/engram/memory"
)

// The powers every Backend has besides writing, reading and searching (see
// Backend): each is one call the engine makes as it is.

// KeyDeleter is a backend that deletes memories named exactly by their keys
// (memory.Key: id and scope) in one write, as delete by scope needs: an id
// held in several scopes below the caller's is ambiguous to Delete, never to
// a key.
type KeyDeleter interface {
	// DeleteKeys removes the memories with these keys that lie inside scope,
	// in one write, and returns how many there were. A key that names no
	// memory, or one outside scope, is skipped.
	DeleteKeys(ctx context.Context, scope map[string]string, keys []string) (int, error)
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

// Updater is a backend that changes one memory in one atomic
// read-modify-write: Update reads the memory id names in scope, calls fn with
// it (a copy fn may change and return; nil leaves the store as it is), and
// stores the result, with no other write to that memory in between (no lost
// update, no deleted memory written back). fn runs while the backend holds
// its write lock: it must be quick and must not wait (no I/O); an error from
// it aborts the update and is returned. The result must lie inside scope; one
// moved to a scope where its id is taken is refused (wrapping
// memory.ErrInvalid). A missing id wraps memory.ErrNotFound, an ambiguous one
// memory.ErrAmbiguous. It returns the memory as stored.
type Updater interface {
	Update(ctx context.Context, scope map[string]string, id string, fn func(*memory.Memory) (*memory.Memory, error)) (*memory.Memory, error)
}

// Tallier counts the memories in a scope (for Stats) without handing each
// to the engine.
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
// hold.
type Merger interface {
	PutMerging(ctx context.Context, scope map[string]string, mems []*memory.Memory, mergeable []bool, merge MergeFunc) (existing []string, err error)
}

// MergeFunc gives what a stored memory becomes when memory i of a
// PutMerging call repeats it: the engine's rule (memory.MergeRepeat); nil
// for no change. The stored memory is the callee's to change.
type MergeFunc func(i int, stored *memory.Memory) (*memory.Memory, error)

// Neighbourer is a backend that finds the memories next to one in its
// episode without listing the episode: up to k before and k after the
// memory with id in exactly scope (its own scope), in episode order
// (memory.EpisodeOrder), each without its vector; none for a memory in no
// episode, or none stored.
type Neighbourer interface {
	Neighbours(ctx context.Context, scope map[string]string, id string, k int) (before, after []*memory.Memory, err error)
}
