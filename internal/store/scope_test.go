package store

import (
	"context"
	"errors"
	"reflect"
	"testing"
	"time"

	"github.com/engram-memory/engram/memory"
)

func scoped(id string, scope map[string]string) *memory.Memory {
	m := testMemory(id)
	m.Scope = scope
	return m
}

var (
	t1   = map[string]string{"team": "t1"}
	t2   = map[string]string{"team": "t2"}
	t1u1 = map[string]string{"team": "t1", "user": "u1"}
	t1u2 = map[string]string{"team": "t1", "user": "u2"}
)

// TestIDNamespaces: ids are per-scope namespaces. The same id in two scopes
// is two memories; each scope's writes and reads by id touch its own; a
// parent scope reaches a child's memory when it has none of its own and the
// id is unique below it, and is told the id is ambiguous otherwise.
func TestIDNamespaces(t *testing.T) {
	ctx := context.Background()
	s, _ := openTemp(t)
	a1, a2 := scoped("x", t1), scoped("x", t2)
	a2.Text = "team two's x"
	if _, _, err := s.Put(ctx, t1, []*memory.Memory{a1}); err != nil {
		t.Fatal(err)
	}
	if _, _, err := s.Put(ctx, t2, []*memory.Memory{a2}); err != nil {
		t.Fatalf("team t2 could not use an id team t1 holds: %v", err)
	}
	if n, _ := s.Count(ctx); n != 2 {
		t.Fatalf("%d memories, want 2: the same id in two scopes is two memories", n)
	}
	if got := get1(t, s, t1, "x"); got == nil || got.Text != a1.Text {
		t.Fatalf("t1's x = %+v", got)
	}
	if got := get1(t, s, t2, "x"); got == nil || got.Text != "team two's x" {
		t.Fatalf("t2's x = %+v", got)
	}
	// A write outside the caller's scope is refused.
	if _, _, err := s.Put(ctx, t1, []*memory.Memory{scoped("y", t2)}); !errors.Is(err, memory.ErrInvalid) {
		t.Fatalf("t1 wrote into t2: %v", err)
	}
	// The whole store sees two memories named x, neither in its own scope.
	if _, err := s.Get(ctx, nil, []string{"x"}); !errors.Is(err, memory.ErrAmbiguous) {
		t.Fatalf("Get(x) in the whole store: %v, want ErrAmbiguous", err)
	}
	if _, _, _, err := s.Delete(ctx, nil, []string{"x"}); !errors.Is(err, memory.ErrAmbiguous) {
		t.Fatalf("Delete(x) in the whole store: %v, want ErrAmbiguous", err)
	}
	if _, _, _, err := s.RecordUse(ctx, nil, []string{"x"}, time.Unix(100, 0), true); !errors.Is(err, memory.ErrAmbiguous) {
		t.Fatalf("strict RecordUse(x) in the whole store: %v, want ErrAmbiguous", err)
	}
	if uses, _, _, err := s.RecordUse(ctx, nil, []string{"x"}, time.Unix(100, 0), false); err != nil || len(uses) != 0 {
		t.Fatalf("RecordUse(x) in the whole store: %v, %v; want it skipped", uses, err)
	}
	// A parent reaches its only child's memory; with its own, its own.
	c := scoped("c", t1u1)
	if _, _, err := s.Put(ctx, nil, []*memory.Memory{c}); err != nil {
		t.Fatal(err)
	}
	if got := get1(t, s, t1, "c"); got == nil || !reflect.DeepEqual(got.Scope, t1u1) {
		t.Fatalf("t1's Get of its child's c = %+v", got)
	}
	if _, _, err := s.Put(ctx, nil, []*memory.Memory{scoped("c", t1u2)}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Get(ctx, t1, []string{"c"}); !errors.Is(err, memory.ErrAmbiguous) {
		t.Fatalf("t1's Get of c held by two children: %v, want ErrAmbiguous", err)
	}
	if got := get1(t, s, t1u2, "c"); got == nil || !reflect.DeepEqual(got.Scope, t1u2) {
		t.Fatalf("u2's c = %+v", got)
	}
	own := scoped("c", t1)
	own.Text = "t1's own c"
	if _, _, err := s.Put(ctx, nil, []*memory.Memory{own}); err != nil {
		t.Fatal(err)
	}
	if got := get1(t, s, t1, "c"); got == nil || got.Text != "t1's own c" {
		t.Fatalf("t1's Get of c with its own = %+v", got)
	}
	// Deleting as t2 touches only t2's x.
	deleted, first, last, err := s.Delete(ctx, t2, []string{"x", "c", "nope"})
	if err != nil || !reflect.DeepEqual(deleted, []string{memory.Key("x", t2)}) || first != last || first == 0 {
		t.Fatalf("Delete as t2 = %v %d..%d, %v", deleted, first, last, err)
	}
	if get1(t, s, t1, "x") == nil {
		t.Fatal("t2's delete removed t1's x")
	}
	if deleted, first, last, err := s.Delete(ctx, t2, []string{"x"}); err != nil || deleted != nil || first != 0 || last != 0 {
		t.Fatalf("Delete of nothing = %v %d..%d, %v", deleted, first, last, err)
	}
	// Now x is unique in the whole store again.
	if got := get1(t, s, nil, "x"); got == nil || !reflect.DeepEqual(got.Scope, t1) {
		t.Fatalf("Get(x) = %+v", got)
	}
}

// TestScopedUses: RecordUse counts only what the ids name in scope; strict,
// one id outside fails the whole write.
func TestScopedUses(t *testing.T) {
	ctx := context.Background()
	s, _ := openTemp(t)
	if _, _, err := s.Put(ctx, nil, []*memory.Memory{scoped("a", t1), scoped("b", t2)}); err != nil {
		t.Fatal(err)
	}
	uses, _, _, err := s.RecordUse(ctx, t2, []string{"a", "b", "nope"}, time.Unix(100, 0), false)
	if err != nil || len(uses) != 1 || uses[0].ID != "b" || uses[0].Key != memory.Key("b", t2) {
		t.Fatalf("RecordUse as t2: %+v, %v; want b only", uses, err)
	}
	before := get1(t, s, nil, "a")
	if _, _, _, err := s.RecordUse(ctx, t2, []string{"b", "a"}, time.Unix(200, 0), true); !errors.Is(err, memory.ErrNotFound) {
		t.Fatalf("strict RecordUse of another scope's id: %v, want ErrNotFound", err)
	}
	if after := get1(t, s, nil, "b"); after.Uses != uses[0].Uses {
		t.Fatalf("a failed strict RecordUse still counted b: uses %d, want %d", after.Uses, uses[0].Uses)
	}
	if after := get1(t, s, nil, "a"); after.Uses != before.Uses {
		t.Fatalf("another scope's RecordUse counted a")
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
		got[u.Key] = u // the last use of a memory stands
	}
	if got[m.Key()].Uses != m.Uses+2 {
		t.Fatalf("a used twice: uses %d, want %d", got[m.Key()].Uses, m.Uses+2)
	}
	read, err := s.Usages(ctx, []string{m.Key(), memory.Key("b", t1), memory.Key("a", nil)})
	if err != nil || len(read) != 2 {
		t.Fatalf("Usages = %v, %v", read, err)
	}
	for key, u := range got {
		id, _ := memory.SplitKey(key)
		row := get1(t, s, nil, id)
		want := Usage{Key: key, ID: id, Uses: row.Uses, Demand: row.Demand, At: row.DemandAt}
		if !reflect.DeepEqual(u, want) || !reflect.DeepEqual(read[key], want) {
			t.Fatalf("%s: RecordUse gave %+v, Usages %+v, the row %+v", id, u, read[key], want)
		}
	}
}

// TestUpdateIsOneWrite: Update resolves, reads and writes in one
// transaction: a missing id is ErrNotFound, a move to a scope where the id is
// taken is refused, a move is logged as delete and put, and fn returning nil
// writes nothing.
func TestUpdateIsOneWrite(t *testing.T) {
	ctx := context.Background()
	s, _ := openTemp(t)
	if _, _, err := s.Put(ctx, nil, []*memory.Memory{scoped("a", t1u1), scoped("a", t1u2)}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Update(ctx, t1, "nope", nil); !errors.Is(err, memory.ErrNotFound) {
		t.Fatalf("Update(nope): %v", err)
	}
	if _, err := s.Update(ctx, t1, "a", nil); !errors.Is(err, memory.ErrAmbiguous) {
		t.Fatalf("Update of an ambiguous id: %v", err)
	}
	seq, _ := s.LastSeq(ctx)
	up, err := s.Update(ctx, t1u1, "a", func(m *memory.Memory) (*memory.Memory, error) { return nil, nil })
	if err != nil || up.Last != 0 || up.Memory == nil {
		t.Fatalf("a no-op Update = %+v, %v", up, err)
	}
	if now, _ := s.LastSeq(ctx); now != seq {
		t.Fatal("a no-op Update logged a change")
	}
	move := func(to map[string]string) (Updated, error) {
		return s.Update(ctx, t1u1, "a", func(m *memory.Memory) (*memory.Memory, error) { m.Scope = to; return m, nil })
	}
	if _, err := move(t1u2); err == nil {
		t.Fatal("Update moved a memory onto another with its id")
	}
	if _, err := s.Update(ctx, t1u1, "a", func(m *memory.Memory) (*memory.Memory, error) { m.Scope = t2; return m, nil }); !errors.Is(err, memory.ErrInvalid) {
		t.Fatalf("Update moved a memory out of the caller's scope: %v", err)
	}
	up, err = s.Update(ctx, t1u1, "a", func(m *memory.Memory) (*memory.Memory, error) { m.Scope = t1u1; m.Text = "changed"; return m, nil })
	if err != nil || up.Last != up.First {
		t.Fatalf("Update in place = %+v, %v; want one change", up, err)
	}
	ch, _ := s.Changes(ctx, up.Last-1, 10)
	if len(ch) != 1 || ch[0].Op != OpPut || ch[0].Key() != memory.Key("a", t1u1) {
		t.Fatalf("changes of an update in place: %+v", ch)
	}
	if got := get1(t, s, t1u1, "a"); got.Text != "changed" {
		t.Fatalf("after the update: %+v", got)
	}
	// From the parent, once the id is unique below it, to another child.
	if _, _, _, err := s.Delete(ctx, t1u2, []string{"a"}); err != nil {
		t.Fatal(err)
	}
	t1u3 := map[string]string{"team": "t1", "user": "u3"}
	up, err = s.Update(ctx, t1, "a", func(m *memory.Memory) (*memory.Memory, error) { m.Scope = t1u3; return m, nil })
	if err != nil || up.Last != up.First+1 || up.OldKey != memory.Key("a", t1u1) || up.Memory.Key() != memory.Key("a", t1u3) {
		t.Fatalf("a move = %+v, %v", up, err)
	}
	ch, _ = s.Changes(ctx, up.First-1, 10)
	if len(ch) != 2 || ch[0].Op != OpDelete || ch[0].Key() != up.OldKey || ch[1].Op != OpPut || ch[1].Key() != up.Memory.Key() {
		t.Fatalf("changes of a move: %+v", ch)
	}
	if get1(t, s, t1u1, "a") != nil || get1(t, s, t1u3, "a") == nil {
		t.Fatal("the move did not move")
	}
}
