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
	return New(tokenize.New(tokenize.DefaultOptions()), bm25.DefaultParams(NumFields))
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
			if f.Empty() != (allow == nil) {
				t.Fatalf("filter %+v: empty=%v but allowed set nil=%v", f, f.Empty(), allow == nil)
			}
			got := map[string]bool{}
			ix.Each(allow, func(m *memory.Memory) bool { got[m.Key()] = true; return true })
			for id, m := range live {
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
