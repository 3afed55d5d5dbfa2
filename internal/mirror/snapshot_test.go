package mirror_test

// The snapshot through the whole engine: a DB opened from a snapshot answers
// every search as one rebuilt from the rows, after other handles changed the
// store too, and a snapshot that cannot be trusted is never used. (These
// tests lived in the root package with the snapshot code.)

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"github.com/engram-memory/engram/backend/sqlite"
	"log/slog"
	"math/rand"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/engram-memory/engram"
	"github.com/engram-memory/engram/internal/binenc"
	"github.com/engram-memory/engram/internal/index"
	"github.com/engram-memory/engram/internal/mirror"
	"github.com/engram-memory/engram/internal/store"
	"github.com/engram-memory/engram/internal/synth"
)

type (
	DB = engram.DB
	// Options are the SQLite index's, which these tests vary.
	Options  = sqlite.Options
	Memory   = engram.Memory
	Query    = engram.Query
	Response = engram.Response
	Result   = engram.Result
	Patch    = engram.Patch
)

var SnapshotPath = sqlite.SnapshotPath

// Open opens path with the SQLite options opts and the default embedder.
func Open(ctx context.Context, path string, opts Options) (*DB, error) {
	return engram.Open(ctx, path, engram.Options{SQLite: opts})
}

// logBuf collects a DB's debug log so tests can see whether a snapshot was used.
type logBuf struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (l *logBuf) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.Write(p)
}

func (l *logBuf) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.String()
}

var snapWords = strings.Fields("deploy cache mysql user token rollback kafka schema index vector query latency " +
	"backup restore theme dark preference meeting budget invoice python golang rust release bug crash memory")

func snapMemory(r *rand.Rand, i int) *Memory {
	text := make([]string, 4+r.Intn(8))
	for j := range text {
		text[j] = snapWords[r.Intn(len(snapWords))]
	}
	m := &Memory{
		Name: fmt.Sprintf("note %d", i), Text: strings.Join(text, " "),
		Type: []string{"fact", "note", "event"}[r.Intn(3)], Scene: []string{"", "work", "home"}[r.Intn(3)],
		Scope: map[string]string{"team": []string{"t1", "t2"}[r.Intn(2)]}, Tags: []string{[]string{"a", "b", "c"}[r.Intn(3)]},
	}
	return m
}

// openSnap opens path with a small snapshot threshold and a debug log, and
// loads its index (as a first search would: the index is built on first need).
func openSnap(t testing.TB, path string, opts Options) (*DB, *logBuf) {
	t.Helper()
	return openEngine(t, path, engram.Options{SQLite: opts})
}

// openEngine is openSnap with the engine's options.
func openEngine(t testing.TB, path string, opts engram.Options) (*DB, *logBuf) {
	t.Helper()
	lb := &logBuf{}
	opts.Logger = slog.New(slog.NewTextHandler(lb, &slog.HandlerOptions{Level: slog.LevelDebug}))
	if opts.SQLite.SnapshotMinMemories == 0 {
		opts.SQLite.SnapshotMinMemories = 100
	}
	db, err := engram.Open(context.Background(), path, opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	if err := db.Warm(context.Background()); err != nil {
		t.Fatal(err)
	}
	return db, lb
}

// snapStore makes a store of n memories, and a snapshot of it.
func snapStore(t testing.TB, n int) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "s.db")
	db, lb := openSnap(t, path, Options{})
	r := rand.New(rand.NewSource(1))
	var mems []*Memory
	for i := range n {
		mems = append(mems, snapMemory(r, i))
	}
	if _, err := db.Add(context.Background(), mems...); err != nil {
		t.Fatal(err)
	}
	db.Close() // the store grew past the threshold with no snapshot: Close writes one
	if !strings.Contains(lb.String(), "index snapshot written") {
		t.Fatalf("no snapshot written:\n%s", lb)
	}
	return path
}

// answers runs a fixed set of random searches and returns them as JSON,
// timings left out.
func answers(t testing.TB, db *DB) []string {
	t.Helper()
	out, err := answersOf(db)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// answersOf is answers for any goroutine: it returns the first error.
func answersOf(db *DB) ([]string, error) {
	r := rand.New(rand.NewSource(42))
	var out []string
	for i := range 90 {
		q := Query{Query: snapWords[r.Intn(len(snapWords))] + " " + snapWords[r.Intn(len(snapWords))],
			Mode: []string{"bm25", "vector", "hybrid"}[i%3], Limit: 5 + r.Intn(10), NoRecord: true}
		switch r.Intn(4) {
		case 1:
			q.Scope = map[string]string{"team": "t2"}
		case 2:
			q.Type, q.Tags = "fact", []string{"b"}
		case 3:
			q.Scene = "work"
		}
		resp, err := db.Search(context.Background(), q)
		if err != nil {
			return nil, err
		}
		resp.TimingsMS = nil
		b, _ := json.Marshal(resp)
		out = append(out, string(b))
	}
	return out, nil
}

// sameAnswers compares responses exactly, except that the order among
// results of equal leg score may differ: the legs break ties by document
// number, which depends on the order memories entered the index (after a
// replay, and even between two rebuilds, whose tokenizing goroutines finish
// batches in any order).
// Scores must be equal rank by rank, and every result present in both must
// be equal in every field but its leg ranks.
func sameAnswers(t testing.TB, got, want []string, tiesMayDiffer bool) {
	t.Helper()
	for i := range want {
		if got[i] == want[i] {
			continue
		}
		if !tiesMayDiffer || !equalModuloTies(got[i], want[i]) {
			t.Fatalf("query %d differs:\nsnapshot %s\nrebuilt  %s", i, got[i], want[i])
		}
	}
}

func equalModuloTies(a, b string) bool {
	var ra, rb Response
	if json.Unmarshal([]byte(a), &ra) != nil || json.Unmarshal([]byte(b), &rb) != nil || len(ra.Results) != len(rb.Results) {
		return false
	}
	strip := func(r Result) string {
		if e := r.Explain; e != nil {
			if e.BM25 != nil {
				e.BM25.Rank = 0
			}
			if e.Vector != nil {
				e.Vector.Rank = 0
			}
		}
		out, _ := json.Marshal(r)
		return string(out)
	}
	byID := map[string]string{}
	for i, r := range rb.Results {
		if r.Score != ra.Results[i].Score {
			return false
		}
		byID[r.ID] = strip(r)
	}
	for _, r := range ra.Results {
		if s, ok := byID[r.ID]; ok && s != strip(r) {
			return false
		}
	}
	ra.Results, rb.Results = nil, nil
	x, _ := json.Marshal(ra)
	y, _ := json.Marshal(rb)
	return bytes.Equal(x, y)
}

func TestSnapshotEquivalence(t *testing.T) {
	ctx := context.Background()
	path := snapStore(t, 600)
	// Straight after the snapshot, the answers are those of a rebuild.
	first, lb0 := openSnap(t, path, Options{SnapshotMinMemories: -1})
	if !strings.Contains(lb0.String(), "index snapshot loaded") {
		t.Fatalf("snapshot not loaded:\n%s", lb0)
	}
	base, _ := openSnap(t, path, Options{NoSnapshot: true})
	sameAnswers(t, answers(t, first), answers(t, base), true)
	first.Close()
	base.Close()

	// Another handle changes the store after the snapshot.
	other, _ := openSnap(t, path, Options{NoSnapshot: true})
	r := rand.New(rand.NewSource(3))
	var fresh []*Memory
	for i := range 40 {
		fresh = append(fresh, snapMemory(r, 1000+i))
	}
	if _, err := other.Add(ctx, fresh...); err != nil {
		t.Fatal(err)
	}
	ids := firstIDs(t, other, 90)
	for i, id := range ids {
		var err error
		switch i % 3 {
		case 0:
			_, err = other.Delete(ctx, id)
		case 1:
			text := "rollback kafka deploy " + id
			_, err = other.Update(ctx, id, Patch{Text: &text, Scope: &map[string]string{"team": "t2"}})
		default:
			_, err = other.Favorite(ctx, id, true)
		}
		if err != nil {
			t.Fatal(err)
		}
	}

	snap, lb := openSnap(t, path, Options{SnapshotMinMemories: -1})
	if !strings.Contains(lb.String(), "index snapshot loaded") {
		t.Fatalf("snapshot not loaded:\n%s", lb)
	}
	rebuilt, _ := openSnap(t, path, Options{NoSnapshot: true})
	if snap.Count() != rebuilt.Count() {
		t.Fatalf("count %d, rebuilt %d", snap.Count(), rebuilt.Count())
	}
	sameAnswers(t, answers(t, snap), answers(t, rebuilt), true)
}

func TestSnapshotRewrittenAfterLongReplay(t *testing.T) {
	defer mirror.SetReplayFloor(10)()
	path := snapStore(t, 300)
	other, _ := openSnap(t, path, Options{NoSnapshot: true})
	r := rand.New(rand.NewSource(4))
	for i := range 40 { // more than 10% of 300
		if _, err := other.Add(context.Background(), snapMemory(r, i)); err != nil {
			t.Fatal(err)
		}
	}
	_, lb := openSnap(t, path, Options{})
	if log := lb.String(); !strings.Contains(log, "index snapshot loaded") || !strings.Contains(log, "index snapshot written") {
		t.Fatalf("want a load then a rewrite:\n%s", log)
	}
	_, lb = openSnap(t, path, Options{})
	if log := lb.String(); !strings.Contains(log, "index snapshot loaded") || strings.Contains(log, "index snapshot written") {
		t.Fatalf("want a load and no rewrite:\n%s", log)
	}
}

func TestSnapshotNeverTrusted(t *testing.T) {
	ctx := context.Background()
	cases := []struct {
		name   string
		spoil  func(t *testing.T, path string, st *store.Store)
		opts   Options
		reason string
	}{
		{"truncated", func(t *testing.T, path string, _ *store.Store) {
			fi, _ := os.Stat(SnapshotPath(path))
			if err := os.Truncate(SnapshotPath(path), fi.Size()/2); err != nil {
				t.Fatal(err)
			}
		}, Options{}, "corrupt"},
		{"flipped byte", func(t *testing.T, path string, _ *store.Store) {
			b, _ := os.ReadFile(SnapshotPath(path))
			// Among the int8 codes, which are checked at load (the float32
			// rows before them are checked as read: TestSnapshotMappedVectors).
			b[len(b)*5/6] ^= 0x10
			os.WriteFile(SnapshotPath(path), b, 0o644)
		}, Options{}, "checksum"},
		{"older format", func(t *testing.T, path string, _ *store.Store) {
			// The header's format field, after the magic string (its
			// 8-byte length, then 8 bytes): a format-3 file, one stream.
			spoilSnapshot(t, path, func(b []byte) { binary.LittleEndian.PutUint32(b[16:], 3) })
		}, Options{}, "snapshot format 3, this build reads 8"},
		{"previous format", func(t *testing.T, path string, _ *store.Store) {
			// Format 7: sections as now, each model's float32 rows checked
			// with the rest of its vectors.
			spoilSnapshot(t, path, func(b []byte) { binary.LittleEndian.PutUint32(b[16:], 7) })
		}, Options{}, "snapshot format 7, this build reads 8"},
		{"flipped byte in the header", func(t *testing.T, path string, _ *store.Store) {
			spoilSnapshot(t, path, func(b []byte) { b[30] ^= 0x01 })
		}, Options{}, "header"},
		{"flipped byte in every section", func(t *testing.T, path string, _ *store.Store) {
			spoilSnapshot(t, path, func(b []byte) {
				spans, err := binenc.Spans(b)
				if err != nil {
					t.Fatal(err)
				}
				for _, sp := range spans {
					b[sp[0]+sp[1]/2] ^= 0x04
				}
			})
		}, Options{}, "checksum"},
		{"flipped byte in the bad rows", func(t *testing.T, path string, _ *store.Store) {
			spoilSnapshot(t, path, func(b []byte) {
				spans, err := binenc.Spans(b)
				if err != nil {
					t.Fatal(err)
				}
				last := spans[len(spans)-1]
				b[last[0]] ^= 0x01
			})
		}, Options{}, "bad rows"},
		{"table of sections cut", func(t *testing.T, path string, _ *store.Store) {
			fi, _ := os.Stat(SnapshotPath(path))
			if err := os.Truncate(SnapshotPath(path), fi.Size()-3); err != nil {
				t.Fatal(err)
			}
		}, Options{}, "table of sections"},
		{"wrong token", func(t *testing.T, path string, st *store.Store) {
			// As if the database were restored from a copy that recorded an
			// earlier snapshot.
			st.SetSetting(ctx, mirror.SnapshotSetting, `{"token":"00112233445566778899aabbccddeeff","seq":1}`)
		}, Options{}, "token"},
		{"no record", func(t *testing.T, path string, st *store.Store) {
			st.SetSetting(ctx, mirror.SnapshotSetting, "")
		}, Options{}, ""},
		{"seq ahead", func(t *testing.T, path string, st *store.Store) {
			raw, _, _ := st.Setting(ctx, mirror.SnapshotSetting)
			var s mirror.SnapshotStamp
			json.Unmarshal([]byte(raw), &s)
			s.Seq += 1000
			b, _ := json.Marshal(s)
			st.SetSetting(ctx, mirror.SnapshotSetting, string(b))
		}, Options{}, "ahead"},
		{"other tokenizer", func(*testing.T, string, *store.Store) {}, Options{NoStem: true}, "tokenizer"},
		{"other bm25", func(*testing.T, string, *store.Store) {}, Options{K1: 2}, "BM25"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			path := snapStore(t, 200)
			handle, err := store.Open(ctx, path)
			if err != nil {
				t.Fatal(err)
			}
			c.spoil(t, path, handle)
			handle.Close()
			opts := c.opts
			opts.SnapshotMinMemories = -1
			db, lb := openSnap(t, path, opts)
			log := lb.String()
			if strings.Contains(log, "index snapshot loaded") || !strings.Contains(log, c.reason) {
				t.Fatalf("want a rebuild (%q):\n%s", c.reason, log)
			}
			ref := c.opts
			ref.NoSnapshot = true
			rebuilt, _ := openSnap(t, path, ref)
			if db.Count() != 200 {
				t.Fatalf("count %d, want 200", db.Count())
			}
			sameAnswers(t, answers(t, db), answers(t, rebuilt), true)
		})
	}
}

func TestNoSnapshotOption(t *testing.T) {
	path := filepath.Join(t.TempDir(), "n.db")
	db, _ := openSnap(t, path, Options{NoSnapshot: true})
	r := rand.New(rand.NewSource(1))
	for i := range 150 {
		if _, err := db.Add(context.Background(), snapMemory(r, i)); err != nil {
			t.Fatal(err)
		}
	}
	db.Close()
	for _, opts := range []Options{{NoSnapshot: true}, {SnapshotMinMemories: -1}, {SnapshotMinMemories: 1000}} {
		db, _ = openSnap(t, path, opts)
		db.Close()
		if _, err := os.Stat(SnapshotPath(path)); !os.IsNotExist(err) {
			t.Fatalf("options %+v wrote a snapshot (%v)", opts, err)
		}
	}
}

// firstIDs returns the first n ids of db's memories, in id order.
func firstIDs(t testing.TB, db *DB, n int) []string {
	t.Helper()
	var buf bytes.Buffer
	if err := db.Export(context.Background(), &buf); err != nil {
		t.Fatal(err)
	}
	var ids []string
	dec := json.NewDecoder(&buf)
	for len(ids) < n && dec.More() {
		var m Memory
		if err := dec.Decode(&m); err != nil {
			t.Fatal(err)
		}
		ids = append(ids, m.ID)
	}
	return ids
}

// TestSnapshotWithGraph: with the ANN threshold below the store's size the
// snapshot carries the vector graph; a store opened from it answers as one
// rebuilt from the rows and as the exact scan, and a snapshot whose graph
// section is cut short or changed is never used.
func TestSnapshotWithGraph(t *testing.T) {
	ctx := context.Background()
	const n = 200
	opts := Options{ANNMinVectors: 50}
	path := filepath.Join(t.TempDir(), "g.db")
	db, lb := openSnap(t, path, opts)
	r := rand.New(rand.NewSource(1))
	var mems []*Memory
	for i := range n {
		mems = append(mems, snapMemory(r, i))
	}
	if _, err := db.Add(ctx, mems...); err != nil {
		t.Fatal(err)
	}
	// The write took the store past the threshold: the graph is built in the
	// background, and written in a snapshot when done. Warm waits for it.
	if err := db.Warm(ctx); err != nil {
		t.Fatal(err)
	}
	db.Close()
	if !strings.Contains(lb.String(), "index snapshot written") {
		t.Fatalf("no snapshot written:\n%s", lb)
	}
	withGraph, _ := os.ReadFile(SnapshotPath(path))
	exactDB, _ := openSnap(t, path, Options{ANNMinVectors: -1, NoSnapshot: true})
	exact := answers(t, exactDB)
	rebuilt, _ := openSnap(t, path, Options{ANNMinVectors: 50, NoSnapshot: true})
	sameAnswers(t, answers(t, rebuilt), exact, true)

	snap, lb := openSnap(t, path, Options{ANNMinVectors: 50, SnapshotMinMemories: -1})
	if !strings.Contains(lb.String(), "index snapshot loaded") {
		t.Fatalf("snapshot not used:\n%s", lb)
	}
	sameAnswers(t, answers(t, snap), exact, true)
	snap.Close()

	// A snapshot without a graph is smaller by the graph: it was there.
	noGraphPath := filepath.Join(t.TempDir(), "ng.db")
	ng, _ := openSnap(t, noGraphPath, Options{ANNMinVectors: -1})
	ng.Add(ctx, mems...)
	ng.Close()
	if plain, _ := os.ReadFile(SnapshotPath(noGraphPath)); len(plain)+n*8 > len(withGraph) {
		t.Fatalf("snapshot with a graph %d bytes, without %d: no graph written", len(withGraph), len(plain))
	}

	for _, c := range []struct {
		name   string
		spoil  func(b []byte) []byte
		reason string
	}{
		{"graph cut short", func(b []byte) []byte { return b[:len(b)-len(b)/10] }, "corrupt"},
		// Refused by the checksum or, before it, by a check of what the byte
		// now says (here a link past the last node): either way, corrupt.
		{"graph byte changed", func(b []byte) []byte { b[len(b)-len(b)/20] ^= 0x04; return b }, "corrupt input"},
	} {
		t.Run(c.name, func(t *testing.T) {
			b := c.spoil(bytes.Clone(withGraph))
			if err := os.WriteFile(SnapshotPath(path), b, 0o644); err != nil {
				t.Fatal(err)
			}
			db, lb := openSnap(t, path, Options{ANNMinVectors: 50, SnapshotMinMemories: -1})
			log := lb.String()
			if strings.Contains(log, "index snapshot loaded") || !strings.Contains(log, c.reason) {
				t.Fatalf("want a rebuild (%q):\n%s", c.reason, log)
			}
			sameAnswers(t, answers(t, db), exact, true)
		})
	}
}

// TestGraphBuiltInBackground: a store rebuilt from its rows past the ANN
// threshold answers at once (exactly) while its graph is built in the
// background, takes writes and searches meanwhile, and once the graph is in
// writes a snapshot that the next open reads without building it again. A
// handle closed during a build stops it cleanly.
func TestGraphBuiltInBackground(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "bg.db")
	seed, _ := openSnap(t, path, Options{SnapshotMinMemories: -1, ANNMinVectors: -1})
	r := rand.New(rand.NewSource(4))
	var mems []*Memory
	for i := range 600 {
		mems = append(mems, snapMemory(r, i))
	}
	if _, err := seed.Add(ctx, mems...); err != nil {
		t.Fatal(err)
	}
	seed.Close()
	os.Remove(SnapshotPath(path))

	lb := &logBuf{}
	opts := Options{ANNMinVectors: 200, SnapshotMinMemories: 100, Logger: slog.New(slog.NewTextHandler(lb, &slog.HandlerOptions{Level: slog.LevelDebug}))}
	db, err := Open(ctx, path, opts)
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	errs := make(chan error, 64)
	for w := range 3 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r := rand.New(rand.NewSource(int64(10 + w)))
			for i := range 15 {
				var err error
				switch w {
				case 0: // writes while the graph builds
					var res engram.AddResult
					res, err = db.Add(ctx, snapMemory(r, 1000+i))
					if err == nil && i%3 == 0 && len(res.IDs) > 0 {
						_, err = db.Delete(ctx, res.IDs[0])
					}
				default:
					_, err = db.Search(ctx, Query{Query: snapWords[r.Intn(len(snapWords))], Limit: 5})
				}
				if err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	if err := db.Warm(ctx); err != nil { // waits for the graph
		t.Fatal(err)
	}
	if !strings.Contains(lb.String(), "ANN graph built") {
		t.Fatalf("no graph built:\n%s", lb)
	}
	got := answers(t, db)
	db.Close()
	exact, _ := openSnap(t, path, Options{ANNMinVectors: -1, NoSnapshot: true})
	closeResults(t, got, answers(t, exact))

	again, lb2 := openSnap(t, path, Options{ANNMinVectors: 200, SnapshotMinMemories: -1})
	if log := lb2.String(); !strings.Contains(log, "index snapshot loaded") || strings.Contains(log, "ANN graph built") {
		t.Fatalf("want the graph read from the snapshot, not built:\n%s", log)
	}
	closeResults(t, answers(t, again), got)
	again.Close()

	// Closed mid-build: the build stops, no temp file is left, and the next
	// open builds it.
	os.Remove(SnapshotPath(path))
	early, err := Open(ctx, path, Options{ANNMinVectors: 200})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := early.Search(ctx, Query{Query: "deploy", Limit: 3}); err != nil {
		t.Fatal(err)
	}
	if err := early.Close(); err != nil {
		t.Fatal(err)
	}
	if tmps, _ := filepath.Glob(SnapshotPath(path) + ".tmp*"); len(tmps) > 0 {
		t.Fatalf("temp files left: %v", tmps)
	}
}

// closeResults checks approximate answers against exact ones: the same
// memories, all but a few, over all the queries (scores and order may differ
// a little, since the vector leg's candidates at its tail may).
func closeResults(t testing.TB, got, want []string) {
	t.Helper()
	ids := func(a string) []string {
		var r struct{ Results []struct{ ID string } }
		if err := json.Unmarshal([]byte(a), &r); err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, x := range r.Results {
			out = append(out, x.ID)
		}
		return out
	}
	same, total := 0, 0
	for i := range want {
		g := ids(got[i])
		for _, id := range ids(want[i]) {
			total++
			if slices.Contains(g, id) {
				same++
			}
		}
	}
	if total > 0 && float64(same) < 0.97*float64(total) {
		t.Fatalf("approximate answers share %d of %d results with the exact ones", same, total)
	}
}

// TestSnapshotMappedVectors covers a snapshot whose vector matrices are
// mapped rather than read (a MiB or more of them): loaded, it answers as a
// rebuild does, also after another handle's changes were replayed onto the
// mapped rows; with a byte of the matrices flipped it is never trusted.
// spoilSnapshot rewrites the snapshot of the store at path through edit.
func spoilSnapshot(t *testing.T, path string, edit func([]byte)) {
	t.Helper()
	b, err := os.ReadFile(SnapshotPath(path))
	if err != nil {
		t.Fatal(err)
	}
	edit(b)
	if err := os.WriteFile(SnapshotPath(path), b, 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestSnapshotMappedVectors(t *testing.T) {
	ctx := context.Background()
	corpus := synth.New(synth.Config{Seed: 5, Dim: 512})
	opts := func(o Options) engram.Options {
		return engram.Options{SQLite: o, Embedder: corpus.Embedder()}
	}
	path := filepath.Join(t.TempDir(), "s.db")
	db, _ := openEngine(t, path, opts(Options{}))
	r := rand.New(rand.NewSource(1))
	var mems []*Memory
	for i := range 700 { // 700 × 2 KiB of float32 rows: mapped
		mems = append(mems, snapMemory(r, i))
	}
	if _, err := db.Add(ctx, mems...); err != nil {
		t.Fatal(err)
	}
	db.Close()

	mapped := func(db *DB) int64 {
		fp, ok := db.Backend().(interface{ Footprint() index.Footprint })
		if !ok {
			t.Fatal("the SQLite backend reports no footprint")
		}
		return fp.Footprint().VectorsMapped
	}
	check := func(stage string) {
		t.Helper()
		snap, lb := openEngine(t, path, opts(Options{SnapshotMinMemories: -1}))
		if !strings.Contains(lb.String(), "index snapshot loaded") {
			t.Fatalf("%s: snapshot not loaded:\n%s", stage, lb)
		}
		if got := mapped(snap); (got > 0) != (runtime.GOOS == "linux") {
			t.Fatalf("%s: %d bytes of vectors mapped", stage, got)
		}
		rebuilt, _ := openEngine(t, path, opts(Options{NoSnapshot: true}))
		sameAnswers(t, answers(t, snap), answers(t, rebuilt), true)
		snap.Close()
		rebuilt.Close()
	}
	check("as written")

	other, _ := openEngine(t, path, opts(Options{NoSnapshot: true}))
	for i, id := range firstIDs(t, other, 90) {
		var err error
		switch i % 3 {
		case 0:
			_, err = other.Delete(ctx, id)
		case 1:
			text := "rollback kafka deploy " + id
			_, err = other.Update(ctx, id, Patch{Text: &text})
		default:
			_, err = other.Add(ctx, snapMemory(r, 2000+i))
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	other.Close()
	check("after other handles' changes")

	// A flipped byte in every 16 KiB of the float32 rows, which are checked
	// as they are first read, not at load: the load goes through, the first
	// search that reads a row finds it, and the index is rebuilt from the
	// database before anything it read is answered.
	spoilFloatRows(t, path, 700, 512)
	spoilt, lb := openEngine(t, path, opts(Options{SnapshotMinMemories: -1}))
	if log := lb.String(); !strings.Contains(log, "index snapshot loaded") {
		t.Fatalf("a flipped byte in the float32 rows: want a load:\n%s", log)
	}
	got := answers(t, spoilt)
	if log := lb.String(); !strings.Contains(log, "failed a checksum after it was loaded") {
		t.Fatalf("a flipped byte in the float32 rows: want a rebuild once read:\n%s", log)
	}
	rebuilt, _ := openEngine(t, path, opts(Options{NoSnapshot: true}))
	sameAnswers(t, got, answers(t, rebuilt), true)
}

// spoilFloatRows flips a byte in every 16 KiB of the float32 rows of the
// snapshot of path, whose one model has n rows of dim: they are the section
// before the rest of the model's vectors and the bad rows, from its first
// 64 KiB boundary (after the array's length fields and padding).
func spoilFloatRows(t *testing.T, path string, n, dim int) {
	t.Helper()
	spoilSnapshot(t, path, func(b []byte) {
		spans, err := binenc.Spans(b)
		if err != nil {
			t.Fatal(err)
		}
		sp := spans[len(spans)-3]
		start := (sp[0] + 12 + binenc.MapAlign - 1) / binenc.MapAlign * binenc.MapAlign
		end := sp[0] + sp[1] - binenc.TrailerSize
		if end-start != int64(n*dim*4) {
			t.Fatalf("the float32 rows: %d bytes at %d, want %d of %d", end-start, start, n, dim)
		}
		for at := start; at < end; at += 16 << 10 {
			b[at+100] ^= 0x10
		}
	})
}

// TestSnapshotCorruptConcurrent searches a store whose snapshot's float32
// rows are spoilt from several goroutines at once, round after round (for
// -race): the first search to read a spoilt row rebuilds the index from the
// database, the others wait for it (none sees an emptied or half-built
// index), the rebuild is logged once, and every answer equals the rebuilt
// store's.
func TestSnapshotCorruptConcurrent(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("the float32 rows are mapped, and checked as read, on Linux only")
	}
	ctx := context.Background()
	corpus := synth.New(synth.Config{Seed: 5, Dim: 512})
	opts := func(o Options) engram.Options {
		return engram.Options{SQLite: o, Embedder: corpus.Embedder()}
	}
	dir := t.TempDir()
	path := filepath.Join(dir, "s.db")
	db, _ := openEngine(t, path, opts(Options{}))
	r := rand.New(rand.NewSource(1))
	var mems []*Memory
	for i := range 700 {
		mems = append(mems, snapMemory(r, i))
	}
	if _, err := db.Add(ctx, mems...); err != nil {
		t.Fatal(err)
	}
	db.Close()
	spoilFloatRows(t, path, 700, 512)
	ref, _ := openEngine(t, copyStore(t, path), opts(Options{NoSnapshot: true}))
	want := answers(t, ref)
	for round := range 3 {
		spoilt, lb := openEngine(t, copyStore(t, path), opts(Options{SnapshotMinMemories: -1}))
		got := make([][]string, 4)
		errs := make([]error, 4)
		var wg sync.WaitGroup
		for g := range got {
			wg.Go(func() { got[g], errs[g] = answersOf(spoilt) })
		}
		wg.Wait()
		for g := range got {
			if errs[g] != nil {
				t.Fatalf("round %d, goroutine %d: %v", round, g, errs[g])
			}
			sameAnswers(t, got[g], want, true)
		}
		if n := strings.Count(lb.String(), "failed a checksum after it was loaded"); n != 1 {
			t.Fatalf("round %d: %d rebuilds logged, want 1:\n%s", round, n, lb)
		}
	}
}

// copyStore copies the store at path and its snapshot into a new folder and
// returns the copy's path.
func copyStore(t *testing.T, path string) string {
	t.Helper()
	to := filepath.Join(t.TempDir(), filepath.Base(path))
	for _, suffix := range []string{"", SnapshotPath("")} {
		b, err := os.ReadFile(path + suffix)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(to+suffix, b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return to
}
