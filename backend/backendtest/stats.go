package backendtest

import (
	"fmt"
	"strings"
	"testing"

	"github.com/engram-memory/engram"
	"github.com/engram-memory/engram/backend"
	"github.com/engram-memory/engram/memory"
)

// Scores seen in a scope depend on the memories in that scope only (DESIGN
// §8): BM25's statistics (document count, mean length, document frequencies)
// and the relevance bound are the scope's, so a tenant cannot test whether
// another tenant's memories hold a word by watching its own scores move.

// scoreSnapshot is what a scoped caller sees of a BM25 leg: every hit's id,
// score and relevance score, and the bound.
func scoreSnapshot(t *testing.T, b backend.Backend, scope map[string]string, query string) string {
	t.Helper()
	res := legs(t, b, backend.LegQuery{Filter: memory.Filter{Scope: scope}, K: 20, Text: query})
	s := fmt.Sprintf("bound %.12g:", res.Bound)
	for _, h := range res.BM25 {
		s += fmt.Sprintf(" %s=%.12g/%.12g", h.Memory.ID, h.Score, h.RelevanceScore)
	}
	return s
}

func testLegsScopeStats(t *testing.T, s suite) {
	b := s.backend(t)
	if sc, ok := b.(backend.StatsScoper); ok {
		testLegsTenantStats(t, b, sc.StatsKey())
		return
	}
	put(t, b, nil,
		mem("01A", "the deploy key lives in the vault", teamAU1),
		mem("01B", "rotate the deploy key every quarter", teamAU1),
		mem("01C", "the vault opens with two people", teamAU1),
	)
	queries := []string{"deploy key", "vault", "deploy kubernetes", "quarter people"}
	scopes := []map[string]string{teamAU1, teamA}
	before := map[string]string{}
	for _, sc := range scopes {
		for _, q := range queries {
			before[fmt.Sprint(sc, q)] = scoreSnapshot(t, b, sc, q)
		}
	}
	// Other tenants write the query's words, often, in long and short
	// memories: a sibling under the same parent, another team, and no scope.
	var others []*memory.Memory
	for i := range 40 {
		text := "kubernetes deploy deploy key key cluster"
		if i%3 == 0 {
			text = "vault"
		}
		sc := []map[string]string{teamB, nil, {"team": "b", "user": "u1"}}[i%3]
		others = append(others, mem(fmt.Sprintf("02%02d", i), text, sc))
	}
	put(t, b, nil, others...)
	for _, q := range queries {
		if got, was := scoreSnapshot(t, b, teamAU1, q), before[fmt.Sprint(teamAU1, q)]; got != was {
			t.Fatalf("query %q in u1's scope: scores moved when other tenants wrote\n was %s\n now %s", q, was, got)
		}
	}
	// A sibling's memories are outside u1's scope, inside the parent's.
	put(t, b, nil, mem("03S", "deploy key deploy key for the sibling", teamAU2))
	for _, q := range queries {
		if got, was := scoreSnapshot(t, b, teamAU1, q), before[fmt.Sprint(teamAU1, q)]; got != was {
			t.Fatalf("query %q in u1's scope: scores moved when a sibling wrote\n was %s\n now %s", q, was, got)
		}
	}
	if got, was := scoreSnapshot(t, b, teamA, "deploy key"), before[fmt.Sprint(teamA, "deploy key")]; got == was {
		t.Fatalf("the parent's scores did not see its child's new memory: %s", got)
	}
}

// testEngineScores: through the engine, a tenant's whole response (scores,
// relevance, explanations) is the same before and after another tenant adds
// memories that hold the query's words.
func testEngineScores(t *testing.T, s suite) {
	db := s.engine(t)
	if sc, ok := db.Backend().(backend.StatsScoper); ok && sc.StatsKey() != "team" {
		t.Skipf("the backend keeps BM25 statistics per value of scope key %q, not of \"team\", which the tenants here differ in: their scores are not isolated", sc.StatsKey())
	}
	a, _ := db.WithScope(teamA)
	bv, _ := db.WithScope(teamB)
	if _, err := a.Add(ctx, &engram.Memory{ID: "a1", Text: "our staging database is postgres 16"},
		&engram.Memory{ID: "a2", Text: "the staging cluster runs in frankfurt"}); err != nil {
		t.Fatal(err)
	}
	snapshot := func() string {
		var out string
		for _, mode := range []string{memory.ModeBM25, memory.ModeHybrid} {
			resp := search(t, a, engram.Query{Query: "staging database zebrafish", Mode: mode})
			for _, r := range resp.Results {
				out += fmt.Sprintf("%s %s %.12g %.12g %v|", mode, r.ID, r.Score, r.Explain.Relevance, r.Explain.BM25)
				if r.Explain.BM25 != nil {
					out += fmt.Sprintf("%.12g|", r.Explain.BM25.Score)
				}
			}
		}
		return out
	}
	was := snapshot()
	if was == "" {
		t.Fatal("team a found nothing")
	}
	for i := range 30 {
		if _, err := bv.Add(ctx, &engram.Memory{Text: fmt.Sprintf("zebrafish %d staging staging database notes", i)}); err != nil {
			t.Fatal(err)
		}
	}
	if now := snapshot(); now != was {
		t.Fatalf("team a's scores moved when team b wrote the query's words:\n was %s\n now %s", was, now)
	}
}

// testLegsTenantStats is LegsScopeStats for a backend that keeps BM25
// statistics per value of one scope key (backend.StatsScoper), as Weaviate
// does per tenant: writes under another value of the key never move a
// scope's scores; writes under the same value do, even outside the scope
// (the documented difference from statistics per full scope).
func testLegsTenantStats(t *testing.T, b backend.Backend, key string) {
	if key == "" {
		t.Skip("the backend keeps one set of BM25 statistics for the whole store (StatsScoper key \"\"): no scope's scores are isolated; open it with a tenant key to test isolation")
	}
	u1 := map[string]string{key: "a", "user": "u1"}
	u2 := map[string]string{key: "a", "user": "u2"}
	put(t, b, nil,
		mem("01A", "the deploy key lives in the vault", u1),
		mem("01B", "rotate the deploy key every quarter", u1),
		mem("01C", "the vault opens with two people", u1),
	)
	queries := []string{"deploy key", "vault", "deploy kubernetes", "quarter people"}
	before := map[string]string{}
	for _, q := range queries {
		before[q] = scoreSnapshot(t, b, u1, q)
	}
	var others []*memory.Memory
	for i := range 40 {
		text := "kubernetes deploy deploy key key cluster"
		if i%3 == 0 {
			text = "vault"
		}
		sc := []map[string]string{{key: "b"}, nil, {key: "b", "user": "u1"}, {"user": "u1"}}[i%4]
		others = append(others, mem(fmt.Sprintf("02%02d", i), text, sc))
	}
	put(t, b, nil, others...)
	for _, q := range queries {
		if got, was := scoreSnapshot(t, b, u1, q), before[q]; got != was {
			t.Fatalf("query %q in u1's scope: scores moved when other tenants (%s other than a) wrote\n was %s\n now %s", q, key, was, got)
		}
	}
	// A sibling shares u1's tenant: its memories stay out of u1's results,
	// but count in the tenant's statistics.
	put(t, b, nil, mem("03S", "deploy key deploy key for the sibling", u2))
	got := scoreSnapshot(t, b, u1, "deploy key")
	if got == before["deploy key"] {
		t.Fatalf("statistics per %s: a sibling's memory in the same tenant did not move u1's scores, so they are per full scope: drop StatsScoper", key)
	}
	if strings.Contains(got, "03S") {
		t.Fatalf("u1's search found the sibling's memory: %s", got)
	}
}
