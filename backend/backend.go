// Package backend is the seam between Engram's engine (validation, embedding,
// the recall pipeline, delivery) and the store its memories live in. Backend is
// what every store does: write, read and list memories in a scope and run the
// search legs with every filter inside them. Optional powers are found by type
// assertion, as database/sql finds a driver's; backendtest is the suite every
// backend must pass.
package backend

import (
	"context"
	"errors"
	"time"

	"github.com/engram-memory/engram/memory"
)

// ErrUnsupported is returned by the engine for an operation that needs an
// optional power the backend does not have.
var ErrUnsupported = errors.New("not supported by this backend")

// ErrUnavailable is matched (errors.Is) by a backend's errors when its server
// did not answer in time (down, unreachable, overloaded): nothing was or
// everything may safely be done again, so the caller can retry later.
var ErrUnavailable = errors.New("backend unavailable")

// Backend is a store of memories the engine runs on.
//
// Every method takes the caller's scope: a tenant such as {"team": "t1"}, or
// nil for the whole store. A memory is in scope when its own scope carries
// every key=value of it; a memory outside is absent for the caller, exactly as
// if no memory had its id. Methods are safe for concurrent use. Errors wrap
// memory.ErrInvalid or memory.ErrNotFound where those apply.
//
// A memory is named by its id within its own scope (memory.Key): the same id
// in two scopes is two memories, so one tenant's id never collides with,
// reveals or blocks another's. A method given ids resolves each in the
// caller's scope by the rule memory.ErrAmbiguous documents: the memory with
// that id whose scope is exactly the caller's, else the only one inside it;
// several inside and none exact is ambiguous. The engine names one memory
// exactly by passing that memory's own scope.
//
// Besides writing, reading and searching, every backend updates a memory
// atomically (Updater), stores unless an exact duplicate is stored (Merger),
// deletes by key (KeyDeleter), finds a memory's neighbours in its episode
// (Neighbourer), counts (Tallier) and describes itself (Describer): the
// engine has no fallback for them, because a fallback would change what a
// call means (an update by Get then Put loses concurrent changes, a store
// without merging keeps duplicates). The optional powers (optional.go) make
// calls faster or add calls; each says what the engine does without it.
type Backend interface {
	Writer
	Reader
	Searcher
	Updater
	Merger
	KeyDeleter
	Neighbourer
	Tallier
	Describer
	// Close releases the store. The engine calls it once, from DB.Close.
	Close() error
}

// Writer changes memories. Each write is one all-or-nothing unit.
type Writer interface {
	// Put stores memories, each replacing the memory with its id in its own
	// scope (its memory.Key) if there is one, in one write: all or none. Each
	// memory is complete and valid (normalised, with an id, times, content
	// hash and, when it has one, its vector) and inside scope; one outside is
	// refused (wrapping memory.ErrInvalid) and nothing is stored. Put takes the
	// memories over: the caller neither reads nor changes them afterwards.
	Put(ctx context.Context, scope map[string]string, mems []*memory.Memory) error
	// Delete removes the memories the ids name in scope, in one write, and
	// returns how many there were. An ambiguous id fails the call (wrapping
	// memory.ErrAmbiguous) and nothing is deleted.
	Delete(ctx context.Context, scope map[string]string, ids []string) (int, error)
	// RecordUse counts one use at now of each memory the ids name in scope,
	// in one write: uses+1, and the demand decayed to now (memory.Decay) +1,
	// both saturating (memory.Use). It returns the counters as they now are,
	// in order. Ids that name none (or, not strict, are ambiguous) are
	// skipped; strict, the first fails the call (wrapping memory.ErrNotFound
	// or memory.ErrAmbiguous) and nothing is recorded.
	RecordUse(ctx context.Context, scope map[string]string, ids []string, now time.Time, strict bool) ([]Usage, error)
	// SetEmbeddings stores vectors for the memories the updates' ids name in
	// scope whose content hash is still the update's; others (changed since,
	// deleted, ambiguous) are skipped. It returns how many it stored.
	SetEmbeddings(ctx context.Context, scope map[string]string, ups []EmbeddingUpdate) (int, error)
}

// Reader reads memories as stored.
type Reader interface {
	// Get returns the memories the ids name in scope, by id, vectors
	// included; ids that name none are absent from the map. An ambiguous id
	// fails the call (wrapping memory.ErrAmbiguous).
	Get(ctx context.Context, scope map[string]string, ids []string) (map[string]*memory.Memory, error)
	// List calls fn with every memory that matches q.Filter (whose Scope is
	// the caller's scope, merged), in key order (id, then scope, as
	// memory.Key sorts), until fn returns an error, which List returns. fn
	// must not change the memory; it may keep it.
	List(ctx context.Context, q ListQuery, fn func(*memory.Memory) error) error
}

// ListQuery selects the memories List visits.
type ListQuery struct {
	Filter memory.Filter
	// Vectors asks for each memory's stored vector, as Get returns it (an
	// export). Without it a memory's Embedding names its model and dimension
	// and may leave the vector out, which is all a count or a briefing needs.
	Vectors bool
}

// Searcher runs the legs of a search. The engine fuses what they return,
// applies the boosts and optional stages, and explains every result.
type Searcher interface {
	// Models describes the stored vectors the vector leg can compare, by
	// embedding model id. The engine calls it before it embeds a query, to
	// know whether the vector leg can run at all.
	Models(ctx context.Context) (map[string]ModelInfo, error)
	// Legs runs the BM25 leg, the vector leg or both for one search, each over
	// the memories q.Filter admits only (filters are applied before ranking,
	// so a small scope inside a large store still gets K hits). BM25 scores
	// and Bound are computed against the statistics (document count, mean
	// lengths, document frequencies) of the memories in q.Filter.Scope alone,
	// so that nothing outside a tenant's scope moves a score inside it; with
	// no scope, against the whole store's.
	Legs(ctx context.Context, q LegQuery) (*LegResult, error)
}

// ModelInfo is what a backend holds of one embedding model's vectors.
type ModelInfo struct {
	Dim   int // the vectors' dimension
	Count int // how many memories have one
}

// LegQuery asks for one search's legs.
type LegQuery struct {
	Filter memory.Filter
	// K is how many hits each leg returns at most.
	K int
	// Text is the BM25 leg's query text; empty means no BM25 leg.
	Text string
	// Terms, when not nil, are the BM25 leg's query terms, already
	// tokenized by the backend's QueryTerms: a long query's reduced terms
	// (Text then holds them joined by spaces, for a backend that reads
	// only Text).
	Terms []string
	// Vector is the vector leg's query (L2-normalised, of Model's dimension);
	// nil means no vector leg.
	Vector []float32
	// Model is the embedding model of Vector and of the vectors WithVectors
	// returns.
	Model string
	// WithVectors asks for each hit's stored vector of Model, for diversity
	// (MMR) over the candidates.
	WithVectors bool
	// Windows are the spans of time the query's date phrases name. With
	// windows, each leg returns its best K hits and, after them, its best K
	// among the memories that occurred inside a window (by OccurredAt, Since
	// inclusive, Until exclusive), no memory twice: so that the boost the
	// engine gives those memories can reach them, however far down the
	// leg they rank. Scores are the leg's own, unboosted.
	Windows []memory.TimeWindow
}

// Hit is one memory a leg returned.
type Hit struct {
	// Memory is the memory, without its vector. The backend may share it
	// between calls: nobody changes it.
	Memory *memory.Memory
	// Score is the leg's own score: BM25 for the keyword leg, the cosine for
	// the vector leg, the fused score for a native hybrid.
	Score float64
	// Vector is the memory's stored vector of LegQuery.Model (L2-normalised)
	// when WithVectors asked for it and the memory has one; the caller owns it.
	Vector []float32
	// RelevanceScore is, for a keyword hit, the keyword relevance signal's
	// numerator (over LegResult.Bound) when it is not Score: the SQLite
	// backend reads a scope of fewer than bm25.RelevanceMinDocs memories as
	// that many for the signal, not for ranking (internal/recall/relevance.go).
	// 0 means Score.
	RelevanceScore float64
}

// LegResult is what the legs found, each best first. It is the caller's: a
// backend does not keep or reuse it.
type LegResult struct {
	BM25, Vector []Hit
	// Bound is the keyword relevance signal's denominator: the BM25 score a
	// memory matching every query term fully would reach, where a term no
	// memory holds counts at the weight of a term in no document (see
	// internal/recall/relevance.go), with the statistics the hits'
	// RelevanceScore was computed with. 0 when the BM25 leg did not run or the
	// backend cannot tell; keyword relevance is then 0.
	Bound float64
	// How long compiling the filter and each leg took (zero if not measured).
	FilterTook, BM25Took, VectorTook time.Duration
}

// Usage is a memory's use statistics after a recorded use.
type Usage struct {
	ID     string
	Uses   int64
	Demand float64
	At     *time.Time // the demand's time (DemandAt)
}

// EmbeddingUpdate sets one memory's embedding if its content is still Hash.
type EmbeddingUpdate struct {
	ID        string
	Hash      string
	Embedding *memory.Embedding // nil clears it
}

// QueryTermer is a backend that tokenizes a query as its keyword leg does
// and tells how many memories hold each term: the engine reduces a long query
// to its most discriminative terms with it (internal/recall, "Long queries").
// A backend without it gets a reduction by the default tokenizer and the
// terms' counts in the query alone.
type QueryTermer interface {
	// QueryTerms returns the distinct index terms of text in order of first
	// appearance, each with its count in text and the number of memories in
	// scope (nil: the whole store) that hold it, and the number of memories
	// in scope.
	QueryTerms(ctx context.Context, text string, scope map[string]string) ([]TermCount, int, error)
}

// TermCount is one distinct term of a query.
type TermCount struct {
	Term  string
	Count int // occurrences in the query
	// DF is how many memories hold the term; -1 when the backend cannot say.
	DF int
}

// CountTerms merges repeated terms: the distinct terms in order of first
// appearance with their counts, DF -1 (unknown).
func CountTerms(terms []string) []TermCount {
	at := make(map[string]int, 256)
	var out []TermCount
	for _, t := range terms {
		if i, ok := at[t]; ok {
			out[i].Count++
			continue
		}
		at[t] = len(out)
		out = append(out, TermCount{Term: t, Count: 1, DF: -1})
	}
	return out
}
