package httpapi

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/engram-memory/engram"
	"github.com/engram-memory/engram/backend/sqlite"
	"github.com/engram-memory/engram/internal/binenc"
	"github.com/engram-memory/engram/internal/synth"
	"github.com/engram-memory/engram/memory"
)

// chaosStore writes a store of n synthetic memories, split between teams a
// and b, with its snapshot beside it, and returns its path.
func chaosStore(t *testing.T, dir string, corpus *synth.Corpus, n int) string {
	t.Helper()
	path := filepath.Join(dir, "store.db")
	db, err := engram.Open(context.Background(), path, engram.Options{Embedder: corpus.Embedder()})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	const batch = 1000
	for lo := 0; lo < n; lo += batch {
		var ms []*memory.Memory
		for i := lo; i < min(lo+batch, n); i++ {
			m := corpus.Memory(i)
			m.Scope = map[string]string{"team": string(rune('a' + i%2))}
			ms = append(ms, m)
		}
		if _, err := db.Add(context.Background(), ms...); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := db.Backend().(*sqlite.Backend).WriteSnapshot(context.Background()); err != nil {
		t.Fatal(err)
	}
	return path
}

// copyStore copies the store at src (closed, so its file is whole) and its
// snapshot into dir.
func copyStore(t *testing.T, src, dir string) string {
	t.Helper()
	dst := filepath.Join(dir, "store.db")
	for _, suffix := range []string{"", ".idx"} {
		b, err := os.ReadFile(src + suffix)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(dst+suffix, b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dst
}

// TestChaosSnapshot: a server under search and write load while another
// hand changes the snapshot file its index is mapped from (truncated,
// overwritten in place with another store's snapshot, random bytes written
// over it) keeps answering, every result inside the caller's scope; it
// answers as a store rebuilt from its rows does, and so does the next open.
// Before the snapshot was leased, the truncations crashed the process
// (SIGBUS) and the rewrites handed searches unchecked bytes.
func TestChaosSnapshot(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("the snapshot is mapped on Linux only")
	}
	// Arrays from 64 KiB are mapped, so that a small store's BM25 postings
	// are mapped as a large store's are.
	defer func(was int) { binenc.MapMin = was }(binenc.MapMin)
	binenc.MapMin = 64 << 10
	corpus := synth.New(synth.Config{Seed: 7, Dim: 384, Vocab: 20000, Topics: 40})
	const n = 6000
	pristine := chaosStore(t, t.TempDir(), corpus, n)
	otherIdx := chaosStore(t, t.TempDir(), synth.New(synth.Config{Seed: 8, Dim: 384, Vocab: 20000, Topics: 40}), 3000) + ".idx"

	attacks := []struct {
		name string
		do   func(idx string) error
	}{
		{"truncate", func(idx string) error { return os.Truncate(idx, 1_000_000) }},
		{"truncate to nothing", func(idx string) error { return os.Truncate(idx, 0) }},
		{"cp another store's snapshot over it", func(idx string) error {
			if out, err := exec.Command("cp", otherIdx, idx).CombinedOutput(); err != nil {
				return fmt.Errorf("%v: %s", err, out)
			}
			return nil
		}},
		{"random bytes in place", func(idx string) error {
			f, err := os.OpenFile(idx, os.O_WRONLY, 0)
			if err != nil {
				return err
			}
			defer f.Close()
			fi, err := f.Stat()
			if err != nil {
				return err
			}
			_, err = io.CopyN(f, rand.Reader, fi.Size())
			return err
		}},
	}
	queries := make([]string, 12)
	for i := range queries {
		queries[i], _ = corpus.Query(i, n)
	}
	for _, a := range attacks {
		t.Run(a.name, func(t *testing.T) {
			path := copyStore(t, pristine, t.TempDir())
			var logged lockedBuffer
			logger := slog.New(slog.NewTextHandler(&logged, &slog.HandlerOptions{Level: slog.LevelWarn}))
			db, err := engram.Open(context.Background(), path, engram.Options{Embedder: corpus.Embedder(), Logger: logger})
			if err != nil {
				t.Fatal(err)
			}
			defer db.Close()
			if _, err := db.Search(context.Background(), memory.Query{Query: queries[0], NoRecord: true}); err != nil {
				t.Fatal(err)
			}
			f := db.Backend().(*sqlite.Backend).Footprint()
			if f.BM25Mapped == 0 || f.VectorsMapped == 0 {
				t.Fatalf("the index is not mapped from the snapshot (BM25 %d B, vectors %d B mapped): the test would prove nothing", f.BM25Mapped, f.VectorsMapped)
			}
			_, ts := startServer(t, db, Config{Keys: testKeys})
			c, base := ts.Client(), ts.URL

			// Load: two searchers and one writer per key until stopped,
			// every answer checked. Searches record no use, whose boost
			// decays with the clock: the answers below are compared exactly.
			var stop atomic.Bool
			var done atomic.Int64
			var wg sync.WaitGroup
			var mu sync.Mutex
			var failures []string
			fail := func(format string, args ...any) {
				mu.Lock()
				if len(failures) < 20 {
					failures = append(failures, fmt.Sprintf(format, args...))
				}
				mu.Unlock()
			}
			for _, k := range []struct{ key, team string }{{keyA, "a"}, {keyB, "b"}} {
				for s := range 2 {
					wg.Go(func() {
						for i := s; !stop.Load(); i += 2 {
							var res memory.Response
							r, err := send(c, base, "POST", "/v1/search", k.key, map[string]any{"query": queries[i%len(queries)], "limit": 10, "no_record": true})
							if err != nil {
								fail("search: %v", err)
								return
							}
							if r.status != http.StatusOK {
								fail("search: %d %s", r.status, r.body)
								continue
							}
							if err := json.Unmarshal(r.body, &res); err != nil {
								fail("search: %v", err)
								continue
							}
							for _, x := range res.Results {
								if x.Scope["team"] != k.team {
									fail("key of team %s got %s of team %q", k.team, x.ID, x.Scope["team"])
								}
							}
							done.Add(1)
						}
					})
				}
				wg.Go(func() {
					for i := 0; !stop.Load(); i++ {
						m := corpus.Memory(n + i)
						r, err := send(c, base, "POST", "/v1/memories", k.key, map[string]any{"text": m.Text, "id": fmt.Sprintf("w-%s-%d", k.team, i)})
						if err != nil {
							fail("add: %v", err)
							return
						}
						if r.status != http.StatusCreated {
							fail("add: %d %s", r.status, r.body)
						}
					}
				})
			}
			waitFor := func(k int64) {
				for want := done.Load() + k; done.Load() < want && len(failures) == 0; {
					runtime.Gosched()
				}
			}
			waitFor(40)
			if err := a.do(path + ".idx"); err != nil {
				t.Fatal(err)
			}
			waitFor(80)
			stop.Store(true)
			wg.Wait()
			for _, f := range failures {
				t.Error(f)
			}
			if !strings.Contains(logged.String(), "another process changed the index snapshot file; this process keeps its index in its own memory") {
				t.Errorf("the break was not answered as it should be; the log says: %q", logged.String())
			}

			// The live index answers as a rebuild from the rows does, in both
			// scopes; so does the next open, whatever the file holds now.
			live := chaosAnswers(t, db, queries)
			if err := db.Close(); err != nil {
				t.Fatal(err)
			}
			for _, opts := range []engram.Options{{SQLite: sqlite.Options{NoSnapshot: true}}, {}} {
				opts.Embedder = corpus.Embedder()
				again, err := engram.Open(context.Background(), path, opts)
				if err != nil {
					t.Fatal(err)
				}
				if got := chaosAnswers(t, again, queries); !slices.Equal(got, live) {
					t.Errorf("NoSnapshot %v: answers differ from the live index's:\n got %v\nwant %v", opts.SQLite.NoSnapshot, got, live)
				}
				again.Close()
			}
		})
	}
}

// lockedBuffer is a bytes.Buffer for a logger that goroutines share.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// chaosAnswers is the ids each query finds in each team, as one list.
func chaosAnswers(t *testing.T, db *engram.DB, queries []string) []string {
	t.Helper()
	var out []string
	for _, team := range []string{"a", "b"} {
		for _, q := range queries {
			res, err := db.Search(context.Background(), memory.Query{Query: q, Limit: 5, NoRecord: true, Filter: memory.Filter{Scope: map[string]string{"team": team}}})
			if err != nil {
				t.Fatal(err)
			}
			out = append(out, "|")
			for _, r := range res.Results {
				out = append(out, r.ID)
			}
		}
	}
	return out
}
