package weaviate

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/engram-memory/engram/internal/bm25"
	"github.com/engram-memory/engram/internal/weaviatetest"
	"github.com/engram-memory/engram/memory"
)

// The BlockMax WAND guard. Weaviate before 1.36 gave terms still in an
// unflushed memtable an upper bound of zero, so a limited BM25 search pruned
// memories that only such terms matched (upstream PR #11780; measured on
// 1.35.2: LoCoMo turn Hit@1 0.088 right after an import, 0.264 after a
// flush). These tests search straight after writing, before any flush, and
// require every needle found, with the scores Engram's own BM25 gives.

// needles are what an agent's memory must find by exact name: identifiers
// of the kinds agents write, then made-up names like LoCoMo's people and
// places (more needles, more chances to hit a pruned one).
var needles = func() []string {
	ns := []string{
		"tasks_claim", "getUserName", "main.go", "ops@example.io", "v1.38.11", "ENGRAM_DB", "weaviate-server",
		"PR-11780", "x86_64", "foo::bar", "C++", "Pemberton", "Zanzibar", "quetzalcoatl",
	}
	r := rand.New(rand.NewPCG(11, 12))
	const cons, vow = "bcdfghjklmnprstvz", "aeiou"
	seen := map[string]bool{}
	for len(ns) < 100 {
		var b strings.Builder
		for range 3 + r.IntN(2) {
			b.WriteByte(cons[r.IntN(len(cons))])
			b.WriteByte(vow[r.IntN(len(vow))])
		}
		b.WriteByte('x') // keeps them off English stems
		if w := b.String(); !seen[w] {
			seen[w] = true
			ns = append(ns, w)
		}
	}
	return ns
}()

// chatter is LoCoMo-style conversation: every turn is made of these common
// words, so that each question's common words match hundreds of turns and
// only its needle tells the right one apart.
var chatter = strings.Fields(`I you we really think going yesterday support group went painting last week
	friend told me about new job kids school summer trip camping love feel great talk soon sounds amazing
	what did when where why how time remember said maybe tomorrow weekend family dinner work project`)

// conversation makes n turns; turn i holds needle i (if any) among chatter.
func conversation(n int, prefix string, needles []string) []*memory.Memory {
	r := rand.New(rand.NewPCG(7, uint64(len(prefix))))
	speakers := []string{"Caroline", "Melanie"}
	var out []*memory.Memory
	for i := range n {
		w := make([]string, 8+r.IntN(16))
		for j := range w {
			w[j] = chatter[r.IntN(len(chatter))]
		}
		if i < len(needles) {
			at := r.IntN(len(w))
			w[at] = needles[i] + ","
		}
		text := speakers[i%2] + ": " + strings.Join(w, " ") + "."
		out = append(out, mem(fmt.Sprintf("%s-%04d", prefix, i), text, func(m *memory.Memory) {
			m.Scope = map[string]string{"team": "t"}
			m.Type = "event"
			v := make([]float32, 4)
			for j := range v {
				v[j] = float32(r.NormFloat64())
			}
			m.Embedding = &memory.Embedding{Model: fixtureModel, Dim: 4, Vector: v}
		}))
	}
	return out
}

// question asks about a needle in LoCoMo's style: common words around it.
func question(needle string) string {
	return "What did Caroline say about the support group and " + needle + " last week?"
}

// checkNeedles asks every needle's question at limit 10. The reference is
// Engram's own BM25 (internal/index, engramIndex) over the same memories,
// all of corpus (in no episode, and no question names a day):
// Weaviate's top 10 must score as the reference's does, place by place, and
// hold the needle's turn, which the reference's top 10 holds (else the
// fixture would prove nothing). The native hybrid call must find it too.
func checkNeedles(t *testing.T, s *Store, corpus, turns []*memory.Memory, needles []string) {
	t.Helper()
	ctx := ctxT(t)
	ref := engramIndex(corpus)
	missed, first := 0, 0
	f := memory.Filter{Scope: map[string]string{"team": "t"}}
	for i, n := range needles {
		want := turns[i].ID
		q := question(n)
		refHits, _ := ref.BM25(q, nil, nil, 10)
		if !slices.ContainsFunc(refHits, func(h bm25.Hit) bool { return ref.Doc(h.Doc).ID == want }) {
			t.Fatalf("fixture: the reference does not find %s for %q in its top 10", want, n)
		}
		if ref.Doc(refHits[0].Doc).ID == want {
			first++
		}
		lq := LegQuery{Text: q, Vector: []float32{1, 0, 0, 0}, Model: fixtureModel, Filter: f, K: 10}
		hits, err := s.BM25(ctx, lq)
		if err != nil {
			t.Fatal(err)
		}
		ok := len(hits) == len(refHits) && slices.ContainsFunc(hits, func(h Hit) bool { return h.Memory.ID == want })
		for k := 0; ok && k < len(hits); k++ {
			ok = math.Abs(hits[k].Score-refHits[k].Score) <= 1e-5*refHits[k].Score
		}
		if !ok {
			missed++
			t.Logf("bm25 %q: top %v, want the reference's scores with %s among them", n, firstIDs(hits), want)
		}
		// Vector weight 0 (alpha 0): the hybrid call's own keyword leg alone
		// decides, so a pruned needle cannot be rescued by a vector.
		hyb, err := s.Hybrid(ctx, HybridQuery{LegQuery: lq, BM25Weight: 1, VectorWeight: 0})
		if err != nil {
			t.Fatal(err)
		}
		if !slices.ContainsFunc(hyb, func(h HybridHit) bool { return h.Memory.ID == want }) {
			missed++
			t.Logf("hybrid %q: %s not in the top %d", n, want, len(hyb))
		}
	}
	if missed > 0 {
		t.Errorf("%d of %d needle searches missed", missed, 2*len(needles))
	}
	t.Logf("%d needles; the reference ranks %d of them first", len(needles), first)
}

func firstIDs(hits []Hit) []string {
	var ids []string
	for i, h := range hits {
		if i == 3 {
			break
		}
		ids = append(ids, h.Memory.ID)
	}
	return ids
}

// TestBlockMaxRightAfterImport: every needle is found at rank 1 by a search
// made the moment the import returns, with everything still in memtables.
func TestBlockMaxRightAfterImport(t *testing.T) {
	s := openTest(t, func(c *Config) { c.TenantKey = "team" })
	turns := conversation(1500, "turn", needles)
	put(t, s, turns...)
	checkNeedles(t, s, turns, turns, needles)
}

// TestBlockMaxAfterFlush: the defect's own setting. A first conversation is
// flushed to disk segments (a restart flushes every memtable), a second is
// imported and searched at once: its needles live only in the memtable while
// the questions' common words have real upper bounds in the segments.
func TestBlockMaxAfterFlush(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a private server twice")
	}
	srv := weaviatetest.Start(t)
	base := srv.URL
	cfg := Config{Endpoint: base, GRPCPort: srv.GRPCPort, Class: weaviatetest.Class(t, base), TenantKey: "team"}
	ctx := context.Background()
	s, err := Open(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	old := conversation(1500, "old", nil)
	put(t, s, old...)
	s.Close()
	if err := srv.Stop(); err != nil {
		t.Fatal(err)
	}
	if err := srv.Restart(); err != nil {
		t.Fatal(err)
	}
	if s, err = Open(ctx, cfg); err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	fresh := conversation(200, "new", needles)
	put(t, s, fresh...)
	checkNeedles(t, s, append(old, fresh...), fresh, needles)
}
