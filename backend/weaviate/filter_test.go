package weaviate

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"sort"
	"testing"
	"time"

	"github.com/engram-memory/engram/memory"
)

const fixtureModel = "test-model-v1"

// fixture is a small store whose memories vary every filterable field: two
// tenants (team), two users, three types, scenes, tag sets, sources, a
// spread of creation and occurrence times, two episodes, and memories that
// supersede an earlier one of their scope. Every text holds "memo", so a
// BM25 search for it reaches every memory and its hits are exactly the
// filter's matches.
func fixture() []*memory.Memory {
	r := rand.New(rand.NewPCG(1, 2))
	var out []*memory.Memory
	for i := range 48 {
		out = append(out, mem(fmt.Sprintf("m%02d", i), fmt.Sprintf("memo number %d about %s", i, []string{"deploys", "keys", "lunch"}[i%3]),
			func(m *memory.Memory) {
				m.Scope = map[string]string{"team": []string{"a", "b"}[i%2], "user": []string{"u1", "u2"}[(i/2)%2]}
				if i%7 == 0 {
					delete(m.Scope, "team") // the no-tenant tenant
				}
				if i%5 == 0 {
					m.Scope["project"] = "p"
				}
				m.Type = []string{"fact", "event", "note"}[i%3]
				m.Scene = []string{"", "standup", "review"}[(i/3)%3]
				m.Tags = [][]string{nil, {"x"}, {"x", "y"}, {"y"}}[i%4]
				m.Source = []string{"", "slack", "mail"}[(i/4)%3]
				m.CreatedAt = t0.Add(time.Duration(i) * time.Hour)
				m.UpdatedAt = m.CreatedAt
				m.OccurredAt = m.CreatedAt.Add(time.Duration(i%5-2) * 97 * time.Minute)
				if i%3 > 0 {
					m.Episode, m.Seq = []string{"", "call 1", "call 2"}[i%3], int64(i%4)
				}
				v := make([]float32, 6)
				for j := range v {
					v[j] = float32(r.NormFloat64())
				}
				m.Embedding = &memory.Embedding{Model: fixtureModel, Dim: len(v), Vector: v}
			}))
	}
	// Every sixth memory supersedes the latest earlier one of its scope.
	for i, m := range out {
		if i%6 != 5 {
			continue
		}
		for j := i - 1; j >= 0; j-- {
			if memory.ScopeJSON(out[j].Scope) == memory.ScopeJSON(m.Scope) {
				m.Supersedes = out[j].ID
				break
			}
		}
	}
	return out
}

// withSupersession sets each memory's derived Superseded as Engram's own
// index derives it, for memory.Filter.Match.
func withSupersession(mems []*memory.Memory) {
	ref := engramIndex(mems)
	for _, m := range mems {
		m.Superseded = ref.Get(m.Key()).Superseded
	}
}

// filterCases are the filters every read path is checked with.
func filterCases() []struct {
	name string
	f    memory.Filter
} {
	at := func(h int) *time.Time { x := t0.Add(time.Duration(h) * time.Hour); return &x }
	superseded := ""
	for _, m := range fixture() {
		if m.Supersedes != "" {
			superseded = m.Supersedes
			break
		}
	}
	return []struct {
		name string
		f    memory.Filter
	}{
		{"everything", memory.Filter{}},
		{"tenant a", memory.Filter{Scope: map[string]string{"team": "a"}}},
		{"tenant b, user u2", memory.Filter{Scope: map[string]string{"team": "b", "user": "u2"}}},
		{"user u1 in every tenant", memory.Filter{Scope: map[string]string{"user": "u1"}}},
		{"project p", memory.Filter{Scope: map[string]string{"project": "p"}}},
		{"unknown tenant", memory.Filter{Scope: map[string]string{"team": "nobody"}}},
		{"type", memory.Filter{Type: "event"}},
		{"scene", memory.Filter{Scene: "review"}},
		{"one tag", memory.Filter{Tags: []string{"x"}}},
		{"two tags", memory.Filter{Tags: []string{"y", "x"}}},
		{"source", memory.Filter{Source: "mail"}},
		{"since", memory.Filter{Since: at(30)}},
		{"until", memory.Filter{Until: at(10)}},
		{"since and until", memory.Filter{Since: at(10), Until: at(20)}},
		{"all at once", memory.Filter{Scope: map[string]string{"team": "a", "user": "u2"}, Type: "fact", Tags: []string{"x"}, Since: at(2)}},
		{"nothing matches", memory.Filter{Type: "event", Scene: "standup", Source: "slack", Tags: []string{"y"}, Until: at(1)}},
		{"episode", memory.Filter{Episode: "call 1"}},
		{"episode in tenant a", memory.Filter{Episode: "call 2", Scope: map[string]string{"team": "a"}}},
		{"supersedes", memory.Filter{Supersedes: superseded}},
		{"current", memory.Filter{Current: true}},
		{"current in tenant b", memory.Filter{Current: true, Scope: map[string]string{"team": "b"}}},
		{"as of hour 20", memory.Filter{AsOf: at(20)}},
		{"as of the end", memory.Filter{AsOf: at(60)}},
		{"as of, type and episode", memory.Filter{AsOf: at(40), Type: "event", Episode: "call 1"}},
	}
}

func matching(mems []*memory.Memory, f *memory.Filter) []string {
	var ids []string
	for _, m := range mems {
		if f.Match(m) {
			ids = append(ids, m.ID)
		}
	}
	sort.Strings(ids)
	return ids
}

func hitIDs(hits []Hit) []string {
	ids := make([]string, len(hits))
	for i, h := range hits {
		ids[i] = h.Memory.ID
	}
	sort.Strings(ids)
	return ids
}

// TestFiltersPushedDown: every filter gives, on every read path, exactly the
// memories memory.Filter.Match (the reference) accepts.
func TestFiltersPushedDown(t *testing.T) {
	for _, tenantKey := range []string{"team", ""} {
		t.Run("tenant="+tenantKey, func(t *testing.T) {
			s := openTest(t, func(c *Config) { c.TenantKey = tenantKey })
			ctx := ctxT(t)
			mems := fixture()
			put(t, s, mems...)
			withSupersession(mems)
			qv := []float32{1, 0, 0, 0, 0, 0}
			for _, c := range filterCases() {
				t.Run(c.name, func(t *testing.T) {
					want := matching(mems, &c.f)
					lq := LegQuery{Text: "memo", Vector: qv, Model: fixtureModel, Filter: c.f, K: 1000}
					bm, err := s.BM25(ctx, lq)
					if err != nil {
						t.Fatal(err)
					}
					if got := hitIDs(bm); !slices.Equal(got, want) {
						t.Errorf("bm25 = %v\nwant  %v", got, want)
					}
					lean := lq
					lean.Lean = true
					lbm, err := s.BM25(ctx, lean)
					if err != nil {
						t.Fatal(err)
					}
					if got := hitIDs(lbm); !slices.Equal(got, want) {
						t.Errorf("lean bm25 = %v\nwant       %v", got, want)
					}
					vec, err := s.NearVector(ctx, lq)
					if err != nil {
						t.Fatal(err)
					}
					if got := hitIDs(vec); !slices.Equal(got, want) {
						t.Errorf("vector = %v\nwant    %v", got, want)
					}
					hyb, err := s.Hybrid(ctx, HybridQuery{LegQuery: lq, BM25Weight: 1, VectorWeight: 1})
					if err != nil {
						t.Fatal(err)
					}
					var hids []string
					for _, h := range hyb {
						hids = append(hids, h.Memory.ID)
					}
					sort.Strings(hids)
					if !slices.Equal(hids, want) {
						t.Errorf("hybrid = %v\nwant    %v", hids, want)
					}
					n, err := s.Count(ctx, c.f)
					if err != nil || n != len(want) {
						t.Errorf("count = %d, %v; want %d", n, err, len(want))
					}
					listed := listAll(t, s, c.f, 5)
					if !slices.Equal(listed, want) {
						t.Errorf("list = %v\nwant  %v", listed, want)
					}
				})
			}
		})
	}
}

// listAll pages through a listing and returns the ids, sorted; it fails on a
// repeated id.
func listAll(t testing.TB, s *Store, f memory.Filter, page int) []string {
	t.Helper()
	ctx := ctxT(t)
	var ids []string
	seen := map[string]bool{}
	cursor := ""
	for range 1000 {
		p, err := s.List(ctx, f, cursor, page, false)
		if err != nil {
			t.Fatalf("list: %v", err)
		}
		for _, m := range p.Memories {
			if seen[m.ID] {
				t.Fatalf("list repeated %s", m.ID)
			}
			seen[m.ID] = true
			ids = append(ids, m.ID)
		}
		if p.Next == "" {
			sort.Strings(ids)
			return ids
		}
		cursor = p.Next
	}
	t.Fatal("list did not end")
	return nil
}

// TestVectorLegIsCosine: the vector leg's scores are the cosine of the
// query with each stored vector (checked against a float64 computation), in
// descending order, and only the query model's vectors are compared.
func TestVectorLegIsCosine(t *testing.T) {
	s := openTest(t, nil)
	ctx := ctxT(t)
	mems := fixture()
	other := mem("other-model", "memo from another model", func(m *memory.Memory) {
		m.Embedding = &memory.Embedding{Model: "another-model", Dim: 6, Vector: []float32{1, 0, 0, 0, 0, 0}}
	})
	put(t, s, append(mems, other)...)
	qv := []float32{0.3, -1, 0.5, 0, 2, 0.1}
	hits, err := s.NearVector(ctx, LegQuery{Vector: qv, Model: fixtureModel, K: 100})
	if err != nil {
		t.Fatal(err)
	}
	if len(hits) != len(mems) {
		t.Fatalf("%d hits, want %d (the other model's memory must not be compared)", len(hits), len(mems))
	}
	byID := map[string]*memory.Memory{}
	for _, m := range mems {
		byID[m.ID] = m
	}
	for i, h := range hits {
		want := cosine(qv, byID[h.Memory.ID].Embedding.Vector)
		if math.Abs(h.Score-want) > 1e-5 {
			t.Errorf("hit %s: cosine %v, want %v", h.Memory.ID, h.Score, want)
		}
		if i > 0 && h.Score > hits[i-1].Score+1e-6 {
			t.Errorf("hit %d scores above hit %d", i+1, i)
		}
		if h.Rank != i+1 {
			t.Errorf("hit %d has rank %d", i, h.Rank)
		}
	}
	if _, err := s.NearVector(ctx, LegQuery{Vector: []float32{1, 2}, Model: fixtureModel, K: 5}); err == nil {
		t.Error("a 2-d query against 6-d vectors did not fail")
	}
	if _, err := s.NearVector(ctx, LegQuery{Vector: qv, Model: "never-stored", K: 5}); err == nil {
		t.Error("a query of a model never stored did not fail")
	}
}

func cosine(a, b []float32) float64 {
	var dot, na, nb float64
	for i := range a {
		dot += float64(a[i]) * float64(b[i])
		na += float64(a[i]) * float64(a[i])
		nb += float64(b[i]) * float64(b[i])
	}
	return dot / math.Sqrt(na*nb)
}
