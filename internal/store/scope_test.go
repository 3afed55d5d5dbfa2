package store

import (
	"context"
	"errors"
	"reflect"
	"testing"
	"time"

	"github.com/engram-memory/engram/memory"
)

func scoped(id, team string) *memory.Memory {
	m := testMemory(id)
	m.Scope = map[string]string{"team": team}
	return m
}

// TestScopedWrites: a write confined to a scope checks, inside its own
// transaction, that it touches only memories in that scope: a taken id fails
// the whole Put, Delete skips the others' ids, and RecordUse skips them or,
// strict, fails without recording anything.
func TestScopedWrites(t *testing.T) {
	ctx := context.Background()
	s, _ := openTemp(t)
	t1, t2 := map[string]string{"team": "t1"}, map[string]string{"team": "t2"}
	if _, _, err := s.Put(ctx, nil, []*memory.Memory{scoped("a", "t1"), scoped("b", "t2")}); err != nil {
		t.Fatal(err)
	}
	// t1 may replace its own a, not t2's b; the batch fails whole.
	_, _, err := s.Put(ctx, t1, []*memory.Memory{scoped("a", "t1"), scoped("b", "t1")})
	if !errors.Is(err, memory.ErrInvalid) {
		t.Fatalf("Put over another scope's id: %v, want ErrInvalid", err)
	}
	if got, _ := s.Get(ctx, "b"); got.Scope["team"] != "t2" {
		t.Fatalf("b was taken over: %+v", got.Scope)
	}
	if first, last, err := s.Put(ctx, t1, []*memory.Memory{scoped("a", "t1"), scoped("c", "t1")}); err != nil || last-first != 1 {
		t.Fatalf("Put in scope: %d..%d, %v", first, last, err)
	}

	uses, _, _, err := s.RecordUse(ctx, t2, []string{"a", "b", "nope"}, time.Unix(100, 0), false)
	if err != nil || len(uses) != 1 || uses[0].ID != "b" {
		t.Fatalf("RecordUse as t2: %+v, %v; want b only", uses, err)
	}
	before, _ := s.Get(ctx, "a")
	if _, _, _, err := s.RecordUse(ctx, t2, []string{"b", "a"}, time.Unix(200, 0), true); !errors.Is(err, memory.ErrNotFound) {
		t.Fatalf("strict RecordUse of another scope's id: %v, want ErrNotFound", err)
	}
	if after, _ := s.Get(ctx, "b"); after.Uses != uses[0].Uses {
		t.Fatalf("a failed strict RecordUse still counted b: uses %d, want %d", after.Uses, uses[0].Uses)
	}
	if after, _ := s.Get(ctx, "a"); after.Uses != before.Uses {
		t.Fatalf("another scope's RecordUse counted a")
	}

	deleted, first, last, err := s.Delete(ctx, t2, []string{"a", "b", "nope"})
	if err != nil || !reflect.DeepEqual(deleted, []string{"b"}) || first != last || first == 0 {
		t.Fatalf("Delete as t2 = %v %d..%d, %v; want [b] and one seq", deleted, first, last, err)
	}
	if _, err := s.Get(ctx, "a"); err != nil {
		t.Fatalf("t2's delete removed t1's a: %v", err)
	}
	if deleted, first, last, err := s.Delete(ctx, t2, []string{"a"}); err != nil || deleted != nil || first != 0 || last != 0 {
		t.Fatalf("Delete of nothing = %v %d..%d, %v", deleted, first, last, err)
	}
}

// TestRecordUseReturnsTheRow: what RecordUse returns is exactly what reading
// the row back gives, so a reader can apply it without the read; Usages
// reads the same counters, and RowsRead counts one row per id.
func TestRecordUseReturnsTheRow(t *testing.T) {
	ctx := context.Background()
	s, _ := openTemp(t)
	m := testMemory("a")
	if _, _, err := s.Put(ctx, nil, []*memory.Memory{m, testMemory("b")}); err != nil {
		t.Fatal(err)
	}
	now := time.Date(2026, 12, 24, 10, 0, 0, 987654321, time.Local)
	reads := s.RowsRead()
	uses, first, last, err := s.RecordUse(ctx, nil, []string{"a", "a", "b"}, now, true)
	if err != nil || len(uses) != 3 || last-first != 2 {
		t.Fatalf("RecordUse = %+v %d..%d, %v", uses, first, last, err)
	}
	if n := s.RowsRead() - reads; n != 3 {
		t.Fatalf("RecordUse of 3 ids read %d rows", n)
	}
	got := map[string]Usage{}
	for _, u := range uses {
		got[u.ID] = u // the last use of an id stands
	}
	if got["a"].Uses != m.Uses+2 {
		t.Fatalf("a used twice: uses %d, want %d", got["a"].Uses, m.Uses+2)
	}
	read, err := s.Usages(ctx, []string{"a", "b", "nope"})
	if err != nil || len(read) != 2 {
		t.Fatalf("Usages = %v, %v", read, err)
	}
	for id, u := range got {
		row, err := s.Get(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		want := Usage{ID: id, Uses: row.Uses, Demand: row.Demand, At: row.DemandAt}
		if !reflect.DeepEqual(u, want) || !reflect.DeepEqual(read[id], want) {
			t.Fatalf("%s: RecordUse gave %+v, Usages %+v, the row %+v", id, u, read[id], want)
		}
	}
}
