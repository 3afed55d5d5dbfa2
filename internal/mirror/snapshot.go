package mirror

// The persisted index snapshot (DESIGN §3): a sidecar file PATH+".idx" holding
// the in-memory index as of one change-log sequence number, so that opening a
// large store reads one file instead of re-tokenizing every memory, then
// replays the change log since that sequence. A snapshot is never trusted: it
// is used only when its header matches this build and these options, its
// random token and sequence equal those the database recorded when it was
// written, and its CRC-32C checks; anything else means a rebuild from SQLite.

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/engram-memory/engram/internal/binenc"
	"github.com/engram-memory/engram/internal/bm25"
	"github.com/engram-memory/engram/internal/index"
	"github.com/engram-memory/engram/internal/mmap"
	"github.com/engram-memory/engram/internal/store"
)

// DefaultSnapshotMinMemories is the store size from which a full rebuild
// writes a snapshot: below it a rebuild takes a few milliseconds (about 120 µs
// a SciFact abstract on two cores, tokenized and stemmed), no slower than
// reading a snapshot, and the file is not worth keeping.
const DefaultSnapshotMinMemories = 100

// snapshotReplayFloor is the least number of changes a loaded snapshot may be
// behind before it is worth rewriting (with 1% of the store, whichever is
// more): replaying a change re-reads and re-indexes its row, some 50 µs, so
// this bounds the replay at a few tens of milliseconds for the stores that
// open from a snapshot. A variable so tests can lower it.
var snapshotReplayFloor = 256

const (
	snapshotMagic = "ENGRAMIX"
	// 2: the bad rows follow the index; 3: mappable vector matrices; 4:
	// sections with checksums of their own (binenc.Sections), read in parallel;
	// 5: BM25's postings and term lists mapped like the vector matrices;
	// 6: the vectors' sign sketches; 7: the episode fields, the BM25 length
	// weights and the context options; 8: the float32 matrices checked by
	// blocks as they are used.
	snapshotFormat  = 8
	snapshotSetting = "snapshot" // settings key: JSON snapshotStamp
	snapshotSuffix  = ".idx"
)

// snapshotStamp is what the database records about the snapshot it trusts.
type snapshotStamp struct {
	Token string `json:"token"`
	Seq   int64  `json:"seq"`
}

// snapshotHeader is the start of a snapshot file.
type snapshotHeader struct {
	Magic  string
	Format uint32
	Schema uint32
	Seq    int64
	Token  string
	Stem   bool
	Stop   bool
	Params bm25.Params
}

func writeHeader(w *binenc.Writer, h snapshotHeader) {
	w.String(h.Magic)
	w.Uint32(h.Format)
	w.Uint32(h.Schema)
	w.Int64(h.Seq)
	w.String(h.Token)
	w.Bool(h.Stem)
	w.Bool(h.Stop)
	bm25.WriteParams(w, h.Params)
}

// SnapshotPath is the snapshot file of the store at path.
func SnapshotPath(path string) string { return path + snapshotSuffix }

// snapshotHeaderFor is the header a snapshot of the index at seq must carry.
func (m *Mirror) snapshotHeaderFor(seq int64, token string) snapshotHeader {
	o := m.ix.Tokenizer().Options()
	return snapshotHeader{
		Magic: snapshotMagic, Format: snapshotFormat, Schema: store.SchemaVersion,
		Seq: seq, Token: token, Stem: o.Stem, Stop: o.Stopwords, Params: m.params,
	}
}

// loadSnapshot replaces the empty index with the snapshot's when the
// snapshot can be trusted, and reports whether it did. Every reason not to use
// it is logged at debug level; none is an error.
func (m *Mirror) loadSnapshot(ctx context.Context) bool {
	path := SnapshotPath(m.st.Path())
	start := time.Now()
	seq, err := m.readSnapshot(ctx, path)
	if err != nil {
		if !errors.Is(err, os.ErrNotExist) {
			m.log.Debug("index snapshot not used; rebuilding from the database", "path", path, "reason", err)
		}
		return false
	}
	m.log.Debug("index snapshot loaded", "path", path, "seq", seq, "memories", m.ix.Len(), "took", time.Since(start))
	return true
}

// readSnapshot validates and loads the snapshot at path into m.ix and m.seq.
func (m *Mirror) readSnapshot(ctx context.Context, path string) (int64, error) {
	raw, ok, err := m.st.Setting(ctx, snapshotSetting)
	if err != nil {
		return 0, err
	}
	if !ok {
		return 0, fmt.Errorf("the database records no snapshot: %w", os.ErrNotExist)
	}
	var stamp snapshotStamp
	if err := json.Unmarshal([]byte(raw), &stamp); err != nil {
		return 0, fmt.Errorf("snapshot setting %q: %w", raw, err)
	}
	last, err := m.st.LastSeq(ctx)
	if err != nil {
		return 0, err
	}
	if stamp.Seq > last {
		return 0, fmt.Errorf("snapshot seq %d is ahead of the database's %d", stamp.Seq, last)
	}
	f, err := os.Open(path)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	// The large arrays are used from a mapping of the file: only under a
	// lease, which lets no other process truncate or rewrite the file under
	// it (mmap.Lease). Without one they are read into memory.
	lease, err := mmap.NewLease(f, &m.mu, func(err error) { m.snapshotYielded(path, err) })
	if err != nil {
		m.log.Debug("index snapshot read into memory, not mapped", "path", path, "reason", err)
	} else {
		defer lease.Close()
	}
	fi, err := f.Stat()
	if err != nil {
		return 0, err
	}
	// The header first, as a plain stream: its fields come first in every
	// format, so a snapshot of another format is named as such. A few
	// hundred bytes: read through a buffer of that order, not binenc's
	// megabyte (read and faulted in on every open).
	h := readHeaderFields(binenc.NewReaderSize(f, fi.Size(), 4096))
	want := m.snapshotHeaderFor(stamp.Seq, stamp.Token)
	if h.Format != want.Format && h.Magic == snapshotMagic {
		return 0, headerMismatch(h, want)
	}
	secs, err := binenc.OpenSections(f, fi.Size())
	if err != nil {
		return 0, err
	}
	if lease != nil {
		secs.SetMapper(lease.Mapper()) // the vector matrices are mapped, not read (vector/snapshot.go)
		// The sections are decoded from a mapping of the whole file, not copied
		// out of it, and it is unmapped once read (nothing decoded aliases it):
		// where mapping is not supported they are read.
		if view, err := lease.View(int(fi.Size())); err == nil {
			defer view.Close()
			secs.SetView(view.Bytes())
		}
	}
	hr := secs.Next()
	h = readHeaderFields(hr)
	if err := hr.Verify(); err != nil {
		return 0, fmt.Errorf("header: %w", err)
	}
	if err := headerMismatch(h, want); err != nil {
		return 0, err
	}
	ix, err := index.ReadSnapshot(secs, m.tok, m.params, m.opts.Context, m.opts.ANN)
	if err != nil {
		return 0, err
	}
	br := secs.Next()
	bad := readBadRows(br)
	if err := br.Verify(); err != nil {
		return 0, fmt.Errorf("bad rows: %w", err)
	}
	if err := secs.Done(); err != nil {
		return 0, err
	}
	m.badMu.Lock()
	for _, b := range bad {
		m.bad[b.Key()] = b
	}
	m.badMu.Unlock()
	m.mu.Lock()
	m.ix, m.seq = ix, h.Seq
	m.mu.Unlock()
	return h.Seq, nil
}

// snapshotYielded is told that another process opened the snapshot file at
// path to change it, or truncated it, and that the index's arrays mapped from
// it are this process's own now (err nil): the index is as it was, and the
// file no longer counts as this index's snapshot, so the next
// MaybeWriteSnapshot writes a new one. When they could not all be copied
// (err: the kernel gave up waiting, and the file changed first) the index
// may no longer be read: it is loaded again, from the rows, by the next read.
func (m *Mirror) snapshotYielded(path string, err error) {
	m.mu.Lock()
	m.snapSeq = -1
	m.mu.Unlock()
	if err == nil {
		m.log.Warn("another process changed the index snapshot file; this process keeps its index in its own memory and will write a new snapshot", "path", path)
		return
	}
	m.log.Error("another process changed the index snapshot file before this process could copy it; the index is rebuilt from the database", "path", path, "err", err)
	m.syncMu.Lock()
	m.loaded.Store(false)
	m.syncMu.Unlock()
}

// rebuildCorrupt replaces ix, an index loaded from the snapshot whose vector
// rows failed their checksum when first read (cause), with one rebuilt from
// the database, as a snapshot that fails at load is; this process reads no
// snapshot again, and the rebuild writes a new one where it may. Concurrent
// callers with the same ix rebuild it once: the first unloads the mirror,
// and every one then waits in Load for the rebuilt index.
func (m *Mirror) rebuildCorrupt(ctx context.Context, ix *index.Index, cause error) error {
	if m.st == nil {
		return fmt.Errorf("index of a fork: %w", cause) // nothing to rebuild it from
	}
	m.syncMu.Lock()
	m.mu.Lock()
	if m.ix == ix && m.loaded.Load() {
		m.distrust.Store(true)
		m.snapSeq = -1
		m.loaded.Store(false)
		m.log.Error("index snapshot failed a checksum after it was loaded; rebuilding the index from the database", "path", SnapshotPath(m.st.Path()), "err", cause)
	}
	m.mu.Unlock()
	m.syncMu.Unlock()
	return m.Load(ctx)
}

// readHeaderFields reads a header; errors stay in r.
func readHeaderFields(r *binenc.Reader) snapshotHeader {
	var h snapshotHeader
	h.Magic = r.String()
	if r.Err() == nil && h.Magic != snapshotMagic {
		r.Corruptf("not an engram index snapshot")
		return h
	}
	h.Format = r.Uint32()
	h.Schema = r.Uint32()
	h.Seq = r.Int64()
	h.Token = r.String()
	h.Stem = r.Bool()
	h.Stop = r.Bool()
	h.Params = bm25.ReadParams(r)
	return h
}

// headerMismatch says why a snapshot's header h is not the one wanted.
func headerMismatch(h, want snapshotHeader) error {
	switch {
	case h.Format != want.Format:
		return fmt.Errorf("snapshot format %d, this build reads %d", h.Format, want.Format)
	case h.Schema != want.Schema:
		return fmt.Errorf("snapshot of schema %d, the store has %d", h.Schema, want.Schema)
	case h.Token != want.Token:
		return fmt.Errorf("snapshot token %q is not the database's %q (written by another copy of the file)", h.Token, want.Token)
	case h.Seq != want.Seq:
		return fmt.Errorf("snapshot seq %d, the database recorded %d", h.Seq, want.Seq)
	case h.Stem != want.Stem || h.Stop != want.Stop:
		return fmt.Errorf("snapshot built with other tokenizer options")
	case !bm25.SameParams(h.Params, want.Params):
		return fmt.Errorf("snapshot built with other BM25 parameters")
	}
	return nil
}

// MaybeWriteSnapshot writes a snapshot when it pays: a store of
// SnapshotMinMemories or more that has none in effect (a full rebuild at
// Load, or a store that grew past the size since), or one whose snapshot is
// more than max(1% of the memories, snapshotReplayFloor) changes behind.
// Load calls it, and the store's owner should before closing it; an index
// never loaded has nothing to write. Failure is logged, never returned: the
// snapshot is only an accelerator.
func (m *Mirror) MaybeWriteSnapshot(ctx context.Context) {
	if m.st == nil || !m.loaded.Load() || m.st.ReadOnly() {
		return // a fork, nothing loaded, or a file this process may not change
	}
	min := m.opts.SnapshotMinMemories
	if m.opts.NoSnapshot || min < 0 {
		return
	}
	if min == 0 {
		min = DefaultSnapshotMinMemories
	}
	m.mu.RLock()
	n, seq, snap := m.ix.Len(), m.seq, m.snapSeq
	m.mu.RUnlock()
	if m.gw.snapshotDue.Load() && n >= min {
		// A graph was built that no snapshot holds: write it, so the next
		// open reads the graph instead of building it again.
	} else if snap >= 0 {
		// Sequence numbers may skip, so this counts changes at most once each.
		if behind := seq - snap; behind <= int64(max(n/100, snapshotReplayFloor)) {
			return
		}
	} else if n < min {
		return
	}
	start := time.Now()
	size, err := m.WriteSnapshot(ctx)
	if err != nil {
		m.log.Debug("index snapshot not written", "reason", err)
		return
	}
	m.log.Debug("index snapshot written", "path", SnapshotPath(m.st.Path()), "bytes", size, "memories", n, "took", time.Since(start))
}

// WriteSnapshot writes the index as it is now to the store's snapshot file
// (SnapshotPath) atomically, records it in the database, and returns the
// file's size. MaybeWriteSnapshot calls it when it pays; callers may force
// one, for example before handing a large store to many short-lived processes.
func (m *Mirror) WriteSnapshot(ctx context.Context) (int64, error) {
	if m.st == nil {
		return 0, errors.New("write snapshot: a fork has no store")
	}
	if err := m.Load(ctx); err != nil {
		return 0, err
	}
	var tok [16]byte
	if _, err := rand.Read(tok[:]); err != nil {
		return 0, fmt.Errorf("snapshot token: %w", err)
	}
	token := hex.EncodeToString(tok[:])
	if m.st.ReadOnly() {
		return 0, fmt.Errorf("write snapshot: %w", store.ErrReadOnly)
	}
	path := SnapshotPath(m.st.Path())
	removeStaleTemps(path, time.Now())
	perm := os.FileMode(0o644)
	if fi, err := os.Stat(m.st.Path()); err == nil {
		perm = fi.Mode().Perm()
	}
	f, err := os.CreateTemp(filepath.Dir(path), filepath.Base(path)+tempInfix+"*")
	if err != nil {
		return 0, fmt.Errorf("write snapshot: %w", err)
	}
	tmp := f.Name()
	// due: this snapshot holds the graphs installed so far (restored if it
	// is not written after all).
	var due bool
	fail := func(err error) (int64, error) {
		f.Close()
		os.Remove(tmp)
		if due {
			m.gw.snapshotDue.Store(true)
		}
		return 0, fmt.Errorf("write snapshot %s: %w", path, err)
	}
	// Hold the read lock while encoding: the snapshot is exactly the index at seq.
	m.mu.RLock()
	due = m.gw.snapshotDue.Swap(false)
	seq := m.seq
	w := binenc.NewWriter(f)
	writeHeader(w, m.snapshotHeaderFor(seq, token))
	w.EndSection()
	m.ix.WriteSnapshot(w)
	writeBadRows(w, m.BadRows())
	w.EndSection()
	err = w.FinishSections()
	m.mu.RUnlock()
	size := w.Len()
	if err != nil {
		return fail(err)
	}
	if err := f.Chmod(perm); err != nil {
		return fail(err)
	}
	if err := f.Sync(); err != nil {
		return fail(err)
	}
	if err := f.Close(); err != nil {
		os.Remove(tmp)
		tmp = ""
		return fail(err)
	}
	if err := os.Rename(tmp, path); err != nil {
		return fail(err)
	}
	syncDir(filepath.Dir(path))
	// Only now does the database vouch for the file. A crash before this line
	// leaves a file whose token the database does not know: it is rebuilt.
	stamp, _ := json.Marshal(snapshotStamp{Token: token, Seq: seq})
	if err := m.st.SetSetting(ctx, snapshotSetting, string(stamp)); err != nil {
		if due {
			m.gw.snapshotDue.Store(true)
		}
		return 0, fmt.Errorf("record snapshot: %w", err)
	}
	m.mu.Lock()
	m.snapSeq = seq
	m.mu.Unlock()
	return size, nil
}

// tempInfix names a snapshot being written: PATH.idx.tmpNNNN until it is
// renamed into place.
const tempInfix = ".tmp"

// staleTempAge is how long after its last write a snapshot temp file is taken
// for the leftover of a writer that died (SIGKILL, power loss) rather than one
// still writing, which rewrites its file continuously.
const staleTempAge = 15 * time.Minute

// removeStaleTemps deletes the leftovers of snapshot writes that never
// finished next to snapshot path: temp files untouched for staleTempAge. A
// 100k-memory store's is about 400 MB, so they must not pile up.
func removeStaleTemps(path string, now time.Time) {
	matches, _ := filepath.Glob(path + tempInfix + "*")
	for _, p := range matches {
		if fi, err := os.Lstat(p); err == nil && fi.Mode().IsRegular() && now.Sub(fi.ModTime()) > staleTempAge {
			os.Remove(p)
		}
	}
}

// writeBadRows records the rows the index left out or read in part, so that
// a store opened from the snapshot still reports them.
func writeBadRows(w *binenc.Writer, bad []store.BadRow) {
	w.Uint64(uint64(len(bad)))
	for _, b := range bad {
		w.String(b.ID)
		w.String(b.Scope)
		w.String(b.Problem)
		w.Bool(b.Skipped)
	}
}

func readBadRows(r *binenc.Reader) []store.BadRow {
	n := r.Count(3*8 + 4)
	out := make([]store.BadRow, 0, n)
	for range n {
		b := store.BadRow{ID: r.String(), Scope: r.String(), Problem: r.String(), Skipped: r.Bool()}
		if r.Err() != nil {
			return nil
		}
		out = append(out, b)
	}
	return out
}

// syncDir makes a rename in dir durable where the platform allows it.
func syncDir(dir string) {
	if d, err := os.Open(dir); err == nil {
		d.Sync()
		d.Close()
	}
}
