package store

import (
	"context"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/engram-memory/engram/memory"
)

// damage applies hand edits to rows, as a corrupting tool would.
func damage(t testing.TB, s *Store, stmts ...string) {
	t.Helper()
	for _, q := range stmts {
		if _, err := s.db.Exec(q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
}

// TestBadRowsSalvaged: one malformed row never makes the store unreadable.
// Scan skips what cannot be trusted (a scope that is no JSON object) and
// reads the rest without the damaged part (a 2-byte vector blob, a REAL
// counter out of range, metadata that is no JSON object, tags that are no
// array), reporting each; lookups by id tolerate the same, and a use of a
// memory with a poisoned counter stores a valid one.
func TestBadRowsSalvaged(t *testing.T) {
	ctx := context.Background()
	s, _ := openTemp(t)
	var mems []*memory.Memory
	for _, id := range []string{"good", "scope", "blob", "uses", "meta", "tags", "demand"} {
		mems = append(mems, testMemory(id))
	}
	if _, _, err := s.Put(ctx, nil, mems); err != nil {
		t.Fatal(err)
	}
	damage(t, s,
		`UPDATE memories SET scope = '{"team":' WHERE id = 'scope'`,
		`UPDATE memories SET embedding = x'0102' WHERE id = 'blob'`,
		`UPDATE memories SET uses = 9.3e18 WHERE id = 'uses'`,
		`UPDATE memories SET metadata = 'not json' WHERE id = 'meta'`,
		`UPDATE memories SET tags = '{"a":1}' WHERE id = 'tags'`,
		`UPDATE memories SET demand = -5 WHERE id = 'demand'`,
	)
	var got []string
	bad := map[string]BadRow{}
	err := s.Scan(ctx, func(m *memory.Memory) error {
		got = append(got, m.ID)
		if err := m.CheckStored(); err != nil {
			t.Errorf("memory %s read with invalid fields: %v", m.ID, err)
		}
		return nil
	}, func(b BadRow) { bad[b.ID] = b })
	if err != nil {
		t.Fatalf("Scan stopped: %v", err)
	}
	if want := "blob,demand,good,meta,tags,uses"; strings.Join(got, ",") != want {
		t.Fatalf("Scan read %v, want %s", got, want)
	}
	for id, c := range map[string]struct {
		skipped bool
		says    string
	}{
		"scope":  {true, "scope is not a JSON object"},
		"blob":   {false, "embedding"},
		"uses":   {false, "uses 9223372036854775807 out of range"},
		"meta":   {false, "metadata"},
		"tags":   {false, "tags"},
		"demand": {false, "demand -5 out of range"},
	} {
		b, ok := bad[id]
		if !ok || b.Skipped != c.skipped || !strings.Contains(b.Problem, c.says) {
			t.Errorf("%s: reported %+v, want skipped=%v saying %q", id, b, c.skipped, c.says)
		}
	}
	if _, ok := bad["good"]; ok || len(bad) != 6 {
		t.Errorf("bad rows %v", bad)
	}
	if m := get1(t, s, nil, "blob"); m == nil || m.Embedding != nil {
		t.Fatalf("Get of the row with a broken vector: %+v", m)
	}
	if m := get1(t, s, nil, "scope"); m != nil {
		t.Fatalf("a row whose scope cannot be read was returned: %+v", m)
	}
	// The poisoned counter: a use saturates and stores valid numbers.
	uses, _, _, err := s.RecordUse(ctx, nil, []string{"uses", "demand"}, time.Now(), true)
	if err != nil || len(uses) != 2 {
		t.Fatalf("RecordUse over damaged counters: %+v, %v", uses, err)
	}
	if uses[0].Uses != memory.MaxUses || uses[1].Demand != 1 {
		t.Fatalf("uses after a use of damaged counters: %+v", uses)
	}
	if m := get1(t, s, nil, "uses"); m == nil || m.Uses != memory.MaxUses {
		t.Fatalf("after the use: %+v", m)
	}
	bad = map[string]BadRow{}
	s.Scan(ctx, func(*memory.Memory) error { return nil }, func(b BadRow) { bad[b.ID] = b })
	if _, ok := bad["uses"]; ok {
		t.Fatalf("the use did not store a valid counter: %+v", bad["uses"])
	}
}

// TestUseSaturates: counting never overflows, whatever was stored.
func TestUseSaturates(t *testing.T) {
	at := time.Unix(1000, 0)
	for _, c := range []struct {
		uses     int64
		demand   float64
		wantUses int64
	}{
		{0, 0, 1},
		{memory.MaxUses - 1, 1, memory.MaxUses},
		{memory.MaxUses, memory.MaxDemand, memory.MaxUses},
		{math.MaxInt64, math.Inf(1), memory.MaxUses},
		{-7, math.NaN(), 1},
	} {
		n, d := memory.Use(c.uses, c.demand, &at, at.Add(time.Hour))
		if n != c.wantUses || !(d >= 1 && d <= memory.MaxDemand) {
			t.Errorf("Use(%d, %v) = %d, %v", c.uses, c.demand, n, d)
		}
	}
}
