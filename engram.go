// Package engram is a memory engine for LLM agents: memories in one SQLite file,
// recalled by a hybrid of BM25 keyword ranking and dense-vector similarity fused
// by rank, with every result explained.
//
//	db, err := engram.Open("agent.db", engram.Options{})
//	ids, err := db.Add(ctx, &engram.Memory{Text: "The user prefers dark themes"})
//	resp, err := db.Search(ctx, engram.Query{Query: "which colour scheme does the user like"})
package engram

import (
	"context"
	"fmt"
	"log/slog"
	"runtime"
	"sync"
	"time"

	"github.com/engram-memory/engram/embed"
	"github.com/engram-memory/engram/internal/bm25"
	"github.com/engram-memory/engram/internal/index"
	"github.com/engram-memory/engram/internal/recall"
	"github.com/engram-memory/engram/internal/store"
	"github.com/engram-memory/engram/internal/tokenize"
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
)

// Errors callers may test with errors.Is.
var (
	ErrNotFound     = memory.ErrNotFound
	ErrInvalid      = memory.ErrInvalid
	ErrInvalidQuery = recall.ErrInvalidQuery
	ErrNotEngram    = store.ErrNotEngram
	ErrNewerSchema  = store.ErrNewerSchema
	ErrBadPath      = store.ErrBadPath
	// ErrNoLLM and ErrNoReranker are the reasons a search gives in degraded
	// when it was asked for HyDE or a rerank the DB has no provider for.
	ErrNoLLM      = recall.ErrNoLLM
	ErrNoReranker = recall.ErrNoReranker
)

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
	// written (default 30s); past it they are stored without vectors, for Reindex.
	WriteEmbedTimeout time.Duration
	// VectorWeight overrides the vector leg's fusion weight (else the store's
	// calibrated weight, else the model's default).
	VectorWeight *float64
	// Tokenizer options for the BM25 leg; nil means tokenize.DefaultOptions().
	Tokenizer *tokenize.Options
	// BM25 parameters; zero values take the defaults (k1 1.2, b 0.75, field weights).
	K1, B        float64
	FieldWeights []float64
	// Optional stages.
	Reranker     rerank.Reranker
	RerankDepth  int
	LLM          *llm.Client
	StageTimeout time.Duration
	// Logger receives debug information; nil is silent.
	Logger *slog.Logger
	// NoSnapshot neither reads nor writes the index snapshot (PATH+".idx"):
	// every Open rebuilds the index from the database.
	NoSnapshot bool
	// SnapshotMinMemories is the store size from which a full rebuild writes
	// a snapshot at the end of Open: 0 means DefaultSnapshotMinMemories, a
	// negative value never writes one (an existing one is still read).
	SnapshotMinMemories int
}

// DB is an open Engram store: the file plus the in-memory indexes that mirror it.
// It is safe for concurrent use; other processes may use the same file.
type DB struct {
	st   *store.Store
	opts Options
	// embedder embeds queries and memEmbedder memories: the same model, but
	// with CacheEmbeddings the memories' vectors go through the store's
	// persistent content-hash cache while queries use a small in-memory one,
	// so a search never writes. Both nil: keyword only.
	embedder, memEmbedder embed.Embedder
	log                   *slog.Logger

	params bm25.Params // BM25 parameters of the index, from the options

	mu  sync.RWMutex // guards ix and seq
	ix  *index.Index
	seq int64 // last change-log entry applied to ix
	// snapSeq is the change-log entry of the index snapshot this process
	// loaded or wrote, or -1 when none is in effect.
	snapSeq int64

	storeWeight *float64 // the vector weight calibrated for this model (settings), or nil

	syncMu sync.Mutex // one catch-up at a time

	closeOnce sync.Once
	closeErr  error
}

// queryCacheSize is how many query vectors a DB with CacheEmbeddings keeps.
const queryCacheSize = 1024

// Open opens or creates the store at path and loads its indexes.
func Open(ctx context.Context, path string, opts Options) (*DB, error) {
	params, err := opts.bm25Params()
	if err != nil {
		return nil, err
	}
	st, err := store.Open(ctx, path)
	if err != nil {
		return nil, err
	}
	db := &DB{st: st, opts: opts, params: params, log: opts.Logger, snapSeq: -1}
	if err := db.open(ctx); err != nil {
		st.Close()
		return nil, fmt.Errorf("open %s: %w", path, err)
	}
	return db, nil
}

// bm25Params are the BM25 parameters the options ask for.
func (o Options) bm25Params() (bm25.Params, error) {
	p := bm25.DefaultParams(index.NumFields)
	if o.K1 > 0 {
		p.K1 = o.K1
	}
	if o.B > 0 {
		p.B = o.B
	}
	switch len(o.FieldWeights) {
	case 0:
	case index.NumFields:
		p.FieldWeights = o.FieldWeights
	default:
		return p, fmt.Errorf("%w: %d field weights given, want %d (name, description, text)", ErrInvalid, len(o.FieldWeights), index.NumFields)
	}
	return p, nil
}

// open sets up the embedders and fills the index: from the snapshot when one
// can be trusted, else from the rows; then it catches up with the change log.
func (db *DB) open(ctx context.Context) error {
	if db.log == nil {
		db.log = slog.New(slog.DiscardHandler)
	}
	opts := db.opts
	switch {
	case opts.NoEmbedder:
	case opts.Embedder != nil && opts.CacheEmbeddings:
		db.embedder = embed.Cached(opts.Embedder, embed.NewLRU(queryCacheSize))
		db.memEmbedder = embed.Cached(opts.Embedder, db.st)
	case opts.Embedder != nil:
		db.embedder, db.memEmbedder = opts.Embedder, opts.Embedder
	default:
		e, err := BuiltinEmbedder()
		if err != nil {
			return fmt.Errorf("built-in embedder: %w", err)
		}
		db.embedder, db.memEmbedder = e, e
	}
	tok := tokenize.DefaultOptions()
	if opts.Tokenizer != nil {
		tok = *opts.Tokenizer
	}
	tokenizer := tokenize.New(tok)
	db.ix = index.New(tokenizer, db.params)
	if !opts.NoSnapshot && db.loadSnapshot(ctx, tokenizer) {
		db.snapSeq = db.seq
	} else if err := db.load(ctx); err != nil {
		return err
	}
	if err := db.sync(ctx); err != nil {
		return err
	}
	if err := db.loadSettings(ctx); err != nil {
		return err
	}
	db.maybeWriteSnapshot(ctx)
	return nil
}

// Close closes the file. A large store whose index snapshot is missing or
// far behind gets a new one first (see SnapshotMinMemories), so that the next
// process opens it quickly: after a big import, for example.
func (db *DB) Close() error {
	db.closeOnce.Do(func() {
		db.maybeWriteSnapshot(context.Background())
		db.closeErr = db.st.Close()
	})
	return db.closeErr
}

// Path is the store's file.
func (db *DB) Path() string { return db.st.Path() }

// Embedder is the embedder in use, or nil for keyword-only.
func (db *DB) Embedder() embed.Embedder { return db.embedder }

// load fills the index from the rows; the caller then applies the change log
// past the seq it records, catching up with writes made while it read.
func (db *DB) load(ctx context.Context) error {
	seq, err := db.st.LastSeq(ctx)
	if err != nil {
		return err
	}
	counts, err := db.st.EmbeddingCounts(ctx)
	if err != nil {
		return err
	}
	db.mu.Lock()
	defer db.mu.Unlock()
	for _, c := range counts {
		db.ix.Reserve(c.Model, c.Dim, c.N)
	}
	if err := db.loadRows(ctx); err != nil {
		return err
	}
	db.seq = seq
	return nil
}

// loadRows reads every row into the index: one goroutine scans SQLite, the
// others tokenize, and the caller (holding the write lock) inserts, in scan
// (id) order, so that a store loads into the same document numbers every
// time and ties between equal scores break the same way.
func (db *DB) loadRows(ctx context.Context) error {
	const batch = 512
	type batchOf[T any] struct {
		seq   int
		items []T
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	raw := make(chan batchOf[*memory.Memory], 4)
	analyzed := make(chan batchOf[index.Analyzed], 4)
	scanErr := make(chan error, 1)
	go func() {
		defer close(raw)
		var buf []*memory.Memory
		seq := 0
		send := func() error {
			select {
			case raw <- batchOf[*memory.Memory]{seq, buf}:
				seq, buf = seq+1, nil
				return nil
			case <-ctx.Done():
				return ctx.Err()
			}
		}
		err := db.st.Scan(ctx, func(m *memory.Memory) error {
			if buf = append(buf, m); len(buf) == batch {
				return send()
			}
			return nil
		})
		if err == nil && len(buf) > 0 {
			err = send()
		}
		scanErr <- err
	}()
	var wg sync.WaitGroup
	for range max(1, runtime.GOMAXPROCS(0)) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for b := range raw {
				out := make([]index.Analyzed, len(b.items))
				for i, m := range b.items {
					out[i] = db.ix.Analyze(m)
				}
				analyzed <- batchOf[index.Analyzed]{b.seq, out}
			}
		}()
	}
	go func() { wg.Wait(); close(analyzed) }()
	pending := map[int][]index.Analyzed{}
	next := 0
	for b := range analyzed {
		pending[b.seq] = b.items
		for as, ok := pending[next]; ok; as, ok = pending[next] {
			for _, a := range as {
				db.ix.PutAnalyzed(a)
			}
			delete(pending, next)
			next++
		}
	}
	return <-scanErr
}

// sync applies the change log past the last entry this process has seen, so
// writes by other processes are visible to the next search without a reload.
func (db *DB) sync(ctx context.Context) error {
	db.syncMu.Lock()
	defer db.syncMu.Unlock()
	for {
		db.mu.RLock()
		after := db.seq
		db.mu.RUnlock()
		const batch = 10000
		changes, err := db.st.Changes(ctx, after, batch)
		if err != nil {
			return err
		}
		if len(changes) == 0 {
			return nil
		}
		// The row as it is now is the truth, whatever the ops in between: read
		// every changed id once; present means put, absent means delete.
		// An id whose every change is a use keeps its index entry; only its use
		// statistics are refreshed. A setting change (a calibrated weight, by
		// another process perhaps) reloads the settings.
		useOnly := map[string]bool{}
		var ids []string
		settings := false
		for _, c := range changes {
			if c.Op == store.OpSetting {
				settings = true
				continue
			}
			only, seen := useOnly[c.ID]
			if !seen {
				ids = append(ids, c.ID)
				only = true
			}
			useOnly[c.ID] = only && c.Op == store.OpUse
		}
		rows, err := db.st.GetMany(ctx, ids)
		if err != nil {
			return err
		}
		db.mu.Lock()
		for _, id := range ids {
			if m, ok := rows[id]; ok {
				if !useOnly[id] || !db.ix.SetUsage(m) {
					db.ix.Put(m)
				}
			} else {
				db.ix.Delete(id)
			}
		}
		db.seq = changes[len(changes)-1].Seq
		db.mu.Unlock()
		if settings {
			if err := db.loadSettings(ctx); err != nil {
				return err
			}
		}
		if len(changes) < batch {
			return nil
		}
	}
}

// applyOwn puts memories this process just wrote with change-log entries
// first..last straight into the index when no other write came between;
// otherwise it falls back to sync.
func (db *DB) applyOwn(ctx context.Context, mems []*memory.Memory, first, last int64) error {
	db.syncMu.Lock()
	db.mu.Lock()
	direct := db.seq == first-1
	if direct {
		for _, m := range mems {
			db.ix.Put(m)
		}
		db.seq = last
	}
	db.mu.Unlock()
	db.syncMu.Unlock()
	if direct {
		return nil
	}
	return db.sync(ctx)
}

// Count is the number of memories in the index.
func (db *DB) Count() int {
	db.mu.RLock()
	defer db.mu.RUnlock()
	return db.ix.Len()
}
