package weaviate

import (
	"fmt"
	"math"
	"math/rand/v2"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/engram-memory/engram/backend"
	"github.com/engram-memory/engram/internal/index"
	"github.com/engram-memory/engram/memory"
)

// storedDerived reads every object's stored context and supersession, by
// memory.Key.
func storedDerived(t testing.TB, s *Store) map[string]fields {
	t.Helper()
	ctx := ctxT(t)
	tenants, err := s.Tenants(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if s.cfg.TenantKey == "" {
		tenants = []string{""}
	}
	out := map[string]fields{}
	for _, tenant := range tenants {
		objs, err := s.get(ctx, tenant, "limit:"+strconv.Itoa(maxIDsPerRequest),
			pID+" "+pScope+" "+pCreated+" "+pContext+" "+pSupersededBy+" "+pSupersededAt+" _additional{id}")
		if err != nil {
			t.Fatal(err)
		}
		for i := range objs {
			m, err := objs[i].decodeLean()
			if err != nil {
				t.Fatal(err)
			}
			out[m.Key()] = objs[i]
		}
	}
	return out
}

// wantContext is the context the built-in index gives the memory with key
// (its neighbours' texts), as s stores it: Engram's terms of each text, or
// the texts one per line with TokenizerWord.
func wantContext(s *Store, ref *index.Index, key string) string {
	var parts []string
	for _, t := range ref.ContextOf(key) {
		if s.tok != nil {
			t = strings.Join(s.tok.Tokens(t), " ")
		}
		if t != "" {
			parts = append(parts, t)
		}
	}
	if s.tok != nil {
		return strings.Join(parts, " ")
	}
	return strings.Join(parts, "\n")
}

// checkDerived compares every stored memory's context and supersession
// with what the built-in index (internal/index, the reference) derives
// from the same memories.
func checkDerived(t *testing.T, b *Backend, step string) {
	t.Helper()
	var all []*memory.Memory
	if err := b.List(ctxT(t), backend.ListQuery{}, func(m *memory.Memory) error { all = append(all, m); return nil }); err != nil {
		t.Fatal(err)
	}
	ref := engramIndex(all)
	stored := storedDerived(t, b.s)
	if len(stored) != len(all) {
		t.Fatalf("%s: %d objects, %d memories listed", step, len(stored), len(all))
	}
	for _, m := range all {
		k := m.Key()
		if want := ref.Get(k).Superseded; !reflect.DeepEqual(m.Superseded, want) {
			t.Fatalf("%s: %s in %v is superseded by %+v, the index says %+v", step, m.ID, m.Scope, m.Superseded, want)
		}
		if got, want := stored[k].Context, wantContext(b.s, ref, k); got != want {
			t.Fatalf("%s: %s in %v (episode %q, seq %d) has context %q, the index says %q", step, m.ID, m.Scope, m.Episode, m.Seq, got, want)
		}
	}
}

// TestDerivedFieldsFollowWrites: after every write of a random sequence of
// puts (new memories, changed texts, places and times, batches), deletes,
// and updates that move memories between scopes and episodes, every stored
// context and supersession is the one Engram's own index derives from the
// memories as they now are.
func TestDerivedFieldsFollowWrites(t *testing.T) {
	for _, c := range []struct {
		tokenizer, tenantKey string
		steps                int
	}{{TokenizerEngram, "team", 60}, {TokenizerWord, "", 30}} {
		t.Run(c.tokenizer, func(t *testing.T) {
			s := openTest(t, func(cfg *Config) { cfg.Tokenizer, cfg.TenantKey = c.tokenizer, c.tenantKey })
			b := &Backend{s: s}
			ctx := ctxT(t)
			r := rand.New(rand.NewPCG(21, 22))
			scopes := []map[string]string{{"team": "a"}, {"team": "a", "user": "u1"}, {"team": "b"}}
			ids := []string{"A", "B", "C", "D", "E", "F", "G", "H"}
			words := strings.Fields("porch lilies coast dog beach weeks garden zeppelin tasks_claim rain")
			random := func() *memory.Memory {
				id := ids[r.IntN(len(ids))]
				return mem(id, words[r.IntN(len(words))]+" "+words[r.IntN(len(words))], func(m *memory.Memory) {
					m.Scope = scopes[r.IntN(len(scopes))]
					if r.IntN(5) > 0 {
						m.Episode = []string{"chat 1", "chat 2"}[r.IntN(2)]
						m.Seq = int64(r.IntN(5))
					}
					m.OccurredAt = t0.Add(time.Duration(r.IntN(4)) * time.Hour)
					if r.IntN(3) == 0 {
						if sup := ids[r.IntN(len(ids))]; sup != id {
							m.Supersedes = sup
						}
					}
				})
			}
			for step := range c.steps {
				var what string
				switch op := r.IntN(10); {
				case op < 5:
					m := random()
					what = fmt.Sprintf("put %s in %v, episode %q seq %d, supersedes %q", m.ID, m.Scope, m.Episode, m.Seq, m.Supersedes)
					if err := b.Put(ctx, nil, []*memory.Memory{m}); err != nil {
						t.Fatal(err)
					}
				case op < 7:
					batch, seen := []*memory.Memory{}, map[string]bool{}
					for range 4 {
						if m := random(); !seen[m.Key()] {
							seen[m.Key()] = true
							batch = append(batch, m)
						}
					}
					what = fmt.Sprintf("put a batch of %d", len(batch))
					if err := b.Put(ctx, nil, batch); err != nil {
						t.Fatal(err)
					}
				case op < 8:
					scope, id := scopes[r.IntN(len(scopes))], ids[r.IntN(len(ids))]
					what = fmt.Sprintf("delete %s in %v", id, scope)
					if _, err := b.Delete(ctx, scope, []string{id}); err != nil && !strings.Contains(err.Error(), "ambiguous") {
						t.Fatal(err)
					}
				default:
					from, to, id := scopes[r.IntN(len(scopes))], scopes[r.IntN(len(scopes))], ids[r.IntN(len(ids))]
					episode := []string{"", "chat 1", "chat 2"}[r.IntN(3)]
					what = fmt.Sprintf("move %s from %v to %v, episode %q", id, from, to, episode)
					_, err := b.Update(ctx, from, id, func(m *memory.Memory) (*memory.Memory, error) {
						m.Scope, m.Episode = to, episode
						if episode == "" {
							m.Seq = 0
						}
						return m, nil
					})
					if err != nil && !strings.Contains(err.Error(), "not found") && !strings.Contains(err.Error(), "ambiguous") &&
						!strings.Contains(err.Error(), "already has") && !strings.Contains(err.Error(), "outside") {
						t.Fatal(err)
					}
				}
				checkDerived(t, b, fmt.Sprintf("step %d (%s)", step+1, what))
			}
		})
	}
}

// bm25Model is Weaviate's BM25 over several properties as docs/weaviate.md
// states it: each property scored against its own statistics (N the
// tenant's objects, its own mean length over the objects that have it, its
// own document frequencies), a query term given n times counted n times,
// and the boosted scores added; times k1+1, as the adapter reports it.
type bm25Model struct {
	n     int
	props []modelProp
}

type modelProp struct {
	boost float64
	docs  map[string][]string // tokens by memory id
	avgdl float64
	df    map[string]int
}

func (p *modelProp) finish() {
	p.df = map[string]int{}
	total, with := 0, 0
	for _, toks := range p.docs {
		if len(toks) > 0 {
			total += len(toks)
			with++
		}
		seen := map[string]bool{}
		for _, t := range toks {
			if !seen[t] {
				seen[t] = true
				p.df[t]++
			}
		}
	}
	if with > 0 {
		p.avgdl = float64(total) / float64(with)
	}
}

func (m *bm25Model) scores(query []string) map[string]float64 {
	const k1, b = 1.2, 0.75
	count := map[string]int{}
	for _, q := range query {
		count[q]++
	}
	out := map[string]float64{}
	for _, p := range m.props {
		for id, toks := range p.docs {
			for q, n := range count {
				tf := 0
				for _, t := range toks {
					if t == q {
						tf++
					}
				}
				if tf == 0 {
					continue
				}
				idf := math.Log(1 + (float64(m.n-p.df[q])+0.5)/(float64(p.df[q])+0.5))
				f := float64(tf)
				out[id] += p.boost * float64(n) * idf * f * (k1 + 1) / (f + k1*(1-b+b*float64(len(toks))/p.avgdl))
			}
		}
	}
	return out
}

// TestBM25Properties: with episodes and days, Weaviate scores each memory
// as the sum of its own words' BM25 (the terms property, Engram's terms)
// and its context's and day's, each boosted by its field weight and scored
// against its own property's statistics (bm25Model): not Engram's BM25F,
// which adds the weighted counts of all fields into one term frequency over
// one length. The stored contexts are the built-in index's, and how far the
// two backends' rankings then differ is logged.
func TestBM25Properties(t *testing.T) {
	s := openTest(t, nil)
	ctx := ctxT(t)
	r := rand.New(rand.NewPCG(31, 32))
	words := strings.Fields("porch lilies flowers coast dog beach weeks garden peruvian plant rain tasks_claim support group")
	var mems []*memory.Memory
	for i := range 90 {
		n := 3 + r.IntN(8)
		w := make([]string, n)
		for j := range w {
			w[j] = words[r.IntN(len(words))]
		}
		mems = append(mems, mem(fmt.Sprintf("m%02d", i), strings.Join(w, " "), func(m *memory.Memory) {
			if i < 60 {
				m.Episode, m.Seq = fmt.Sprintf("chat %d", i%3), int64(i/3+1)
				m.Speaker = []string{"Caroline", "Melanie"}[i%2]
			}
			m.OccurredAt = time.Date(2023, 5, 7+i%4, 10, i, 0, 0, time.UTC)
		}))
	}
	put(t, s, mems...) // one write: every context is written with its memory
	ref := engramIndex(mems)
	stored := storedDerived(t, s)
	tok := s.tok
	w := index.DefaultFieldWeights()
	own := modelProp{boost: 1, docs: map[string][]string{}}
	ctxp := modelProp{boost: float64(float32(w[index.FieldContext])), docs: map[string][]string{}}
	day := modelProp{boost: float64(float32(w[index.FieldDate])), docs: map[string][]string{}}
	for _, m := range mems {
		k := m.Key()
		if got, want := stored[k].Context, wantContext(s, ref, k); got != want {
			t.Fatalf("%s: stored context %q, the index's %q", m.ID, got, want)
		}
		own.docs[m.ID] = append(tok.Tokens(m.Text), tok.Tokens(m.Speaker)...)
		for _, text := range ref.ContextOf(k) {
			ctxp.docs[m.ID] = append(ctxp.docs[m.ID], tok.Tokens(text)...)
		}
		if index.HasOwnTime(m) {
			day.docs[m.ID] = tok.Tokens(index.DateText(m.OccurredAt))
		}
	}
	for _, p := range []*modelProp{&own, &ctxp, &day} {
		p.finish()
	}
	model := bm25Model{n: len(mems), props: []modelProp{own, ctxp, day}}
	for _, q := range []string{"porch flowers", "peruvian lilies", "caroline garden", "what happened on 8 May 2023", "support group 9 may",
		"tasks_claim", "rain rain dog"} {
		hits, err := s.BM25(ctx, LegQuery{Text: q, K: len(mems)})
		if err != nil {
			t.Fatal(err)
		}
		want := model.scores(tok.Tokens(q))
		if len(hits) != len(want) {
			t.Fatalf("%q: %d hits, the model scores %d", q, len(hits), len(want))
		}
		for _, h := range hits {
			if x := want[h.Memory.ID]; math.Abs(h.Score-x) > 1e-5*x {
				t.Errorf("%q: %s scores %v, the model %v", q, h.Memory.ID, h.Score, x)
			}
		}
		// Engram's BM25F over the same memories, for the record.
		eng, _ := ref.BM25(q, nil, nil, 10)
		var engTop []string
		for _, h := range eng {
			engTop = append(engTop, ref.Doc(h.Doc).ID)
		}
		same := 0
		for _, h := range hits[:min(10, len(hits))] {
			if slices.Contains(engTop, h.Memory.ID) {
				same++
			}
		}
		t.Logf("%q: %d of the top 10 are Engram's top 10", q, same)
	}
}

// TestHybridWindows: with a time window, the native hybrid returns its K
// best and then its best inside the window, however far down they fuse,
// and the explained legs place the window's memories too.
func TestHybridWindows(t *testing.T) {
	s := openTest(t, nil)
	ctx := ctxT(t)
	var mems []*memory.Memory
	for i := range 30 {
		mems = append(mems, mem(fmt.Sprintf("r%02d", i), "quarterly report "+strings.Repeat("quarterly ", i%3), func(m *memory.Memory) {
			m.OccurredAt = time.Date(2024, 1, 1+i, 12, 0, 0, 0, time.UTC)
			m.Embedding = &memory.Embedding{Model: fixtureModel, Dim: 2, Vector: []float32{1, float32(i) / 100}}
		}))
	}
	mems = append(mems, mem("old", "an old report with much more text around it to make it rank last of all", func(m *memory.Memory) {
		m.OccurredAt = time.Date(2023, 5, 8, 13, 56, 0, 0, time.UTC)
		m.Embedding = &memory.Embedding{Model: fixtureModel, Dim: 2, Vector: []float32{-1, 1}}
	}))
	put(t, s, mems...)
	q := HybridQuery{LegQuery: LegQuery{Text: "quarterly report", Vector: []float32{1, 0}, Model: fixtureModel, K: 5},
		BM25Weight: 1, VectorWeight: 1, Explain: true}
	ids := func(hs []HybridHit) []string {
		var out []string
		for _, h := range hs {
			out = append(out, h.Memory.ID)
		}
		return out
	}
	plain, err := s.Hybrid(ctx, q)
	if err != nil {
		t.Fatal(err)
	}
	if len(plain) != 5 || slices.Contains(ids(plain), "old") {
		t.Fatalf("without a window: %v, want 5 without old", ids(plain))
	}
	q.Windows = []memory.TimeWindow{{Since: time.Date(2023, 5, 1, 0, 0, 0, 0, time.UTC), Until: time.Date(2023, 6, 1, 0, 0, 0, 0, time.UTC)}}
	got, err := s.Hybrid(ctx, q)
	if err != nil {
		t.Fatal(err)
	}
	if want := append(ids(plain), "old"); !reflect.DeepEqual(ids(got), want) {
		t.Fatalf("with a window: %v, want %v", ids(got), want)
	}
	if h := got[5]; h.BM25 == nil || h.Vector == nil || h.BM25.Rank <= 5 || h.Vector.Rank <= 5 {
		t.Fatalf("the window's memory is not placed in both explained legs (after their best 5): %+v %+v", h.BM25, h.Vector)
	}
}

// TestGetIsStoredFields: Backend.Get returns a superseded memory with its
// stored fields only, as the built-in backend does (engram migrate compares
// the two), while List and the legs carry the derived supersession.
func TestGetIsStoredFields(t *testing.T) {
	b := &Backend{s: openTest(t, func(c *Config) { c.TenantKey = "team" })}
	ctx := ctxT(t)
	scope := map[string]string{"team": "a"}
	old := mem("old", "the user lives in Berlin", func(m *memory.Memory) { m.Scope = scope })
	newer := mem("new", "the user lives in Paris", func(m *memory.Memory) { m.Scope, m.Supersedes = scope, "old" })
	if err := b.Put(ctx, scope, []*memory.Memory{old, newer}); err != nil {
		t.Fatal(err)
	}
	got, err := b.Get(ctx, scope, []string{"old"})
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got["old"], old) {
		t.Fatalf("Get:\n got %#v\nwant %#v (stored fields only)", got["old"], old)
	}
	want := &memory.Supersession{By: "new", At: newer.OccurredAt}
	err = b.List(ctx, backend.ListQuery{Filter: memory.Filter{Scope: scope}}, func(m *memory.Memory) error {
		if m.ID == "old" && !reflect.DeepEqual(m.Superseded, want) {
			t.Errorf("List: old superseded by %+v, want %+v", m.Superseded, want)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	res, err := b.Legs(ctx, backend.LegQuery{Filter: memory.Filter{Scope: scope}, K: 5, Text: "user lives"})
	if err != nil || len(res.BM25) != 2 {
		t.Fatalf("legs: %v, %v", res, err)
	}
	for _, h := range res.BM25 {
		if h.Memory.ID == "old" && !reflect.DeepEqual(h.Memory.Superseded, want) {
			t.Errorf("leg hit: old superseded by %+v, want %+v", h.Memory.Superseded, want)
		}
	}
}
