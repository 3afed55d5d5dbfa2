package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"sync"
	"testing"
	"time"

	"github.com/engram-memory/engram/memory"
)

func testMemory(id string) *memory.Memory {
	at := time.Date(2026, 11, 30, 8, 0, 0, 123456789, time.UTC)
	return &memory.Memory{
		ID: id, Name: "n " + id, Description: "d", Text: "text of " + id, Type: "fact", Scene: "s",
		Scope: map[string]string{"team": "t1"}, Tags: []string{"a", "b"}, Source: "src",
		Metadata: []byte(`{"k":1}`), Favorite: true, CreatedAt: at, UpdatedAt: at.Add(time.Second),
		Episode: "chat " + id, Seq: 2, Speaker: "Caroline", OccurredAt: at.Add(-time.Hour), Supersedes: "old-" + id,
		Uses: 3, Demand: 1.5, DemandAt: &at, ContentHash: "h",
		Embedding: &memory.Embedding{Model: "m", Dim: 3, Vector: []float32{1, -2.5, 3e-7}},
	}
}

// get1 is the memory id names in scope, or nil.
func get1(t testing.TB, s *Store, scope map[string]string, id string) *memory.Memory {
	t.Helper()
	got, err := s.Get(context.Background(), scope, []string{id})
	if err != nil {
		t.Fatalf("Get(%s): %v", id, err)
	}
	return got[id]
}

func openTemp(t testing.TB) (*Store, string) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "e.db")
	s, err := Open(context.Background(), path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s, path
}

func TestRoundTrip(t *testing.T) {
	ctx := context.Background()
	s, _ := openTemp(t)
	want := testMemory("01A")
	plain := &memory.Memory{ID: "01B", Text: "plain", Type: "note", CreatedAt: time.Unix(0, 5).UTC(), UpdatedAt: time.Unix(0, 5).UTC()}
	first, last, err := s.Put(ctx, nil, []*memory.Memory{want, plain})
	if err != nil {
		t.Fatal(err)
	}
	if first != 1 || last != 2 {
		t.Fatalf("Put seqs = %d..%d, want 1..2", first, last)
	}
	plain.OccurredAt = plain.CreatedAt // stored without one, it occurred when it was created
	for _, w := range []*memory.Memory{want, plain} {
		got := get1(t, s, nil, w.ID)
		if !reflect.DeepEqual(got, w) {
			t.Errorf("Get(%s) =\n%+v\nwant\n%+v", w.ID, got, w)
		}
	}
	if got := get1(t, s, nil, "nope"); got != nil {
		t.Errorf("Get(nope) = %+v", got)
	}
	deleted, _, _, err := s.Delete(ctx, nil, []string{"01A", "nope"})
	if n := len(deleted); err != nil || n != 1 {
		t.Fatalf("Delete = %d, %v; want 1", n, err)
	}
	ch, err := s.Changes(ctx, 0, 100)
	if err != nil {
		t.Fatal(err)
	}
	t1 := `{"team":"t1"}`
	want3 := []Change{{1, "01A", t1, OpPut}, {2, "01B", "{}", OpPut}, {3, "01A", t1, OpDelete}}
	if !reflect.DeepEqual(ch, want3) {
		t.Errorf("Changes = %v, want %v", ch, want3)
	}
}

func TestPutIsAllOrNothing(t *testing.T) {
	ctx := context.Background()
	s, _ := openTemp(t)
	bad := testMemory("02")
	bad.Embedding.Dim = 7 // inconsistent: rejected inside the transaction
	if _, _, err := s.Put(ctx, nil, []*memory.Memory{testMemory("01"), bad}); err == nil {
		t.Fatal("Put with a bad memory succeeded")
	}
	if n, _ := s.Count(ctx); n != 0 {
		t.Fatalf("after a failed Put the store holds %d memories, want 0", n)
	}
	if seq, _ := s.LastSeq(ctx); seq != 0 {
		t.Fatalf("after a failed Put the change log is at %d, want 0", seq)
	}
}

func TestOpenErrors(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	write := func(name string, data []byte) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, data, 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	other := filepath.Join(dir, "other.db")
	db, err := sql.Open("sqlite", other)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec("CREATE TABLE x (a)"); err != nil {
		t.Fatal(err)
	}
	db.Close()
	newer := filepath.Join(dir, "newer.db")
	s, err := Open(ctx, newer)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.db.Exec(fmt.Sprintf("PRAGMA user_version = %d", SchemaVersion+1)); err != nil {
		t.Fatal(err)
	}
	s.Close()
	cases := []struct {
		name string
		path string
		want error
	}{
		{"missing directory", filepath.Join(dir, "no", "such", "e.db"), ErrBadPath},
		{"unwritable directory", "/proc/engram-test.db", ErrBadPath},
		{"directory as file", dir, ErrBadPath},
		{"not sqlite", write("text.db", []byte("hello, this is not a database at all")), ErrNotEngram},
		{"other sqlite database", other, ErrNotEngram},
		{"newer schema", newer, ErrNewerSchema},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s, err := Open(ctx, c.path)
			if err == nil {
				s.Close()
				t.Fatalf("Open(%s) succeeded", c.path)
			}
			if !errors.Is(err, c.want) {
				t.Fatalf("Open(%s) = %v, want %v", c.path, err, c.want)
			}
		})
	}
	// An empty file becomes a database.
	s, err = Open(ctx, write("empty.db", nil))
	if err != nil {
		t.Fatalf("Open(empty file) = %v", err)
	}
	s.Close()
}

// TestTwoHandles writes from two connections pools to one file at once, as two
// processes would, and checks that nothing is lost and the log is complete.
func TestTwoHandles(t *testing.T) {
	ctx := context.Background()
	a, path := openTemp(t)
	b, err := Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	var wg sync.WaitGroup
	errs := make(chan error, 2)
	for w, s := range []*Store{a, b} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < 50; i++ {
				m := testMemory(fmt.Sprintf("w%d-%03d", w, i))
				if _, _, err := s.Put(ctx, nil, []*memory.Memory{m}); err != nil {
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
	if n, _ := b.Count(ctx); n != 100 {
		t.Fatalf("count = %d, want 100", n)
	}
	ch, _ := a.Changes(ctx, 0, 1000)
	if len(ch) != 100 {
		t.Fatalf("change log has %d entries, want 100", len(ch))
	}
}

func TestSetEmbeddingsSkipsStale(t *testing.T) {
	ctx := context.Background()
	s, _ := openTemp(t)
	m := testMemory("01")
	if _, _, err := s.Put(ctx, nil, []*memory.Memory{m}); err != nil {
		t.Fatal(err)
	}
	e := &memory.Embedding{Model: "m2", Dim: 2, Vector: []float32{1, 2}}
	n, err := s.SetEmbeddings(ctx, nil, []EmbeddingUpdate{{ID: "01", Hash: "stale", Embedding: e}, {ID: "01", Hash: "h", Embedding: e}, {ID: "gone", Hash: "h", Embedding: e}})
	if err != nil || n != 1 {
		t.Fatalf("SetEmbeddings = %d, %v; want 1", n, err)
	}
	got := get1(t, s, nil, "01")
	if !reflect.DeepEqual(got.Embedding, e) {
		t.Fatalf("embedding = %+v, want %+v", got.Embedding, e)
	}
}

func TestSettingsAndCache(t *testing.T) {
	ctx := context.Background()
	s, _ := openTemp(t)
	if _, ok, _ := s.Setting(ctx, "k"); ok {
		t.Fatal("unset setting found")
	}
	if err := s.SetSetting(ctx, "k", "v"); err != nil {
		t.Fatal(err)
	}
	if v, ok, _ := s.Setting(ctx, "k"); !ok || v != "v" {
		t.Fatalf("Setting = %q, %v", v, ok)
	}
	if err := s.PutEmbedding(ctx, "m", "h", []float32{0.5, -1}); err != nil {
		t.Fatal(err)
	}
	v, ok, err := s.GetEmbedding(ctx, "m", "h")
	if err != nil || !ok || !reflect.DeepEqual(v, []float32{0.5, -1}) {
		t.Fatalf("GetEmbedding = %v, %v, %v", v, ok, err)
	}
	if _, ok, _ := s.GetEmbedding(ctx, "other", "h"); ok {
		t.Fatal("cache hit across models")
	}
}

// TestPageSize checks that a new file gets PageSize pages in WAL mode, and
// that a file that already has SQLite's default pages keeps them.
func TestPageSize(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	old := filepath.Join(dir, "old.db")
	raw, err := sql.Open("sqlite", "file:"+old)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := raw.Exec("PRAGMA page_size = 4096; PRAGMA journal_mode = WAL"); err != nil {
		t.Fatal(err)
	}
	raw.Close()
	cases := []struct {
		name, path string
		want       int
	}{
		{"new file", filepath.Join(dir, "new.db"), PageSize},
		{"existing file", old, 4096},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s, err := Open(ctx, c.path)
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			var ps int
			var mode string
			if err := s.db.QueryRow("PRAGMA page_size").Scan(&ps); err != nil {
				t.Fatal(err)
			}
			if err := s.db.QueryRow("PRAGMA journal_mode").Scan(&mode); err != nil {
				t.Fatal(err)
			}
			if ps != c.want || mode != "wal" {
				t.Fatalf("page size %d, journal %s; want %d, wal", ps, mode, c.want)
			}
		})
	}
}
