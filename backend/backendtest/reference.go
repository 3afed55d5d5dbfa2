package backendtest

import (
	"fmt"
	"math"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/engram-memory/engram/backend"
	"github.com/engram-memory/engram/backend/memback"
	"github.com/engram-memory/engram/memory"
)

// The backend's legs against their brute-force twin, memback (the house
// rule: every fast path checked against its reference). A seeded random
// store of a few hundred memories (scopes, types, tags, episodes,
// supersession, times, memories without vectors) goes into both; every
// query text, filter and K is asked of both, and each leg must return the
// reference's scores position by position, each hit with the score the
// reference gives its memory (so the ranking is the reference's up to
// ties), and, for BM25, the same relevance scores and bound.
//
// Tolerances. Vector leg: 1e-5 absolute, for a backend that keeps vectors
// and computes cosines in float32 (the reference uses float64; a 16-d
// float32 dot product of unit vectors is good to about 1e-6; SQLite's
// differ from the reference's by about 1e-8). BM25: 1e-12 relative, room
// for the SQLite index's own order of operations (it folds idf·(k1+1) and
// k1·b/avgdl into constants first; its scores differ from the reference's
// in the last bit, about 1e-16, when they differ at all) and nothing more:
// a wrong field weight, length or statistic moves a score by 1e-4 or more.

// exactBM25 are the backend kinds (backend.Describer) whose keyword leg is
// Engram's own BM25 (internal/bm25 over internal/index's fields, the
// default tokenizer and parameters), held to the reference's scores. Another
// engine's keyword leg (Weaviate's BM25F, its own tokenizer and statistics)
// is checked by the rest of the suite, not against these scores.
var exactBM25 = map[string]bool{"sqlite": true, memback.Kind: true}

// Tolerances of the comparison, explained above.
const (
	vectorTol = 1e-5
	bm25Tol   = 1e-12
)

// referenceWords are the fixture's vocabulary: stems shared by several
// forms (deploy, deploys, deployed), stopwords, and words of one memory.
var referenceWords = strings.Fields(`deploy deploys deployed kafka consumer lag vault key rotate garden lilies porch
	coffee roof database staging reset night team review the a is of canary broker quarterly report`)

// referenceFixture is the seeded random store the comparison runs on.
func referenceFixture() []*memory.Memory {
	r := rand.New(rand.NewPCG(29, 1))
	scopes := []map[string]string{nil, teamA, teamAU1, teamAU2, teamB}
	words := func(n int) string {
		w := make([]string, n)
		for i := range w {
			w[i] = referenceWords[r.IntN(len(referenceWords))]
		}
		return strings.Join(w, " ")
	}
	var out []*memory.Memory
	for i := range 300 {
		sc := scopes[r.IntN(len(scopes))]
		m := mem(fmt.Sprintf("R%03d", i), words(2+r.IntN(12)), sc)
		if i%7 == 0 && i > 0 && memory.ScopeJSON(sc) != memory.ScopeJSON(out[i-1].Scope) { // the same id in another scope
			m.ID = out[i-1].ID
		}
		m.Type = []string{"note", "fact", "event"}[r.IntN(3)]
		if r.IntN(4) == 0 {
			m.Tags = []string{[]string{"x", "y"}[r.IntN(2)]}
		}
		if r.IntN(5) == 0 {
			m.Name = words(1 + r.IntN(3))
		}
		if r.IntN(6) == 0 {
			m.Description = words(3)
		}
		m.CreatedAt = at.Add(time.Duration(r.IntN(60*24)) * time.Hour)
		m.UpdatedAt, m.OccurredAt = m.CreatedAt, m.CreatedAt
		if r.IntN(5) == 0 { // a time of its own: its day is in the date field
			m.OccurredAt = m.CreatedAt.Add(-time.Duration(1+r.IntN(400)) * 24 * time.Hour)
		}
		if r.IntN(3) == 0 { // a turn of one of three episodes
			m.Episode, m.Seq, m.Speaker = fmt.Sprintf("chat %d", r.IntN(3)), int64(r.IntN(40)), []string{"Ana", "Bo"}[r.IntN(2)]
		}
		if i > 10 && r.IntN(10) == 0 {
			m.Supersedes = fmt.Sprintf("R%03d", r.IntN(i))
		}
		m.ContentHash = m.ComputeHash()
		m.Embedding.Vector = embedText(m.EmbedText())
		if r.IntN(8) == 0 {
			m.Embedding = nil
		}
		out = append(out, m)
	}
	return out
}

// referenceFilters are the filters the comparison asks under.
func referenceFilters() []struct {
	name string
	f    memory.Filter
} {
	since, until, asOf := at.Add(10*24*time.Hour), at.Add(40*24*time.Hour), at.Add(20*24*time.Hour)
	return []struct {
		name string
		f    memory.Filter
	}{
		{"none", memory.Filter{}},
		{"team a", memory.Filter{Scope: teamA}},
		{"user u1", memory.Filter{Scope: teamAU1}},
		{"team b", memory.Filter{Scope: teamB}},
		{"type", memory.Filter{Type: "fact"}},
		{"tag in scope", memory.Filter{Scope: teamA, Tags: []string{"x"}}},
		{"time", memory.Filter{Since: &since, Until: &until}},
		{"episode", memory.Filter{Episode: "chat 1"}},
		{"current", memory.Filter{Current: true}},
		{"as of", memory.Filter{Scope: teamA, AsOf: &asOf}},
	}
}

func testLegsReference(t *testing.T, s suite) {
	b := s.backend(t)
	exact := false
	if d, ok := b.(backend.Describer); ok {
		desc, err := d.Describe(ctx)
		if err != nil {
			t.Fatalf("Describe: %v", err)
		}
		exact = exactBM25[desc.Kind]
	}
	if !exact {
		t.Log("the backend's keyword leg is another engine's BM25: only the vector leg is held to the reference")
	}
	ref := memback.New()
	fixture := referenceFixture()
	put(t, b, nil, fixture...)
	put(t, ref, nil, fixture...)
	windows := []memory.TimeWindow{{Phrase: "in May", Since: at.Add(-400 * 24 * time.Hour), Until: at.Add(-200 * 24 * time.Hour), Boost: 1.5}}
	queries := []string{"deploy", "kafka consumer lag", "the vault key", "deployed deploys canary", "lilies lilies porch",
		"zeppelin", "staging database zeppelin", "quarterly report review night"}
	for _, rf := range referenceFilters() {
		name, f := rf.name, rf.f
		for _, text := range queries {
			all := legs(t, ref, backend.LegQuery{Filter: f, K: len(fixture), Text: text, Vector: embedText(text), Model: model})
			for _, c := range []struct {
				k       int
				windows []memory.TimeWindow
			}{{3, nil}, {10, windows}} {
				q := backend.LegQuery{Filter: f, K: c.k, Text: text, Vector: embedText(text), Model: model, Windows: c.windows}
				what := fmt.Sprintf("filter %s, query %q, K %d, windows %d", name, text, c.k, len(c.windows))
				compareLegs(t, what, q, legs(t, b, q), legs(t, ref, q), all, exact)
			}
		}
	}
	// A long query's reduction counts terms as the reference does.
	if qt, ok := b.(backend.QueryTermer); ok && exact {
		for _, sc := range []map[string]string{nil, teamA, teamAU1} {
			got, n, err := qt.QueryTerms(ctx, "deployed kafka the zeppelin deploys", sc)
			want, wn, werr := ref.QueryTerms(ctx, "deployed kafka the zeppelin deploys", sc)
			if err != nil || werr != nil || n != wn || !reflect.DeepEqual(got, want) {
				t.Fatalf("QueryTerms in %v = %+v of %d, %v; the reference says %+v of %d, %v", sc, got, n, err, want, wn, werr)
			}
		}
	}
}

// compareLegs holds got to want (the reference's answer to the same query,
// q) and every hit's score to all (the reference's scores of
// every memory the filter admits). With exact, ties are cut by memory key,
// as the reference cuts them: the hits after the best K (those a time
// window adds) must then be the reference's too. Without, which of several
// memories tied at the K-th score a leg keeps is the backend's choice, and
// with it which the window adds: those are held to the reference's scores,
// not to its list.
func compareLegs(t *testing.T, what string, q backend.LegQuery, got, want, all *backend.LegResult, exact bool) {
	t.Helper()
	k := q.K
	type leg struct {
		name            string
		got, want, all  []backend.Hit
		tol             float64
		relative, bound bool
	}
	legsOf := []leg{{name: "vector", got: got.Vector, want: want.Vector, all: all.Vector, tol: vectorTol}}
	if exact {
		legsOf = append(legsOf, leg{name: "bm25", got: got.BM25, want: want.BM25, all: all.BM25, tol: bm25Tol, relative: true, bound: true})
	}
	for _, l := range legsOf {
		near := func(a, b float64) bool {
			if l.relative {
				return math.Abs(a-b) <= l.tol*math.Max(math.Abs(a), math.Abs(b))
			}
			return math.Abs(a-b) <= l.tol
		}
		best := min(k, len(l.all)) // the hits before any a window adds
		if len(l.got) < best || (exact && len(l.got) != len(l.want)) || len(l.got) > best+k {
			t.Fatalf("%s: %s leg has %d hits %v, the reference %d %v", what, l.name, len(l.got), ids(l.got), len(l.want), ids(l.want))
		}
		compared := len(l.got)
		if !exact {
			compared = best
		}
		score := map[string]backend.Hit{}
		for _, h := range l.all {
			score[h.Memory.Key()] = h
		}
		seen := map[string]bool{}
		for i, h := range l.got {
			key := h.Memory.Key()
			if seen[key] {
				t.Fatalf("%s: %s leg returned %s %v twice", what, l.name, h.Memory.ID, h.Memory.Scope)
			}
			seen[key] = true
			if i < compared && !near(h.Score, l.want[i].Score) {
				t.Fatalf("%s: %s leg's hit %d (%s) scores %.15g, the reference's %d-th (%s) %.15g", what, l.name, i+1, h.Memory.ID, h.Score,
					i+1, l.want[i].Memory.ID, l.want[i].Score)
			}
			if i >= best && !memory.In(q.Windows, h.Memory.OccurredAt) {
				t.Fatalf("%s: %s leg's hit %d (%s) comes after the best %d but did not occur in a window", what, l.name, i+1, h.Memory.ID, best)
			}
			if i > best && h.Score > l.got[i-1].Score {
				t.Fatalf("%s: %s leg's hits after the best %d are not best first: %v", what, l.name, best, ids(l.got))
			}
			r, ok := score[key]
			if !ok {
				t.Fatalf("%s: %s leg returned %s %v, which the reference does not find", what, l.name, h.Memory.ID, h.Memory.Scope)
			}
			if !near(h.Score, r.Score) {
				t.Fatalf("%s: %s leg scores %s %.15g, the reference %.15g", what, l.name, h.Memory.ID, h.Score, r.Score)
			}
			if l.bound && !near(h.RelevanceScore, r.RelevanceScore) {
				t.Fatalf("%s: %s leg's relevance score of %s %.15g, the reference's %.15g", what, l.name, h.Memory.ID, h.RelevanceScore, r.RelevanceScore)
			}
		}
		if l.bound && !near(got.Bound, want.Bound) {
			t.Fatalf("%s: bound %.15g, the reference's %.15g", what, got.Bound, want.Bound)
		}
	}
}
