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
	// ErrNoLLM and ErrNoReranker are the reasons a search gives in degraded
	// when it was asked for HyDE or a rerank the DB has no provider for.
	ErrNoLLM      = recall.ErrNoLLM
	ErrNoReranker = recall.ErrNoReranker
	// ErrUnsupported: the backend lacks a power the operation needs.
	ErrUnsupported = backend.ErrUnsupported
)

// Options configure a DB. The zero value is the embedded default: the built-in
// offline embedder (registered by embed/builtin, which the program imports),
// stemming and stopwords on, standard BM25.
type Options struct {
	// Embedder embeds memories and queries. Nil means the built-in offline
	// model (BuiltinEmbedder; for a store whose vectors come from another
	// built-in model linked into the program, that model) unless NoEmbedder
	// is set, which gives keyword-only search.
	Embedder   embed.Embedder
	NoEmbedder bool
	// CacheEmbeddings keeps every memory vector the embedder makes in the
	// store's content-hash cache, so unchanged text is never embedded twice
	// (for remote embedders; the built-in one is faster than the lookup), and
	// the last queryCacheSize query vectors in memory.
	CacheEmbeddings bool
	// FirstQuery, when set, is the text of the query the caller searches
	// for (Search, Inject) right after Open, as a process that opens the
	// store for one call does (a CLI call, a prompt hook): an in-process
	// model starts embedding it at once, while the store opens and its index
	// loads, and that search takes the vector. Other searches embed as usual.
	FirstQuery string
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

	// SQLite configures the built-in SQLite backend's index (BM25
	// parameters, stemming, the snapshot, the ANN graph) for a store Open
	// opens as a file; other backends fix their own. Its Logger defaults to
	// Logger.
	SQLite sqlite.Options
}

// DB is an open Engram store. Its methods act on the whole store, which is
// the empty scope: the same code as a tenant's Scoped view, with no scope. It
// is safe for concurrent use; other processes may use the same file.
type DB struct {
	view
}

// engine is what a DB and its scoped views share: the backend with the
// optional powers it has, the embedders and the options.
type engine struct {
	be   backend.Backend
	opts Options
	path string
	kind string // the backend's Description.Kind
	// first is the query vector Options.FirstQuery started, until a search
	// takes it.
	first atomic.Pointer[prefetched]

	// The backend's optional powers, found once at open; nil: it has none.
	settings backend.Settings
	forker   backend.Forker
	diag     backend.Diagnoser
	warmer   backend.Warmer
	pinger   backend.Pinger
	loader   indexLoader // a backend whose index loads on first need (prefetch)

	// embedder embeds queries and memEmbedder memories: the same model, but
	// with CacheEmbeddings the memories' vectors go through the backend's
	// persistent content-hash cache while queries use a small in-memory one,
	// so a search never writes. Both nil: keyword only.
	embedder, memEmbedder embed.Embedder
	log                   *slog.Logger

	// embedDim caches the embedder's vector dimension once a probe learnt
	// it (checkVectors); 0 until then.
	embedDim atomic.Int64

	closeOnce sync.Once
	closeErr  error
}

// queryCacheSize is how many query vectors a DB with CacheEmbeddings keeps.
const queryCacheSize = 1024

// Open opens or creates the store at location: a SQLite file, built in (a
// path, or sqlite:///path), or a URL whose scheme a backend package registered
// with backend.Register when the program imports it (backend/weaviate:
// weaviate://…, its ParseURL documents the parameters). Options.SQLite
// applies to a SQLite file only.
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
	path := sqlite.FilePath(location)
	var builtin embed.Embedder
	if !opts.NoEmbedder && opts.Embedder == nil {
		e, err := BuiltinEmbedder()
		if err != nil {
			return nil, fmt.Errorf("open %s: %w", path, err)
		}
		builtin = e
	}
	so := opts.SQLite
	if so.Logger == nil {
		so.Logger = opts.Logger
	}
	first := startFirst(ctx, opts, builtin) // beside the opening
	be, err := sqlite.Open(ctx, path, so)
	if err != nil {
		return nil, err
	}
	db, err := newDB(ctx, be, backend.Description{Kind: "sqlite", Path: path}, opts, builtin, first)
	if err != nil {
		be.Close()
		return nil, fmt.Errorf("open %s: %w", path, err)
	}
	return db, nil
}

// OpenBackend runs Engram on another backend than the built-in SQLite file.
// Options.SQLite does not apply; Close closes the backend.
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
	first := startFirst(ctx, opts, builtin)
	desc, err := be.Describe(ctx)
	if err != nil {
		return nil, fmt.Errorf("open backend: %w", err)
	}
	db, err := newDB(ctx, be, desc, opts, builtin, first)
	if err != nil {
		return nil, fmt.Errorf("open backend: %w", err)
	}
	return db, nil
}

// startFirst starts embedding opts.FirstQuery with the model the store will
// use, as its search would embed it; nil when there is no first query, or no
// model in this process that reads it.
func startFirst(ctx context.Context, opts Options, builtin embed.Embedder) *prefetched {
	if opts.NoEmbedder || opts.FirstQuery == "" {
		return nil
	}
	m := opts.Embedder
	if m == nil {
		m = builtin
	}
	return startQuery(ctx, m, recall.VectorText(strings.TrimSpace(opts.FirstQuery)))
}

// newDB finds be's optional powers, sets up the embedders over it and checks
// the store's settings. first is Options.FirstQuery's vector on its way, if
// any, started with opts.Embedder or builtin.
func newDB(ctx context.Context, be backend.Backend, desc backend.Description, opts Options, builtin embed.Embedder, first *prefetched) (*DB, error) {
	if w := opts.VectorWeight; w != nil && !(*w >= 0 && *w <= MaxFusionWeight) {
		return nil, fmt.Errorf("%w: vector weight %v must be a number from 0 to %g", ErrInvalid, *w, float64(MaxFusionWeight))
	}
	e := &engine{be: be, opts: opts, path: desc.Path, kind: desc.Kind, log: opts.Logger}
	e.settings, _ = be.(backend.Settings)
	e.forker, _ = be.(backend.Forker)
	e.diag, _ = be.(backend.Diagnoser)
	e.warmer, _ = be.(backend.Warmer)
	e.pinger, _ = be.(backend.Pinger)
	e.loader, _ = be.(indexLoader)
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
	default: // the default model, or the built-in model the store's vectors come from
		m := storeEmbedder(ctx, be, builtin, e.log)
		e.embedder, e.memEmbedder = m, m
		if m != builtin {
			first = nil // started with the default; the store keeps another model
		}
	}
	if _, _, err := e.vectorWeight(ctx); err != nil {
		return nil, err
	}
	e.first.Store(first)
	return &DB{view{e: e}}, nil
}

// Close closes the backend: for the SQLite file, a large store whose index
// snapshot is missing or far behind gets a new one first (see
// sqlite.Options.SnapshotMinMemories), so that the next process opens it quickly.
func (db *DB) Close() error {
	e := db.e
	e.closeOnce.Do(func() { e.closeErr = e.be.Close() })
	return e.closeErr
}

// Path is the store's file (or, for another backend, where it lives).
func (db *DB) Path() string { return db.e.path }

// Embedder is the embedder in use, or nil for keyword-only.
func (db *DB) Embedder() embed.Embedder { return db.e.embedder }

// Backend is the backend the DB runs on, for what only that backend does: a
// type assertion to *sqlite.Backend reaches the SQLite file's administration
// (WriteSnapshot, the index diagnostics). Writing through it bypasses the
// engine: nothing is validated or embedded.
func (db *DB) Backend() backend.Backend { return db.e.be }

// Count is the number of memories in the store (backend.Description's): for
// the SQLite backend, in its index, without a query. It is -1 when the
// backend cannot say (a server that does not answer).
func (db *DB) Count() int {
	desc, err := db.e.be.Describe(context.Background())
	if err != nil {
		return -1
	}
	return desc.Memories
}

// Warm loads the backend's index now, if it builds one on first need (the
// SQLite backend does): a server calls it at start, so that its first search
// is as fast as the next. Other operations never need it.
func (db *DB) Warm(ctx context.Context) error {
	if db.e.warmer == nil {
		return nil
	}
	return db.e.warmer.Warm(ctx)
}

// Kind names the backend the DB runs on ("sqlite", "weaviate"), as its
// Description says.
func (db *DB) Kind() string { return db.e.kind }

// Ping asks whether the backend answers now (backend.Pinger: a server that
// can be down); a backend without a server always does. A server's
// readiness probe calls it.
func (db *DB) Ping(ctx context.Context) error {
	if db.e.pinger == nil {
		return nil
	}
	return db.e.pinger.Ping(ctx)
}
