package weaviate

import (
	"errors"
	"fmt"
	"slices"
	"testing"

	"github.com/engram-memory/engram/memory"
)

func scopeOf(kv ...string) map[string]string {
	m := map[string]string{}
	for i := 0; i+1 < len(kv); i += 2 {
		m[kv[i]] = kv[i+1]
	}
	return m
}

// TestTenantsKeptApart: with tenant=team, the same id in two teams is two
// memories; a team never reads, counts, finds, deletes or senses another's.
func TestTenantsKeptApart(t *testing.T) {
	s := openTest(t, func(c *Config) { c.TenantKey = "team" })
	ctx := ctxT(t)
	a := mem("same", "zebra notes of team a", func(m *memory.Memory) { m.Scope = scopeOf("team", "a", "user", "u1") })
	b := mem("same", "zebra notes of team b", func(m *memory.Memory) { m.Scope = scopeOf("team", "b") })
	onlyB := mem("only-b", "zebra secret of team b", func(m *memory.Memory) { m.Scope = scopeOf("team", "b") })
	put(t, s, a, b, onlyB)

	teamA, teamB := scopeOf("team", "a"), scopeOf("team", "b")
	if got, err := s.Get(ctx, teamA, "same"); err != nil || got.Text != a.Text {
		t.Fatalf("team a get same = %v, %v", got, err)
	}
	if got, err := s.Get(ctx, teamB, "same"); err != nil || got.Text != b.Text {
		t.Fatalf("team b get same = %v, %v", got, err)
	}
	if _, err := s.Get(ctx, teamA, "only-b"); !errors.Is(err, memory.ErrNotFound) {
		t.Fatalf("team a reading team b's id: %v, want ErrNotFound", err)
	}
	if _, err := s.Get(ctx, nil, "same"); !errors.Is(err, ErrAmbiguous) {
		t.Fatalf("unscoped get of an id in two tenants: %v, want ErrAmbiguous", err)
	}
	if _, err := s.Get(ctx, scopeOf("team", "a", "user", "u2"), "same"); !errors.Is(err, memory.ErrNotFound) {
		t.Fatalf("another user of team a: %v, want ErrNotFound", err)
	}
	hits, err := s.BM25(ctx, LegQuery{Text: "zebra secret", Filter: memory.Filter{Scope: teamA}, K: 10})
	if err != nil || len(hits) != 1 || hits[0].Memory.Text != a.Text {
		t.Fatalf("team a search = %v, %v; want only its own memory", hitIDs(hits), err)
	}
	if n, err := s.Delete(ctx, teamA, []string{"only-b", "same"}); err != nil || n != 1 {
		t.Fatalf("team a delete = %d, %v; want 1 (its own)", n, err)
	}
	if got, err := s.Get(ctx, teamB, "same"); err != nil || got.Text != b.Text {
		t.Fatalf("team b's memory after team a's delete: %v, %v", got, err)
	}
	if n, err := s.Count(ctx, memory.Filter{Scope: teamB}); err != nil || n != 2 {
		t.Fatalf("team b count = %d, %v; want 2", n, err)
	}
}

// TestMissingTenantIsEmpty: reading, counting, searching or deleting in a
// tenant that was never written answers like an empty one and creates no
// tenant (tenantNotFoundText still matches what the server says).
func TestMissingTenantIsEmpty(t *testing.T) {
	s := openTest(t, func(c *Config) { c.TenantKey = "team" })
	ctx := ctxT(t)
	// Before any write there is no tenant at all: an unscoped read visits none.
	lq := LegQuery{Text: "hello", Vector: []float32{1}, Model: "m", K: 5}
	if hits, err := s.BM25(ctx, lq); err != nil || len(hits) != 0 {
		t.Errorf("bm25 over no tenant = %v, %v", hits, err)
	}
	if n, err := s.Count(ctx, memory.Filter{}); err != nil || n != 0 {
		t.Errorf("count over no tenant = %d, %v", n, err)
	}
	put(t, s, mem("x", "hello", func(m *memory.Memory) { m.Scope = scopeOf("team", "a") }))
	ghost := scopeOf("team", "ghost")
	if _, err := s.Get(ctx, ghost, "x"); !errors.Is(err, memory.ErrNotFound) {
		t.Errorf("get: %v", err)
	}
	if n, err := s.Count(ctx, memory.Filter{Scope: ghost}); err != nil || n != 0 {
		t.Errorf("count = %d, %v", n, err)
	}
	if hits, err := s.BM25(ctx, LegQuery{Text: "hello", Filter: memory.Filter{Scope: ghost}, K: 5}); err != nil || len(hits) != 0 {
		t.Errorf("bm25 = %v, %v", hits, err)
	}
	if n, err := s.Delete(ctx, ghost, []string{"x"}); err != nil || n != 0 {
		t.Errorf("delete = %d, %v", n, err)
	}
	if p, err := s.List(ctx, memory.Filter{Scope: ghost}, "", 10, false); err != nil || len(p.Memories) != 0 {
		t.Errorf("list = %v, %v", p, err)
	}
	tenants, err := s.Tenants(ctx)
	if err != nil || !slices.Equal(tenants, []string{"a"}) {
		t.Errorf("tenants = %v, %v; want only a (reads create none)", tenants, err)
	}
}

// TestBM25StatisticsPerTenant: Weaviate's tenants are separate shards, so a
// tenant's BM25 scores depend on its own memories only: filling another
// tenant with the query's term leaves them bit for bit unchanged. The same
// memories separated by a filter instead (no tenant key) share the
// statistics: the other scope's memories move the scores. That is why the
// tenant key must be the scope key that API keys are bound to.
func TestBM25StatisticsPerTenant(t *testing.T) {
	for _, c := range []struct {
		tenantKey string
		isolated  bool
	}{{"team", true}, {"", false}} {
		t.Run(fmt.Sprintf("tenant=%q", c.tenantKey), func(t *testing.T) {
			s := openTest(t, func(cfg *Config) { cfg.TenantKey = c.tenantKey })
			ctx := ctxT(t)
			var mine []*memory.Memory
			for i := range 6 {
				text := "plain words here"
				if i < 2 {
					text = "zebra crossing " + text
				}
				mine = append(mine, mem(fmt.Sprintf("a%d", i), text, func(m *memory.Memory) { m.Scope = scopeOf("team", "a") }))
			}
			put(t, s, mine...)
			q := LegQuery{Text: "zebra", Filter: memory.Filter{Scope: scopeOf("team", "a")}, K: 10}
			before, err := s.BM25(ctx, q)
			if err != nil || len(before) != 2 {
				t.Fatalf("bm25 = %v, %v", hitIDs(before), err)
			}
			var theirs []*memory.Memory
			for i := range 40 {
				theirs = append(theirs, mem(fmt.Sprintf("b%d", i), "zebra zebra stripes and a much longer text than team a writes",
					func(m *memory.Memory) { m.Scope = scopeOf("team", "b") }))
			}
			put(t, s, theirs...)
			after, err := s.BM25(ctx, q)
			if err != nil || len(after) != 2 {
				t.Fatalf("bm25 = %v, %v", hitIDs(after), err)
			}
			same := before[0].Score == after[0].Score && before[1].Score == after[1].Score
			if same != c.isolated {
				t.Errorf("scores before %v/%v, after %v/%v: unchanged = %v, want %v",
					before[0].Score, before[1].Score, after[0].Score, after[1].Score, same, c.isolated)
			}
		})
	}
}
