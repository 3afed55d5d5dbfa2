package mirror

import (
	"context"
	"fmt"
	"math"
	"path/filepath"
	"reflect"
	"testing"
	"time"

	"github.com/engram-memory/engram/backend"
	"github.com/engram-memory/engram/internal/bm25"
	"github.com/engram-memory/engram/internal/index"
	"github.com/engram-memory/engram/internal/store"
	"github.com/engram-memory/engram/internal/tokenize"
	"github.com/engram-memory/engram/memory"
)

func testOptions() Options {
	return Options{Tokenizer: tokenize.DefaultOptions(), BM25: bm25.DefaultParams(index.NumFields), NoSnapshot: true}
}

// openStore is a store of n memories, each with the vector (len(text), 1) of
// model "test:len", and a mirror of it.
func openStore(t testing.TB, n int) (*store.Store, *Mirror) {
	t.Helper()
	ctx := context.Background()
	st, err := store.Open(ctx, filepath.Join(t.TempDir(), "m.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	at := time.Date(2026, 11, 30, 8, 0, 0, 0, time.UTC)
	var mems []*memory.Memory
	for i := range n {
		text := fmt.Sprintf("memory number %d%s", i, "xxxxxxxxxx"[:i%10])
		mems = append(mems, &memory.Memory{ID: fmt.Sprintf("m%02d", i), Text: text, Type: "note",
			Scope: map[string]string{"team": []string{"a", "b"}[i%2]}, CreatedAt: at, UpdatedAt: at,
			ContentHash: memory.ContentHash(text),
			Embedding:   &memory.Embedding{Model: "test:len", Dim: 2, Vector: []float32{float32(len(text)), 1}}})
	}
	if _, _, err := st.Put(ctx, nil, mems); err != nil {
		t.Fatal(err)
	}
	m, err := Open(ctx, st, testOptions())
	if err != nil {
		t.Fatal(err)
	}
	return st, m
}

// TestForkSeesEveryVector: the calibration copy holds every memory with its
// stored vector (the index keeps vectors apart from the memories), so its
// vector leg competes over the whole store; a replacement stands in for its
// original there, and the mirror itself is unchanged.
func TestForkSeesEveryVector(t *testing.T) {
	ctx := context.Background()
	_, m := openStore(t, 20)
	repl := &memory.Memory{ID: "m03", Text: "replaced", Type: "note", Scope: map[string]string{"team": "b"},
		Embedding: &memory.Embedding{Model: "test:len", Dim: 2, Vector: []float32{0, 1}}}
	fork := m.Fork("test:len", map[string]*memory.Memory{repl.Key(): repl})
	models, err := fork.Models(ctx)
	if err != nil || models["test:len"] != (backend.ModelInfo{Dim: 2, Count: 20}) {
		t.Fatalf("fork models = %v, %v; want 20 vectors of dimension 2", models, err)
	}
	res, err := fork.Legs(ctx, backend.LegQuery{K: 20, Vector: []float32{1, 0}, Model: "test:len", WithVectors: true})
	if err != nil || len(res.Vector) != 20 {
		t.Fatalf("fork legs: %d vector hits, %v", len(res.Vector), err)
	}
	for _, h := range res.Vector {
		want := float64(len(h.Memory.Text)) / math.Hypot(float64(len(h.Memory.Text)), 1) // stored normalised
		if h.Memory.ID == "m03" {
			want = 0
		}
		if len(h.Vector) != 2 || math.Abs(float64(h.Vector[0])-want) > 1e-6 || math.Abs(h.Score-want) > 1e-6 {
			t.Fatalf("memory %s (%q): vector %v, cosine %v; want first component %v", h.Memory.ID, h.Memory.Text, h.Vector, h.Score, want)
		}
	}
	if got := m.List(&memory.Filter{})[3]; got.ID != "m03" || got.Text == "replaced" {
		t.Fatalf("the fork changed the mirror: %+v", got)
	}
}

// TestApplyOwnUses: this process's recorded uses reach the index without a
// row read, and leave it exactly as a rebuild from the rows would.
func TestApplyOwnUses(t *testing.T) {
	ctx := context.Background()
	st, m := openStore(t, 10)
	uses, first, last, err := st.RecordUse(ctx, nil, []string{"m01", "m02", "m01"}, time.Now(), true)
	if err != nil {
		t.Fatal(err)
	}
	reads := st.RowsRead()
	if err := m.ApplyOwn(ctx, Own{First: first, Last: last, Uses: uses}); err != nil {
		t.Fatal(err)
	}
	if n := st.RowsRead() - reads; n != 0 {
		t.Fatalf("ApplyOwn of uses read %d rows", n)
	}
	rebuilt, err := Open(ctx, st, testOptions())
	if err != nil {
		t.Fatal(err)
	}
	if got, want := m.List(&memory.Filter{}), rebuilt.List(&memory.Filter{}); !reflect.DeepEqual(got, want) {
		t.Fatalf("after applied uses:\n%+v\nrebuilt:\n%+v", got[1], want[1])
	}
	if m.Seq() != last {
		t.Fatalf("seq %d, want %d", m.Seq(), last)
	}
}

// TestSyncOtherProcess: another handle's uses are caught up by reading only
// their counters, its writes by reading the rows, and a setting it changes
// is reported by the next Sync, even when an own write's catch-up saw it.
func TestSyncOtherProcess(t *testing.T) {
	ctx := context.Background()
	st, m := openStore(t, 10)
	other, err := store.Open(ctx, st.Path())
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	if _, _, _, err := other.RecordUse(ctx, nil, []string{"m04", "m05"}, time.Now(), true); err != nil {
		t.Fatal(err)
	}
	if err := other.SetSetting(ctx, "k", "v"); err != nil {
		t.Fatal(err)
	}
	reads := st.RowsRead()
	// An own write that finds the log moved on catches up instead.
	x := &memory.Memory{ID: "own", Text: "own write", Type: "note", CreatedAt: time.Now().UTC(), UpdatedAt: time.Now().UTC()}
	first, last, err := st.Put(ctx, nil, []*memory.Memory{x})
	if err != nil {
		t.Fatal(err)
	}
	if err := m.ApplyOwn(ctx, Own{First: first, Last: last, Put: []*memory.Memory{x}}); err != nil {
		t.Fatal(err)
	}
	if n := st.RowsRead() - reads; n != 3 { // two counters, one whole row
		t.Fatalf("catching up read %d rows, want 3", n)
	}
	changed, err := m.Sync(ctx)
	if err != nil || !changed {
		t.Fatalf("Sync = %v, %v; want the setting change reported", changed, err)
	}
	if changed, _ := m.Sync(ctx); changed {
		t.Fatal("the setting change was reported twice")
	}
	rebuilt, err := Open(ctx, st, testOptions())
	if err != nil {
		t.Fatal(err)
	}
	if got, want := m.List(&memory.Filter{}), rebuilt.List(&memory.Filter{}); !reflect.DeepEqual(got, want) {
		t.Fatalf("caught up:\n%v\nrebuilt:\n%v", got, want)
	}
}

// TestListInIDOrder: List visits what the filter admits in id order, whatever
// order the documents were numbered in.
func TestListInIDOrder(t *testing.T) {
	ctx := context.Background()
	st, m := openStore(t, 10)
	// Free a slot and fill it with a later id, then add an early one.
	for _, id := range []string{"m02"} {
		deleted, first, last, err := st.Delete(ctx, nil, []string{id})
		if err != nil {
			t.Fatal(err)
		}
		m.ApplyOwn(ctx, Own{First: first, Last: last, Deleted: deleted})
	}
	now := time.Now().UTC()
	for _, id := range []string{"z9", "a0"} {
		x := &memory.Memory{ID: id, Text: "late " + id, Type: "note", Scope: map[string]string{"team": "a"}, CreatedAt: now, UpdatedAt: now}
		first, last, err := st.Put(ctx, nil, []*memory.Memory{x})
		if err != nil {
			t.Fatal(err)
		}
		m.ApplyOwn(ctx, Own{First: first, Last: last, Put: []*memory.Memory{x}})
	}
	var ids []string
	for _, x := range m.List(&memory.Filter{Scope: map[string]string{"team": "a"}}) {
		ids = append(ids, x.ID)
	}
	want := []string{"a0", "m00", "m04", "m06", "m08", "z9"}
	if !reflect.DeepEqual(ids, want) {
		t.Fatalf("List = %v, want %v", ids, want)
	}
}

// TestCatchUpKeepsSettingChange: a catch-up for a write (CatchUp) leaves a
// setting change it sees for the next Sync to report.
func TestCatchUpKeepsSettingChange(t *testing.T) {
	ctx := context.Background()
	st, m := openStore(t, 3)
	if err := st.SetSetting(ctx, "k", "v"); err != nil {
		t.Fatal(err)
	}
	if err := m.CatchUp(ctx); err != nil {
		t.Fatal(err)
	}
	if changed, err := m.Sync(ctx); err != nil || !changed {
		t.Fatalf("Sync after CatchUp = %v, %v; want the setting change", changed, err)
	}
}

// TestLazyMirror: a new mirror is not loaded, and writes before its first
// Load are in the index after it; a fork never catches up (it has no store).
func TestLazyMirror(t *testing.T) {
	ctx := context.Background()
	st, m := openStore(t, 4)
	lazy := New(st, testOptions())
	if lazy.Loaded() {
		t.Fatal("a new mirror is loaded")
	}
	now := time.Date(2026, 11, 30, 8, 0, 0, 0, time.UTC)
	extra := &memory.Memory{ID: "late", Text: "written before the load", Type: "note", CreatedAt: now, UpdatedAt: now}
	extra.ContentHash = extra.ComputeHash()
	first, last, err := st.Put(ctx, nil, []*memory.Memory{extra})
	if err != nil {
		t.Fatal(err)
	}
	if err := lazy.ApplyOwn(ctx, Own{First: first, Last: last, Put: []*memory.Memory{extra}}); err != nil || lazy.Loaded() {
		t.Fatalf("ApplyOwn before Load: %v, loaded %v", err, lazy.Loaded())
	}
	if err := lazy.Load(ctx); err != nil {
		t.Fatal(err)
	}
	if lazy.Len() != 5 {
		t.Fatalf("%d memories after Load, want 5", lazy.Len())
	}
	if err := m.Fork("test:len", nil).CatchUp(ctx); err != nil {
		t.Fatalf("a fork's CatchUp: %v", err)
	}
}
