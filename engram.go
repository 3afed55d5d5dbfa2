// Package engram is a memory engine for LLM agents: memories in one SQLite file,
// recalled by a hybrid of BM25 keyword ranking and dense-vector similarity fused
// by rank, with every result explained (Example shows the calls).
//
// The engine (validation, embedding, the recall pipeline, delivery) runs on a
// backend (package backend): the built-in one is the SQLite file with its
// in-memory index (backend/sqlite). Other backends and the built-in embedding
// models register themselves when a program imports them, as database/sql
// drivers do: _ "github.com/engram-memory/engram/backend/weaviate" opens
// weaviate:// locations, _ "github.com/engram-memory/engram/embed/builtin"
// gives the offline default embedder; OpenBackend runs on any other.
package engram

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/engram-memory/engram/backend"
	"github.com/engram-memory/engram/backend/sqlite"
	"github.com/engram-memory/engram/embed"
	"github.com/engram-memory/engram/internal/recall"
	"github.com/engram-memory/engram/llm"
	"github.com/engram-memory/engram/memory"
	"github.com/engram-memory/engram/rerank"
)

// The domain types, re-exported for library users.
type (
	Memory    = memory.Memory
	Embedding = memory.Embedding
	Filter    = memory.Filter
	Query     = memory.Query
	Response  = memory.Response
	Result    = memory.Result
	Explain   = memory.Explain
	// FusionInfo says how a response's legs were merged.
	FusionInfo = memory.FusionInfo
)

// Errors callers may test with errors.Is.
var (
	ErrNotFound     = memory.ErrNotFound
	ErrInvalid      = memory.ErrInvalid
	ErrInvalidQuery = recall.ErrInvalidQuery
	ErrNotEngram    = sqlite.ErrNotEngram
	ErrNewerSchema  = sqlite.ErrNewerSchema
	ErrBadPath      = sqlite.ErrBadPath
	// ErrDamaged: the file's header contradicts its contents (engram doctor
	// explains); ErrOldSchema: a read-only file of an older schema, which
	// only a writable open upgrades; ErrReadOnly: a write to a store opened
	// read-only.
	ErrDamaged   = sqlite.ErrDamaged
	ErrOldSchema = sqlite.ErrOldSchema
	ErrReadOnly  = sqlite.ErrReadOnly
	// ErrFull: a write failed because the disk holding the store is full;
	// nothing of it was stored, and it succeeds once there is room (the HTTP
	// API answers 507).
	ErrFull = sqlite.ErrFull
	// ErrNoLLM and ErrNoReranker are the reasons a search gives in degraded
	// when it was asked for HyDE or a rerank the DB has no provider for.
	ErrNoLLM      = recall.ErrNoLLM
	ErrNoReranker = recall.ErrNoReranker
	// ErrUnsupported: the backend lacks a power the operation needs.
	ErrUnsupported = backend.ErrUnsupported
)

// DefaultSnapshotMinMemories is the store size from which a full rebuild
// writes an index snapshot: below it rebuilding is quick enough (about 1 s at
// 20k memories on two cores) that the file is not worth keeping.
const DefaultSnapshotMinMemories = sqlite.DefaultSnapshotMinMemories

// Options configure a DB. The zero value is the embedded default: the built-in
// offline embedder, stemming and stopwords on, standard BM25.
type Options struct {
	// Embedder embeds memories and queries. Nil means the built-in offline
	// model unless NoEmbedder is set, which gives keyword-only search.
	Embedder   embed.Embedder
	NoEmbedder bool
	// CacheEmbeddings keeps every memory vector the embedder makes in the
	// store's content-hash cache, so unchanged text is never embedded twice
	// (for remote embedders; the built-in one is faster than the lookup), and
	// the last queryCacheSize query vectors in memory.
	CacheEmbeddings bool
	// EmbedTimeout bounds embedding a query; past it the search is keyword-only.
	EmbedTimeout time.Duration
	// WriteEmbedTimeout bounds embedding one batch of up to 256 memories being
	// written (default 30s; none for an in-process model such as the
	// built-in ones, unless set); past it they are stored without vectors,
	// for Reindex.
	WriteEmbedTimeout time.Duration
	// VectorWeight overrides the vector leg's fusion weight (else the store's
	// calibrated weight, else the model's default).
	VectorWeight *float64
	// VectorFloor and RelevanceBar override the model's floor of the relevance
	// signal and its bar (ModelDefault), for measuring a new model.
	VectorFloor, RelevanceBar *float64
	// Optional stages.
	Reranker     rerank.Reranker
	RerankDepth  int
	LLM          *llm.Client
	StageTimeout time.Duration
	// Logger receives debug information; nil is silent.
	Logger *slog.Logger

	// The SQLite backend's index (Open; OpenBackend's backend has its own).
	//
	// NoStem and NoStopwords turn off the BM25 leg's English stemming and
	// stopword removal (both on by default).
	NoStem, NoStopwords bool
	// BM25 parameters; zero values take the defaults (k1 1.2, b 0.75, field weights).
	K1, B        float64
	FieldWeights []float64
	// ContextNeighbours is how many turns before and after a memory of an
	// episode lend their words to its BM25 context field: 0 means the
	// default (2), a negative value none. More finds more answer turns
	// through their neighbours and costs index memory: each neighbour adds
	// about a turn's postings to every turn (docs/conversations.md).
	ContextNeighbours int
	// NoSnapshot neither reads nor writes the index snapshot (PATH+".idx"):
	// every Open rebuilds the index from the database.
	NoSnapshot bool
	// SnapshotMinMemories is the store size from which a full rebuild writes
	// a snapshot at the end of Open: 0 means DefaultSnapshotMinMemories, a
	// negative value never writes one (an existing one is still read).
	SnapshotMinMemories int
	// ANNMinVectors is the number of vectors of one model from which the
	// vector leg keeps an approximate (HNSW) graph, persisted in the
	// snapshot, and answers broad searches from it: 0 means
	// DefaultANNMinVectors, a negative value never builds one and searches
	// exactly where there is none. Below it, searches admitting more than 20k
	// memories scan the vectors' sign sketches and search their best rows
	// exactly; smaller stores, and filters admitting fewer, are searched
	// exactly.
	ANNMinVectors int
}

// DefaultANNMinVectors is the vector count from which a model gets an
// approximate graph (Options.ANNMinVectors).
const DefaultANNMinVectors = sqlite.DefaultANNMinVectors

// DB is an open Engram store. Its methods act on the whole store, which is
// the empty scope: the same code as a tenant's Scoped view, with no scope. It
// is safe for concurrent use; other processes may use the same file.
type DB struct {
	view
}

// engine is what a DB and its scoped views share: the backend, the
// embedders, the options and the store's settings.
type engine struct {
	be   backend.Backend
	opts Options
	path string
	// embedder embeds queries and memEmbedder memories: the same model, but
	// with CacheEmbeddings the memories' vectors go through the backend's
	// persistent content-hash cache while queries use a small in-memory one,
	// so a search never writes. Both nil: keyword only.
	embedder, memEmbedder embed.Embedder
	log                   *slog.Logger

	// embedDim caches the embedder's vector dimension once a probe learnt
	// it (checkVectors); 0 until then.
	embedDim atomic.Int64

	mu          sync.RWMutex // guards storeWeight
	storeWeight *float64     // the vector weight calibrated for this model (settings), or nil

	closeOnce sync.Once
	closeErr  error
}

// queryCacheSize is how many query vectors a DB with CacheEmbeddings keeps.
const queryCacheSize = 1024

// Open opens or creates the store at location: a SQLite file, built in (a
// path, or sqlite:///path), or a URL whose scheme a backend package registered
// with backend.Register when the program imports it (backend/weaviate:
// weaviate://…, its ParseURL documents the parameters). The SQLite index
// options (NoStem, K1, NoSnapshot, …) apply to a SQLite file only.
func Open(ctx context.Context, location string, opts Options) (*DB, error) {
	if s := backend.Scheme(location); s != "" && s != "sqlite" {
		be, err := backend.Open(ctx, location)
		if err != nil {
			return nil, err
		}
		db, err := OpenBackend(ctx, be, opts)
		if err != nil {
			be.Close()
			return nil, err
		}
		return db, nil
	}
	path := sqlitePath(location)
	var builtin embed.Embedder
	if !opts.NoEmbedder && opts.Embedder == nil {
		e, err := BuiltinEmbedder()
		if err != nil {
			return nil, fmt.Errorf("open %s: %w", path, err)
		}
		builtin = e
	}
	be, err := sqlite.Open(ctx, path, sqlite.Options{ContextNeighbours: opts.ContextNeighbours,
		K1: opts.K1, B: opts.B, FieldWeights: opts.FieldWeights, NoStem: opts.NoStem, NoStopwords: opts.NoStopwords,
		NoSnapshot: opts.NoSnapshot, SnapshotMinMemories: opts.SnapshotMinMemories, ANNMinVectors: opts.ANNMinVectors, Logger: opts.Logger,
	})
	if err != nil {
		return nil, err
	}
	db, err := newDB(ctx, be, path, opts, builtin)
	if err != nil {
		be.Close()
		return nil, fmt.Errorf("open %s: %w", path, err)
	}
	return db, nil
}

// sqlitePath is the file a SQLite location names: the path itself, or what
// follows sqlite:// (sqlite:///var/lib/agent.db is /var/lib/agent.db,
// sqlite://agent.db is agent.db).
func sqlitePath(location string) string {
	if backend.Scheme(location) != "sqlite" {
		return location
	}
	_, path, _ := strings.Cut(strings.TrimSpace(location), "://")
	return path
}

// OpenBackend runs Engram on another backend than the built-in SQLite file.
// The options that configure the SQLite index (NoStem, K1, NoSnapshot, …) do
// not apply; Close closes the backend.
func OpenBackend(ctx context.Context, be backend.Backend, opts Options) (*DB, error) {
	if be == nil {
		return nil, errors.New("open backend: no backend")
	}
	var builtin embed.Embedder
	if !opts.NoEmbedder && opts.Embedder == nil {
		e, err := BuiltinEmbedder()
		if err != nil {
			return nil, fmt.Errorf("open backend: %w", err)
		}
		builtin = e
	}
	path := ""
	if d, ok := be.(backend.Describer); ok {
		desc, err := d.Describe(ctx)
		if err != nil {
			return nil, fmt.Errorf("open backend: %w", err)
		}
		path = desc.Path
	}
	db, err := newDB(ctx, be, path, opts, builtin)
	if err != nil {
		return nil, fmt.Errorf("open backend: %w", err)
	}
	return db, nil
}

// newDB sets up the embedders over be and reads the store's settings.
func newDB(ctx context.Context, be backend.Backend, path string, opts Options, builtin embed.Embedder) (*DB, error) {
	if w := opts.VectorWeight; w != nil && !(*w >= 0 && *w <= MaxFusionWeight) {
		return nil, fmt.Errorf("%w: vector weight %v must be a number from 0 to %g", ErrInvalid, *w, float64(MaxFusionWeight))
	}
	e := &engine{be: be, opts: opts, path: path, log: opts.Logger}
	if e.log == nil {
		e.log = slog.New(slog.DiscardHandler)
	}
	cache, canCache := be.(embed.Cache)
	switch {
	case opts.NoEmbedder:
	case opts.Embedder != nil && opts.CacheEmbeddings && canCache:
		e.embedder = embed.Cached(opts.Embedder, embed.NewLRU(queryCacheSize))
		e.memEmbedder = embed.Cached(opts.Embedder, cache)
	case opts.Embedder != nil && opts.CacheEmbeddings:
		e.embedder = embed.Cached(opts.Embedder, embed.NewLRU(queryCacheSize))
		e.memEmbedder = opts.Embedder
	case opts.Embedder != nil:
		e.embedder, e.memEmbedder = opts.Embedder, opts.Embedder
	default:
		e.embedder, e.memEmbedder = builtin, builtin
	}
	if err := e.loadSettings(ctx); err != nil {
		return nil, err
	}
	return &DB{view{e: e}}, nil
}

// Close closes the backend: for the SQLite file, a large store whose index
// snapshot is missing or far behind gets a new one first (see
// SnapshotMinMemories), so that the next process opens it quickly.
func (db *DB) Close() error {
	e := db.e
	e.closeOnce.Do(func() { e.closeErr = e.be.Close() })
	return e.closeErr
}

// Path is the store's file (or, for another backend, where it lives).
func (db *DB) Path() string { return db.e.path }

// Embedder is the embedder in use, or nil for keyword-only.
func (db *DB) Embedder() embed.Embedder { return db.e.embedder }

// Backend is the backend the DB runs on, for its optional powers (a type
// assertion finds them). Writing through it bypasses the engine: nothing is
// validated or embedded.
func (db *DB) Backend() backend.Backend { return db.e.be }

// Count is the number of memories in the store: for the SQLite backend, in
// its index, without a query. It is -1 when the backend cannot count.
func (db *DB) Count() int {
	ctx := context.Background()
	if d, ok := db.e.be.(backend.Describer); ok {
		if desc, err := d.Describe(ctx); err == nil {
			return desc.Memories
		}
	}
	n := 0
	if err := db.e.be.List(ctx, backend.ListQuery{}, func(*memory.Memory) error { n++; return nil }); err != nil {
		return -1
	}
	return n
}

// SnapshotPath is the index snapshot file of the SQLite store at path.
func SnapshotPath(path string) string { return sqlite.SnapshotPath(path) }

// WriteSnapshot writes the index as it is now to the store's snapshot file
// (SnapshotPath) atomically, records it in the database, and returns the
// file's size. Open and Close write one when it pays; callers may force one,
// for example before handing a large store to many short-lived processes.
func (db *DB) WriteSnapshot(ctx context.Context) (int64, error) {
	s, ok := db.e.be.(backend.Snapshotter)
	if !ok {
		return 0, fmt.Errorf("write snapshot: %w", ErrUnsupported)
	}
	return s.WriteSnapshot(ctx)
}

// sync brings a backend with local state up to date with other processes'
// writes before a read, and reloads the settings when one changed.
func (e *engine) sync(ctx context.Context) error {
	s, ok := e.be.(backend.Syncer)
	if !ok {
		return nil
	}
	changed, err := s.Sync(ctx)
	if err != nil || !changed {
		return err
	}
	return e.loadSettings(ctx)
}

// Warm loads the backend's index now, if it builds one on first need (the
// SQLite backend does): a server calls it at start, so that its first search
// is as fast as the next. Other operations never need it.
func (db *DB) Warm(ctx context.Context) error {
	if w, ok := db.e.be.(backend.Warmer); ok {
		return w.Warm(ctx)
	}
	return nil
}
