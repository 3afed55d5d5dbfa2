// Package sqlite is Engram's embedded backend: every memory in one SQLite file
// (internal/store), searched through an in-memory mirror of it
// (internal/mirror) that the file's change log keeps in step with writes by
// any process.
package sqlite

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/engram-memory/engram/backend"
	"github.com/engram-memory/engram/internal/bm25"
	"github.com/engram-memory/engram/internal/index"
	"github.com/engram-memory/engram/internal/mirror"
	"github.com/engram-memory/engram/internal/store"
	"github.com/engram-memory/engram/internal/tokenize"
	"github.com/engram-memory/engram/memory"
)

// Errors Open returns for a path that is not a usable Engram file, for
// errors.Is.
var (
	ErrNotEngram   = store.ErrNotEngram
	ErrNewerSchema = store.ErrNewerSchema
	ErrBadPath     = store.ErrBadPath
	ErrDamaged     = store.ErrDamaged
	ErrOldSchema   = store.ErrOldSchema
	ErrReadOnly    = store.ErrReadOnly
	// ErrFull: a write failed because the file's disk is full (SQLITE_FULL
	// or ENOSPC); nothing of it was stored.
	ErrFull = store.ErrFull
)

// DefaultSnapshotMinMemories is the store size from which a full rebuild of
// the index writes a snapshot (see Options.SnapshotMinMemories).
const DefaultSnapshotMinMemories = mirror.DefaultSnapshotMinMemories

// Options configure the backend. The zero value is the default: stemming and
// stopwords on, standard BM25, a snapshot for large stores.
type Options struct {
	// BM25 parameters; zero values take the defaults (k1 1.2, b 0.75, field
	// weights index.DefaultFieldWeights). FieldWeights gives all six fields'
	// weights (name, description, text, speaker, context, date), or the
	// first three's, the others keeping theirs.
	K1, B        float64
	FieldWeights []float64
	// ContextNeighbours is how many turns before and after a memory of an
	// episode lend their words to its BM25 context field: 0 means
	// index.DefaultContext's, a negative value none.
	ContextNeighbours int
	// NoStem and NoStopwords turn off the BM25 leg's English stemming and
	// stopword removal.
	NoStem, NoStopwords bool
	// NoSnapshot neither reads nor writes the index snapshot (SnapshotPath):
	// every Open rebuilds the index from the database.
	NoSnapshot bool
	// SnapshotMinMemories is the store size from which a full rebuild writes a
	// snapshot at the end of Open: 0 means DefaultSnapshotMinMemories, a
	// negative value never writes one (an existing one is still read).
	SnapshotMinMemories int
	// ANNMinVectors is the number of vectors of one model from which the
	// vector leg also keeps an approximate (HNSW) graph and answers broad
	// searches from it: 0 means DefaultANNMinVectors, a negative value never
	// builds one (a graph in a snapshot is still used) and searches without
	// a graph exactly. Below it, searches admitting more than 20k memories
	// scan the vectors' sign sketches and search their best rows exactly;
	// smaller stores, and filters admitting fewer, are always searched
	// exactly.
	ANNMinVectors int
	// Logger receives debug information; nil is silent.
	Logger *slog.Logger
}

// DefaultANNMinVectors is the vector count from which a model gets an
// approximate graph (Options.ANNMinVectors).
const DefaultANNMinVectors = index.DefaultGraphMin

// Backend is an open SQLite store with its mirror. It implements
// backend.Backend and the optional powers asserted below (Settings, Forker,
// Warmer, Diagnoser, QueryTermer), and embed.Cache over the file's embedding
// cache. Every read of the index first applies what other processes wrote
// (the file's change log), so reads see every committed write; the
// SQLite-only administration (WriteSnapshot, Doctor, the index diagnostics)
// is called on it directly.
type Backend struct {
	st *store.Store
	mi *mirror.Mirror

	closeOnce sync.Once
	closeErr  error
}

var (
	_ backend.Backend     = (*Backend)(nil)
	_ backend.Settings    = (*Backend)(nil)
	_ backend.Forker      = (*Backend)(nil)
	_ backend.Warmer      = (*Backend)(nil)
	_ backend.Diagnoser   = (*Backend)(nil)
	_ backend.QueryTermer = (*Backend)(nil)
)

// Open opens or creates the store at path. Its index is loaded on first need
// (a search, a listing, a catch-up) or by Warm: writes, reads by id, counts and
// exports go to the file alone.
func Open(ctx context.Context, path string, opts Options) (*Backend, error) {
	mo, err := opts.mirrorOptions()
	if err != nil {
		return nil, err
	}
	st, err := store.Open(ctx, path)
	if err != nil {
		return nil, err
	}
	return &Backend{st: st, mi: mirror.New(st, mo)}, nil
}

// FilePath is the file a SQLite location names: what follows sqlite://
// (sqlite:///var/lib/agent.db is /var/lib/agent.db, sqlite://agent.db is
// agent.db), else the location itself, a path.
func FilePath(location string) string {
	if backend.Scheme(location) != "sqlite" {
		return location
	}
	_, path, _ := strings.Cut(strings.TrimSpace(location), "://")
	return path
}

// Warm loads the index now, if it is not loaded yet, and waits for its ANN
// graph when one is being built: a server calls it at start so that its
// first search does not pay for it (searches before the graph is ready are
// exact, and slower).
func (b *Backend) Warm(ctx context.Context) error {
	if err := b.mi.Load(ctx); err != nil {
		return fmt.Errorf("load the index of %s: %w", b.st.Path(), err)
	}
	// A store past the ANN threshold whose snapshot had no graph builds one
	// in the background; warm means ready, so wait for it.
	if err := b.mi.WaitGraphs(ctx); err != nil {
		return fmt.Errorf("build the ANN graph of %s: %w", b.st.Path(), err)
	}
	return nil
}

// current loads the index on first need and applies the writes other
// processes logged since it last looked, so that a read sees every
// committed write (a CLI write is in a running server's next search).
func (b *Backend) current(ctx context.Context) error {
	if err := b.Warm(ctx); err != nil {
		return err
	}
	return b.mi.CatchUp(ctx)
}

// mirrorOptions are the index options the backend's options ask for.
func (o Options) mirrorOptions() (mirror.Options, error) {
	p := bm25.DefaultParams(index.NumFields)
	p.FieldWeights, p.LengthWeights = index.DefaultFieldWeights(), index.DefaultLengthWeights()
	if o.K1 > 0 {
		p.K1 = o.K1
	}
	if o.B > 0 {
		p.B = o.B
	}
	switch len(o.FieldWeights) {
	case 0:
	case 3, index.NumFields:
		copy(p.FieldWeights, o.FieldWeights)
	default:
		return mirror.Options{}, fmt.Errorf("%w: %d field weights given, want 3 (name, description, text) or %d (and speaker, context, date)", memory.ErrInvalid, len(o.FieldWeights), index.NumFields)
	}
	ctx := index.DefaultContext
	if n := o.ContextNeighbours; n != 0 {
		ctx.Neighbours = max(n, 0)
	}
	tok := tokenize.DefaultOptions()
	tok.Stem, tok.Stopwords = !o.NoStem, !o.NoStopwords
	return mirror.Options{Tokenizer: tok, BM25: p, NoSnapshot: o.NoSnapshot, SnapshotMinMemories: o.SnapshotMinMemories,
		ANN: index.ANNOptions{GraphMin: o.ANNMinVectors}, Context: ctx, Logger: o.Logger}, nil
}

// DoctorReport is what Doctor found in a store file.
type DoctorReport = store.Report

// Doctor examines the store file at path without the checks Open makes (a
// file Open refuses can still be examined) and, with repair, fixes what can
// be fixed without losing anything (see store.Doctor).
func Doctor(ctx context.Context, path string, repair bool) (*DoctorReport, error) {
	return store.Doctor(ctx, path, repair)
}

// SnapshotPath is the index snapshot file of the store at path.
func SnapshotPath(path string) string { return mirror.SnapshotPath(path) }

// Path is the store's file.
func (b *Backend) Path() string { return b.st.Path() }

// Close writes a snapshot when a large store has none or one far behind (see
// Options.SnapshotMinMemories), so the next process opens it quickly, and
// closes the file. Closing twice is harmless.
func (b *Backend) Close() error {
	b.closeOnce.Do(func() {
		b.mi.Close() // stops a background graph build
		b.mi.MaybeWriteSnapshot(context.Background())
		b.closeErr = b.st.Close()
	})
	return b.closeErr
}

// Put stores memories and puts them straight into the index.
func (b *Backend) Put(ctx context.Context, scope map[string]string, mems []*memory.Memory) error {
	first, last, err := b.st.Put(ctx, scope, mems)
	if err != nil {
		return err
	}
	return b.mi.ApplyOwn(ctx, mirror.Own{First: first, Last: last, Put: mems})
}

// PutMerging stores the memories that repeat none already stored and the
// merges of those that do, in one write, and puts them straight into the
// index.
func (b *Backend) PutMerging(ctx context.Context, scope map[string]string, mems []*memory.Memory, mergeable []bool, merge backend.MergeFunc) ([]string, error) {
	existing, written, first, last, err := b.st.PutMerging(ctx, scope, mems, mergeable, merge)
	if err != nil {
		return nil, err
	}
	return existing, b.mi.ApplyOwn(ctx, mirror.Own{First: first, Last: last, Put: written})
}

// Delete removes memories from the file and the index.
func (b *Backend) Delete(ctx context.Context, scope map[string]string, ids []string) (int, error) {
	deleted, first, last, err := b.st.Delete(ctx, scope, ids)
	if err != nil {
		return 0, err
	}
	return len(deleted), b.mi.ApplyOwn(ctx, mirror.Own{First: first, Last: last, Deleted: deleted})
}

// DeleteKeys removes the memories named exactly by keys inside scope, in one
// write (backend.KeyDeleter).
func (b *Backend) DeleteKeys(ctx context.Context, scope map[string]string, keys []string) (int, error) {
	deleted, first, last, err := b.st.DeleteKeys(ctx, scope, keys)
	if err != nil {
		return 0, err
	}
	return len(deleted), b.mi.ApplyOwn(ctx, mirror.Own{First: first, Last: last, Deleted: deleted})
}

// RecordUse counts uses in one write and gives the index the new counters
// without reading a row back.
func (b *Backend) RecordUse(ctx context.Context, scope map[string]string, ids []string, now time.Time, strict bool) ([]backend.Usage, error) {
	uses, first, last, err := b.st.RecordUse(ctx, scope, ids, now, strict)
	if err != nil {
		return nil, err
	}
	if err := b.mi.ApplyOwn(ctx, mirror.Own{First: first, Last: last, Uses: uses}); err != nil {
		return nil, err
	}
	out := make([]backend.Usage, len(uses))
	for i, u := range uses {
		out[i] = backend.Usage{ID: u.ID, Uses: u.Uses, Demand: u.Demand, At: u.At}
	}
	return out, nil
}

// SetEmbeddings stores vectors, then brings the index up to date (reading the
// changed rows, whose vectors the index needs).
func (b *Backend) SetEmbeddings(ctx context.Context, scope map[string]string, ups []backend.EmbeddingUpdate) (int, error) {
	in := make([]store.EmbeddingUpdate, len(ups))
	for i, u := range ups {
		in[i] = store.EmbeddingUpdate{ID: u.ID, Hash: u.Hash, Embedding: u.Embedding}
	}
	n, err := b.st.SetEmbeddings(ctx, scope, in)
	if err != nil {
		return n, err
	}
	return n, b.mi.CatchUp(ctx)
}

// Update changes one memory in one write transaction of the file, then puts
// it straight into the index.
func (b *Backend) Update(ctx context.Context, scope map[string]string, id string, fn func(*memory.Memory) (*memory.Memory, error)) (*memory.Memory, error) {
	up, err := b.st.Update(ctx, scope, id, fn)
	if err != nil {
		return nil, err
	}
	if up.Last == 0 {
		return up.Memory, nil
	}
	out := *up.Memory // before the index takes it over
	own := mirror.Own{First: up.First, Last: up.Last, Put: []*memory.Memory{up.Memory}}
	if up.OldKey != up.Memory.Key() {
		own.Deleted = []string{up.OldKey}
	}
	if err := b.mi.ApplyOwn(ctx, own); err != nil {
		return nil, err
	}
	if e := out.Embedding; e != nil {
		c := *e
		c.Vector = slices.Clone(e.Vector)
		out.Embedding = &c
	}
	return &out, nil
}

// Get reads memories from the file, as stored.
func (b *Backend) Get(ctx context.Context, scope map[string]string, ids []string) (map[string]*memory.Memory, error) {
	return b.st.Get(ctx, scope, ids)
}

// List visits memories in id order: from the index, or, when q.Vectors asks
// for the stored vectors, from the file (without loading the index).
func (b *Backend) List(ctx context.Context, q backend.ListQuery, fn func(*memory.Memory) error) error {
	if !q.Vectors {
		if err := b.current(ctx); err != nil {
			return err
		}
	}
	if q.Vectors {
		match := q.Filter.Match
		if q.Filter.Current || q.Filter.AsOf != nil {
			// What supersedes what is derived by the index, not stored:
			// the index says which memories the filter admits.
			if err := b.current(ctx); err != nil {
				return err
			}
			admitted := map[string]*memory.Memory{}
			for _, m := range b.mi.List(&q.Filter) {
				admitted[m.Key()] = m
			}
			match = func(m *memory.Memory) bool {
				x, ok := admitted[m.Key()]
				if ok {
					m.Superseded = x.Superseded
				}
				return ok
			}
		}
		return b.st.Scan(ctx, func(m *memory.Memory) error {
			if !match(m) {
				return nil
			}
			return fn(m)
		}, nil)
	}
	for _, m := range b.mi.List(&q.Filter) {
		if err := ctx.Err(); err != nil {
			return err
		}
		if err := fn(m); err != nil {
			return err
		}
	}
	return nil
}

// LatestModel is the model of the most recently inserted memory with a
// vector, read from the file without loading the index ("" for none).
func (b *Backend) LatestModel(ctx context.Context) (string, error) { return b.st.LatestModel(ctx) }

// Models counts the index's vectors per model.
func (b *Backend) Models(ctx context.Context) (map[string]backend.ModelInfo, error) {
	if err := b.current(ctx); err != nil {
		return nil, err
	}
	return b.mi.Models(ctx)
}

// Legs runs the legs over the index.
func (b *Backend) Legs(ctx context.Context, q backend.LegQuery) (*backend.LegResult, error) {
	if err := b.current(ctx); err != nil {
		return nil, err
	}
	return b.mi.Legs(ctx, q)
}

// Neighbours finds a memory's neighbours in its episode from the index.
func (b *Backend) Neighbours(ctx context.Context, scope map[string]string, id string, k int) (before, after []*memory.Memory, err error) {
	if err := b.current(ctx); err != nil {
		return nil, nil, err
	}
	return b.mi.Neighbours(ctx, scope, id, k)
}

// Sync applies other processes' writes from the change log now, loading the
// index first if need be (every read of the index does it itself), and
// reports whether a store setting changed since the last Sync.
func (b *Backend) Sync(ctx context.Context) (bool, error) { return b.mi.Sync(ctx) }

// Setting reads a store setting from the file, as every process last wrote it.
func (b *Backend) Setting(ctx context.Context, key string) (string, bool, error) {
	return b.st.Setting(ctx, key)
}

// SetSetting stores a setting for every process using the file.
func (b *Backend) SetSetting(ctx context.Context, key, value string) error {
	return b.st.SetSetting(ctx, key, value)
}

// Fork is a private copy of the index for calibration.
func (b *Backend) Fork(ctx context.Context, model string, replace map[string]*memory.Memory) (backend.Searcher, error) {
	if err := b.current(ctx); err != nil {
		return nil, err
	}
	return b.mi.Fork(model, replace), nil
}

// WriteSnapshot writes the index as it is now to the store's snapshot file
// (SnapshotPath) atomically, records it in the database, and returns the
// file's size. Open and Close write one when it pays; callers may force one,
// for example before handing a large store to many short-lived processes.
func (b *Backend) WriteSnapshot(ctx context.Context) (int64, error) { return b.mi.WriteSnapshot(ctx) }

// Describe reports the file, its size (with the write-ahead log) and the
// index's change-log position and size; before the index is loaded, the
// file's own (without loading it).
func (b *Backend) Describe(ctx context.Context) (backend.Description, error) {
	d := backend.Description{Kind: "sqlite", Path: b.st.Path()}
	if err := b.mi.CatchUp(ctx); err != nil {
		return d, err
	}
	if b.mi.Loaded() {
		d.ChangeSeq, d.Memories = b.mi.Seq(), b.mi.Len()
	} else {
		var err error
		if d.Memories, err = b.st.Count(ctx); err != nil {
			return d, fmt.Errorf("count memories: %w", err)
		}
		if d.ChangeSeq, err = b.st.LastSeq(ctx); err != nil {
			return d, fmt.Errorf("read the change log: %w", err)
		}
	}
	for _, p := range []string{d.Path, d.Path + "-wal"} {
		if fi, err := os.Stat(p); err == nil {
			d.Bytes += fi.Size()
		}
	}
	return d, nil
}

// BadRows lists the rows the store could not read as they are: the index's
// account when it is loaded, else one pass over the rows (decoding only, no
// index built).
func (b *Backend) BadRows(ctx context.Context) ([]backend.BadRow, error) {
	// Catch up first: another process (doctor --repair) may have rewritten
	// rows the index still lists as bad.
	if err := b.mi.CatchUp(ctx); err != nil {
		return nil, err
	}
	rows := b.mi.BadRows()
	if !b.mi.Loaded() {
		rows = nil
		err := b.st.Scan(ctx, func(*memory.Memory) error { return nil }, func(r store.BadRow) { rows = append(rows, r) })
		if err != nil {
			return nil, fmt.Errorf("look for bad rows: %w", err)
		}
		slices.SortFunc(rows, func(a, b store.BadRow) int { return strings.Compare(a.Key(), b.Key()) })
	}
	out := make([]backend.BadRow, len(rows))
	for i, r := range rows {
		out[i] = backend.BadRow{ID: r.ID, Scope: r.Scope, Problem: r.Problem, Skipped: r.Skipped}
	}
	return out, nil
}

// Tally counts the memories in scope from the file, without the index.
func (b *Backend) Tally(ctx context.Context, scope map[string]string) (backend.Tally, error) {
	t, err := b.st.Tally(ctx, scope)
	if err != nil {
		return backend.Tally{}, err
	}
	return backend.Tally{Memories: t.Memories, Favorites: t.Favorites, Types: t.Types, Embedded: t.Embedded}, nil
}

// GetEmbedding looks a vector up in the file's embedding cache (embed.Cache).
func (b *Backend) GetEmbedding(ctx context.Context, model, hash string) ([]float32, bool, error) {
	return b.st.GetEmbedding(ctx, model, hash)
}

// PutEmbedding stores a vector in the embedding cache (embed.Cache).
func (b *Backend) PutEmbedding(ctx context.Context, model, hash string, v []float32) error {
	return b.st.PutEmbedding(ctx, model, hash, v)
}

// PutEmbeddings stores vectors in the embedding cache in one transaction
// (embed.BatchCache).
func (b *Backend) PutEmbeddings(ctx context.Context, model string, hashes []string, vecs [][]float32) error {
	return b.st.PutEmbeddings(ctx, model, hashes, vecs)
}

// IndexLoaded reports whether the index has been loaded: a diagnostic for
// tests and benchmarks of what needs it.
func (b *Backend) IndexLoaded() bool { return b.mi.Loaded() }

// VerifyIndex checks what the loaded index derives from its memories (each
// memory's context and date fields, episode order, supersession) against a
// computation from scratch: a slow diagnostic for tests of concurrent
// writers.
func (b *Backend) VerifyIndex() error { return b.mi.Verify() }

// RowsRead is how many rows of memories this backend has read from the file
// since Open: a diagnostic for tests and benchmarks that bound reads.
func (b *Backend) RowsRead() int64 { return b.st.RowsRead() }

// Footprint estimates the memory of the store's loaded index by component,
// for reports (engram bench): it reads every memory under the index's read
// lock.
func (b *Backend) Footprint() index.Footprint { return b.mi.Footprint() }

// QueryTerms is the mirror's (backend.QueryTermer).
func (b *Backend) QueryTerms(ctx context.Context, text string, scope map[string]string) ([]backend.TermCount, int, error) {
	if err := b.current(ctx); err != nil {
		return nil, 0, err
	}
	return b.mi.QueryTerms(ctx, text, scope)
}
