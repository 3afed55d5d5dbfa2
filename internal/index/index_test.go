package index

import (
	"fmt"
	"math/rand"
	"testing"
	"time"

	"github.com/engram-memory/engram/internal/bm25"
	"github.com/engram-memory/engram/internal/docset"
	"github.com/engram-memory/engram/internal/tokenize"
	"github.com/engram-memory/engram/memory"
)

func newIndex() *Index {
	ix := New(tokenize.New(tokenize.DefaultOptions()), bm25.DefaultParams(NumFields))
	ix.SetContext(DefaultContext)
	return ix
}

func randomMemory(r *rand.Rand, i int) *memory.Memory {
	pick := func(vals ...string) string { return vals[r.Intn(len(vals))] }
	m := &memory.Memory{
		ID:        fmt.Sprintf("m%04d", i),
		Text:      pick("alpha beta", "beta gamma", "gamma delta", "delta alpha"),
		Type:      pick("fact", "note", "event"),
		Scene:     pick("", "work", "home"),
		Source:    pick("", "cli", "api"),
		CreatedAt: time.Unix(int64(r.Intn(1000)), 0).UTC(),
		Scope:     map[string]string{},
	}
	if r.Intn(2) == 0 {
		m.Scope["team"] = pick("t1", "t2")
	}
	if r.Intn(2) == 0 {
		m.Scope["user"] = pick("u1", "u2", "u3")
	}
	for _, t := range []string{"x", "y", "z"} {
		if r.Intn(3) == 0 {
			m.Tags = append(m.Tags, t)
		}
	}
	if r.Intn(2) == 0 {
		m.Embedding = &memory.Embedding{Model: "m", Dim: 3, Vector: []float32{r.Float32() + 0.1, r.Float32(), r.Float32()}}
	}
	m.OccurredAt = m.CreatedAt.Add(-time.Duration(r.Intn(3)) * 24 * time.Hour)
	if r.Intn(2) == 0 { // a turn of one of a few conversations
		m.Episode = pick("chat 1", "chat 2", "chat 3")
		m.Seq = int64(r.Intn(6))
		m.Speaker = pick("Caroline", "Melanie", "")
	}
	if r.Intn(6) == 0 {
		m.Supersedes = fmt.Sprintf("m%04d", r.Intn(i+1))
		if m.Supersedes == m.ID {
			m.Supersedes = ""
		}
	}
	return m
}

func randomFilter(r *rand.Rand) memory.Filter {
	var f memory.Filter
	if r.Intn(2) == 0 {
		f.Scope = map[string]string{"team": []string{"t1", "t2"}[r.Intn(2)]}
	}
	if r.Intn(3) == 0 {
		if f.Scope == nil {
			f.Scope = map[string]string{}
		}
		f.Scope["user"] = []string{"u1", "u2", "u9"}[r.Intn(3)]
	}
	if r.Intn(3) == 0 {
		f.Type = []string{"fact", "note", "nope"}[r.Intn(3)]
	}
	if r.Intn(4) == 0 {
		f.Scene = "work"
	}
	if r.Intn(4) == 0 {
		f.Source = "api"
	}
	if r.Intn(3) == 0 {
		f.Tags = []string{[]string{"x", "y", "z"}[r.Intn(3)]}
	}
	if r.Intn(3) == 0 {
		t := time.Unix(int64(r.Intn(1000)), 0)
		f.Since = &t
	}
	if r.Intn(3) == 0 {
		t := time.Unix(int64(500+r.Intn(600)), 0)
		f.Until = &t
	}
	if r.Intn(4) == 0 {
		f.Episode = []string{"chat 1", "chat 3", "none"}[r.Intn(3)]
	}
	if r.Intn(6) == 0 {
		f.Supersedes = fmt.Sprintf("m%04d", r.Intn(400))
	}
	switch r.Intn(4) {
	case 0:
		f.Current = true
	case 1:
		t := time.Unix(int64(r.Intn(1200))-100000, 0)
		f.AsOf = &t
	}
	return f
}

// TestAllowedMatchesFilter checks the compiled filter against the reference
// Filter.Match over random memories, puts, replacements and deletes.
func TestAllowedMatchesFilter(t *testing.T) {
	r := rand.New(rand.NewSource(1))
	ix := newIndex()
	live := map[string]*memory.Memory{}
	for i := 0; i < 3000; i++ {
		switch op := r.Intn(10); {
		case op < 6 || len(live) == 0:
			m := randomMemory(r, r.Intn(400))
			ix.Put(m)
			live[m.Key()] = m
		default:
			// A key that may or may not be live: ids repeat across scopes.
			m := randomMemory(r, r.Intn(400))
			for k := range live {
				if r.Intn(3) == 0 {
					m = live[k]
				}
				break
			}
			ix.Delete(m.Key())
			delete(live, m.Key())
		}
		if i%100 != 0 {
			continue
		}
		for range 20 {
			f := randomFilter(r)
			allow := ix.Allowed(&f)
			if f.Empty() && allow != nil {
				t.Fatalf("filter %+v: empty but an allowed set", f)
			}
			got := map[string]bool{}
			ix.Each(allow, func(m *memory.Memory) bool { got[m.Key()] = true; return true })
			for id := range live {
				m := ix.Get(id) // with what the index derives (its supersession)
				if want := f.Match(m); got[id] != want {
					t.Fatalf("filter %+v, memory %+v: allowed %v, Match %v", f, m, got[id], want)
				}
			}
			if len(got) > len(live) {
				t.Fatalf("allowed %d memories, only %d live", len(got), len(live))
			}
		}
	}
	if ix.Len() != len(live) {
		t.Fatalf("Len %d, want %d", ix.Len(), len(live))
	}
	if err := ix.Verify(); err != nil {
		t.Fatal(err)
	}
}

func TestSetUsageKeepsIndexing(t *testing.T) {
	ix := newIndex()
	m := &memory.Memory{ID: "a", Text: "zebra crossing", Type: "note", Scope: map[string]string{"team": "t1"}}
	ix.Put(m)
	at := time.Unix(100, 0)
	if !ix.SetUsage(&memory.Memory{ID: "a", Scope: map[string]string{"team": "t1"}, Uses: 3, Demand: 2.5, DemandAt: &at}) {
		t.Fatal("SetUsage of an indexed memory returned false")
	}
	if ix.SetUsage(&memory.Memory{ID: "b"}) || ix.SetUsage(&memory.Memory{ID: "a"}) {
		t.Fatal("SetUsage of an absent memory (or of its id in another scope) returned true")
	}
	got := ix.Get(m.Key())
	if got.Uses != 3 || got.Demand != 2.5 || got.Text != "zebra crossing" || m.Uses != 0 {
		t.Fatalf("after SetUsage: %+v (original %+v)", got, m)
	}
	f := &memory.Filter{Scope: map[string]string{"team": "t1"}}
	hits, _ := ix.BM25("zebra", ix.Domain(f.Scope), ix.Allowed(f), 5)
	if len(hits) != 1 {
		t.Fatalf("memory no longer found after SetUsage: %v", hits)
	}
	var empty *docset.Set
	if !empty.Has(0) {
		t.Fatal("nil set must allow everything")
	}
}

// TestSupersededOnArrival: a memory whose successor was indexed first is
// superseded as it arrives, and is indexed like any other (its vector in
// the vector index, not on the memory; its scope shared).
func TestSupersededOnArrival(t *testing.T) {
	ix := newIndex()
	at := time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)
	scope := map[string]string{"team": "a"}
	newer := &memory.Memory{ID: "new", Text: "Sam lives in Oslo", Scope: map[string]string{"team": "a"}, Supersedes: "old", CreatedAt: at, OccurredAt: at}
	old := &memory.Memory{ID: "old", Text: "Sam lives in Porto", Scope: scope, CreatedAt: at, OccurredAt: at.AddDate(-2, 0, 0),
		Embedding: &memory.Embedding{Model: "m", Dim: 3, Vector: []float32{1, 0, 0}}}
	ix.Put(newer)
	ix.Put(old)
	got := ix.Get(old.Key())
	if got.Superseded == nil || got.Superseded.By != "new" || !got.Superseded.At.Equal(at) {
		t.Fatalf("superseded %+v", got.Superseded)
	}
	if got.Embedding == nil || got.Embedding.Vector != nil || ix.Vectors("m").Len() != 1 {
		t.Fatalf("the superseded memory keeps its vector: %+v", got.Embedding)
	}
	if n := ix.Get(newer.Key()); fmt.Sprintf("%p", n.Scope) != fmt.Sprintf("%p", got.Scope) {
		t.Fatal("the two memories of one scope do not share its interned map")
	}
	if err := ix.Verify(); err != nil {
		t.Fatal(err)
	}
}
