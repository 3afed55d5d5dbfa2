// Package mirror is the live in-memory index of one SQLite store: loaded from
// its snapshot or rebuilt from the rows, kept in step with the store's change
// log, searched under its own read lock, and persisted as a snapshot.
package mirror

import (
	"context"
	"log/slog"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/engram-memory/engram/internal/bm25"
	"github.com/engram-memory/engram/internal/index"
	"github.com/engram-memory/engram/internal/store"
	"github.com/engram-memory/engram/internal/tokenize"
	"github.com/engram-memory/engram/memory"
)

// Options configure a Mirror.
type Options struct {
	Tokenizer tokenize.Options
	BM25      bm25.Params
	// NoSnapshot neither reads nor writes the snapshot file: every Open
	// rebuilds the index from the rows.
	NoSnapshot bool
	// SnapshotMinMemories is the store size from which a full rebuild writes a
	// snapshot: 0 means DefaultSnapshotMinMemories, a negative value never
	// writes one (an existing one is still read).
	SnapshotMinMemories int
	// ANN configures the approximate vector index of large stores
	// (index.ANNOptions; the zero value is the defaults).
	ANN index.ANNOptions
	// Context says what the BM25 context and date fields hold
	// (index.ContextOptions; the zero value indexes neither).
	Context index.ContextOptions
	// Logger receives debug information (whether a snapshot was used, and
	// why not); nil is silent.
	Logger *slog.Logger
}

// Mirror is the in-memory index of a store and the change-log position it
// reflects. It is safe for concurrent use: searches share a read lock, and
// changes (own writes, catching up with other processes) take the write lock.
type Mirror struct {
	st     *store.Store // nil for a fork, which never changes
	opts   Options
	tok    *tokenize.Tokenizer
	params bm25.Params
	log    *slog.Logger

	loadMu sync.Mutex // one Load at a time
	syncMu sync.Mutex // one catch-up at a time; guards settingsChanged
	// settingsChanged records that a catch-up saw a setting change, until
	// Sync reports it.
	settingsChanged bool
	// current is the store's Version at the start of the last catch-up that
	// found the index up to date, and haveCurrent whether there was one: a
	// catch-up at that Version has nothing to read.
	current     store.Version
	haveCurrent bool
	// loaded is set, under syncMu, once the index reflects the store: until
	// then no write is applied to it (Load reads them from the store).
	loaded atomic.Bool

	badMu sync.Mutex              // guards bad
	bad   map[string]store.BadRow // rows the store could not read as they are, by key

	gw graphWork // the background ANN graph build (graphs.go)

	// distrust is set once a loaded snapshot failed a checksum after the
	// load (rebuildCorrupt): this process reads none again.
	distrust atomic.Bool

	mu  sync.RWMutex // guards ix, seq and snapSeq
	ix  *index.Index
	seq int64 // last change-log entry applied to ix
	// snapSeq is the change-log entry of the snapshot this process loaded or
	// wrote, or -1 when none is in effect.
	snapSeq int64
}

// New returns a mirror of st that is not loaded yet: nothing is read until
// Load, which every read of the index needs first. A process that only
// writes, reads memories by id or exports never pays for the index.
func New(st *store.Store, opts Options) *Mirror {
	m := &Mirror{st: st, opts: opts, tok: tokenize.New(opts.Tokenizer), params: opts.BM25, log: opts.Logger, snapSeq: -1, bad: map[string]store.BadRow{}}
	if m.log == nil {
		m.log = slog.New(slog.DiscardHandler)
	}
	m.ix = m.newIndex()
	return m
}

// newIndex is an empty index with the mirror's settings.
func (m *Mirror) newIndex() *index.Index {
	ix := index.New(m.tok, m.params)
	ix.SetANN(m.opts.ANN)
	ix.SetContext(m.opts.Context)
	return ix
}

// Open is New followed by Load.
func Open(ctx context.Context, st *store.Store, opts Options) (*Mirror, error) {
	m := New(st, opts)
	if err := m.Load(ctx); err != nil {
		return nil, err
	}
	return m, nil
}

// Loaded reports whether the index has been loaded.
func (m *Mirror) Loaded() bool { return m.st == nil || m.loaded.Load() }

// Load fills the index, once: from the snapshot next to the file when one can
// be trusted, else from the rows; then it catches up with the change log and,
// when it pays, writes a new snapshot. A failed Load leaves the mirror
// unloaded, and the next call tries again.
func (m *Mirror) Load(ctx context.Context) error {
	if m.Loaded() {
		return nil
	}
	m.loadMu.Lock()
	defer m.loadMu.Unlock()
	if m.loaded.Load() {
		return nil
	}
	// The index in place (empty before the first load) stays until its
	// replacement is whole: a reload swaps it in under the lock, so that a
	// search never sees a half-filled or emptied index.
	if !m.st.ReadOnly() {
		removeStaleTemps(SnapshotPath(m.st.Path()), time.Now())
	}
	if !m.opts.NoSnapshot && !m.distrust.Load() && m.loadSnapshot(ctx) {
		m.mu.Lock()
		m.snapSeq = m.seq
		m.mu.Unlock()
	} else if err := m.load(ctx); err != nil {
		return err
	}
	// The last catch-up and the flag under one hold of syncMu: a write that
	// ApplyOwn skipped (not loaded yet) committed before this catch-up reads
	// the log, so the index misses nothing. The settings may have changed
	// since the owner read them, in changes the load took in without seeing
	// them: the next Sync says so.
	m.syncMu.Lock()
	err := m.syncLocked(ctx)
	if err == nil {
		m.loaded.Store(true)
		m.settingsChanged = true
	}
	m.syncMu.Unlock()
	if err != nil {
		return err
	}
	m.MaybeWriteSnapshot(ctx)
	m.maybeBuildGraphs()
	return nil
}

// load fills the index from the rows; the caller then applies the change log
// past the seq it records, catching up with writes made while it read.
func (m *Mirror) load(ctx context.Context) error {
	seq, err := m.st.LastSeq(ctx)
	if err != nil {
		return err
	}
	counts, err := m.st.EmbeddingCounts(ctx)
	if err != nil {
		return err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	m.ix, m.snapSeq = m.newIndex(), -1
	for _, c := range counts {
		m.ix.Reserve(c.Model, c.Dim, c.N)
	}
	m.ix.BeginBulk()
	m.ix.BeginBatch()
	if err := m.loadRows(ctx); err != nil {
		return err // the index is discarded: no graph to build
	}
	m.ix.EndBatch()
	m.ix.EndBulk()
	m.seq = seq
	return nil
}

// loadRows reads every row into the index: one goroutine scans SQLite, the
// others tokenize, and the caller (holding the write lock) inserts, in scan
// (id) order, so that a store loads into the same document numbers every
// time and ties between equal scores break the same way.
func (m *Mirror) loadRows(ctx context.Context) error {
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
		err := m.st.Scan(ctx, func(x *memory.Memory) error {
			if buf = append(buf, x); len(buf) == batch {
				return send()
			}
			return nil
		}, m.noteBad)
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
				for i, x := range b.items {
					out[i] = m.ix.Analyze(x)
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
				m.ix.PutAnalyzed(a)
			}
			delete(pending, next)
			next++
		}
	}
	return <-scanErr
}

// Sync applies the change log past the last entry this mirror has seen, so
// writes by other processes are visible to the next search without a reload.
// It reports whether a store setting changed since the last Sync (seen by this
// catch-up or an earlier one inside ApplyOwn), so the caller reloads its
// settings. A fork has nothing to catch up with.
func (m *Mirror) Sync(ctx context.Context) (settingsChanged bool, err error) {
	if m.st == nil {
		return false, nil
	}
	if err := m.Load(ctx); err != nil {
		return false, err
	}
	if err := m.sync(ctx); err != nil {
		return false, err
	}
	m.syncMu.Lock()
	defer m.syncMu.Unlock()
	settingsChanged, m.settingsChanged = m.settingsChanged, false
	return settingsChanged, nil
}

// CatchUp is Sync for a caller that does not reload settings: a setting
// change it sees is left for the next Sync to report. An index not loaded yet
// has nothing to catch up: Load reads the store as it then is.
func (m *Mirror) CatchUp(ctx context.Context) error {
	if m.st == nil || !m.Loaded() {
		return nil // a fork, or nothing loaded
	}
	// Nothing committed to the file since the last catch-up means nothing to
	// apply: one PRAGMA instead of a change-log query. Without a Version,
	// read the change log.
	at, verr := m.st.Version(ctx)
	m.syncMu.Lock()
	if verr == nil && m.haveCurrent && m.current == at {
		m.syncMu.Unlock()
		return nil
	}
	err := m.syncLocked(ctx)
	// at was read before the change log: a commit in between changes the
	// Version, so the next catch-up reads again.
	m.current, m.haveCurrent = at, err == nil && verr == nil
	m.syncMu.Unlock()
	if err == nil {
		m.maybeBuildGraphs()
	}
	return err
}

func (m *Mirror) sync(ctx context.Context) error {
	m.syncMu.Lock()
	err := m.syncLocked(ctx)
	m.syncMu.Unlock()
	if err == nil {
		m.maybeBuildGraphs()
	}
	return err
}

// syncLocked is sync for a caller holding syncMu.
func (m *Mirror) syncLocked(ctx context.Context) error {
	for {
		m.mu.RLock()
		after := m.seq
		m.mu.RUnlock()
		const batch = 10000
		changes, err := m.st.Changes(ctx, after, batch)
		if err != nil {
			return err
		}
		if len(changes) == 0 {
			return nil
		}
		// The row as it is now is the truth, whatever the ops in between: read
		// every changed memory once; present means put, absent means delete. A
		// memory whose every change is a use keeps its index entry, and only
		// its use counters are read and refreshed. A change logged by an older
		// build names the id only: every memory with that id is re-read.
		useOnly := map[string]bool{}
		var keys, full, uses, legacy []string
		for _, c := range changes {
			if c.Op == store.OpSetting {
				m.settingsChanged = true
				continue
			}
			key := c.Key()
			if key == "" {
				legacy = append(legacy, c.ID)
				continue
			}
			only, seen := useOnly[key]
			if !seen {
				keys = append(keys, key)
				only = true
			}
			useOnly[key] = only && c.Op == store.OpUse
		}
		// Only this catch-up changes the index now (ApplyOwn waits for
		// syncMu), so what it sees indexed stays indexed until it applies.
		m.mu.RLock()
		for _, id := range legacy {
			for _, key := range m.ix.KeysOf(id) {
				if _, seen := useOnly[key]; !seen {
					keys = append(keys, key)
				}
				useOnly[key] = false
			}
		}
		for _, key := range keys {
			if useOnly[key] && m.ix.Get(key) == nil {
				useOnly[key] = false // not indexed: only the whole row can tell
			}
			if useOnly[key] {
				uses = append(uses, key)
			} else {
				full = append(full, key)
			}
		}
		m.mu.RUnlock()
		rows, bad, err := m.st.GetKeys(ctx, full)
		if err != nil {
			return err
		}
		var legacyRows map[string][]*memory.Memory
		if len(legacy) > 0 {
			if legacyRows, err = m.st.ByID(ctx, legacy); err != nil {
				return err
			}
		}
		counts, err := m.st.Usages(ctx, uses)
		if err != nil {
			return err
		}
		m.mu.Lock()
		m.ix.BeginBatch()
		for _, key := range keys {
			if useOnly[key] {
				if u, ok := counts[key]; ok {
					m.ix.SetUsageKey(key, u.Uses, u.Demand, u.At)
				} else {
					m.ix.Delete(key)
				}
				continue
			}
			if x, ok := rows[key]; ok {
				m.ix.Put(x)
			} else {
				m.ix.Delete(key)
			}
		}
		for _, xs := range legacyRows {
			for _, x := range xs {
				m.ix.Put(x)
			}
		}
		m.ix.EndBatch()
		m.seq = changes[len(changes)-1].Seq
		m.mu.Unlock()
		m.settleBad(full, bad)
		if len(changes) < batch {
			return nil
		}
	}
}

// noteBad records a row the store could not read as it is.
func (m *Mirror) noteBad(b store.BadRow) {
	m.badMu.Lock()
	m.bad[b.Key()] = b
	m.badMu.Unlock()
}

// settleBad updates the bad rows after re-reading the memories with keys:
// bad lists those of them that are (still) bad.
func (m *Mirror) settleBad(keys []string, bad []store.BadRow) {
	m.badMu.Lock()
	defer m.badMu.Unlock()
	for _, k := range keys {
		delete(m.bad, k)
	}
	for _, b := range bad {
		m.bad[b.Key()] = b
	}
}

// BadRows lists the rows of the store the index could not read as they are
// (skipped, or read without a damaged part), in key order, as of the last
// load or catch-up that read them.
func (m *Mirror) BadRows() []store.BadRow {
	m.badMu.Lock()
	out := make([]store.BadRow, 0, len(m.bad))
	for _, b := range m.bad {
		out = append(out, b)
	}
	m.badMu.Unlock()
	slices.SortFunc(out, func(a, b store.BadRow) int { return strings.Compare(a.Key(), b.Key()) })
	return out
}

// Own is a write this process just made to the store: change-log entries
// First..Last (Last 0 when the write logged nothing), and what they did.
type Own struct {
	First, Last int64
	Put         []*memory.Memory // stored (the mirror takes them over)
	Deleted     []string         // keys (memory.Key)
	Uses        []store.Usage    // as store.RecordUse returned them
}

// ApplyOwn puts this process's own write straight into the index when no
// other write came between, without reading a row back; otherwise it catches
// up with the change log, which includes the write. Before Load it does
// nothing: the write is in the store, where Load will read it.
func (m *Mirror) ApplyOwn(ctx context.Context, w Own) error {
	if w.Last == 0 {
		return nil
	}
	m.syncMu.Lock()
	if !m.loaded.Load() {
		m.syncMu.Unlock()
		return nil
	}
	m.mu.Lock()
	direct := m.seq == w.First-1
	if direct {
		m.ix.BeginBatch()
		for _, key := range w.Deleted {
			m.ix.Delete(key)
		}
		for _, x := range w.Put {
			m.ix.Put(x)
		}
		m.ix.EndBatch()
		for _, u := range w.Uses {
			m.ix.SetUsageKey(u.Key, u.Uses, u.Demand, u.At)
		}
		m.seq = w.Last
	}
	m.mu.Unlock()
	m.syncMu.Unlock()
	if direct {
		m.maybeBuildGraphs()
		return nil
	}
	return m.sync(ctx)
}

// Len is the number of memories in the index.
func (m *Mirror) Len() int {
	m.mu.RLock()
	defer m.mu.RUnlock()
	return m.ix.Len()
}

// Seq is the last change-log entry the index reflects.
func (m *Mirror) Seq() int64 {
	m.mu.RLock()
	defer m.mu.RUnlock()
	return m.seq
}

// Footprint estimates the index's memory by component (index.Footprint).
func (m *Mirror) Footprint() index.Footprint {
	m.mu.RLock()
	defer m.mu.RUnlock()
	return m.ix.Footprint()
}

// Verify checks what the index derives from its memories (context fields,
// episode order, supersession) against a computation from scratch
// (index.Verify): slow, for tests and diagnostics.
func (m *Mirror) Verify() error {
	m.mu.RLock()
	defer m.mu.RUnlock()
	if err := m.ix.Settle(); err != nil {
		return err
	}
	return m.ix.Verify()
}
