package backendtest

import (
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/engram-memory/engram"
	"github.com/engram-memory/engram/backend"
	"github.com/engram-memory/engram/memory"
)

// The id rule (backend.Backend, memory.ErrAmbiguous): ids are per-scope
// namespaces, and an id given to a scoped call resolves to the memory in the
// caller's own scope, else the only one inside it.

var (
	teamAU1 = map[string]string{"team": "a", "user": "u1"}
	teamAU2 = map[string]string{"team": "a", "user": "u2"}
)

func testIDNamespaces(t *testing.T, s suite) {
	b := s.backend(t)
	put(t, b, teamA, mem("01X", "team a's x about owls", teamA))
	put(t, b, teamB, mem("01X", "team b's x about owls", teamB))
	// Two memories, each its scope's own.
	if got := list(t, b, backend.ListQuery{}); !reflect.DeepEqual(got, []string{"01X", "01X"}) {
		t.Fatalf("List = %v, want 01X twice (two scopes)", got)
	}
	for scope, text := range map[*map[string]string]string{&teamA: "team a's x about owls", &teamB: "team b's x about owls"} {
		if got := get(t, b, *scope, "01X"); got == nil || got.Text != text || !reflect.DeepEqual(got.Scope, *scope) {
			t.Fatalf("Get(01X) in %v = %+v", *scope, got)
		}
	}
	// The whole store sees both and has none of its own: ambiguous.
	if _, err := b.Get(ctx, nil, []string{"01X"}); !errors.Is(err, memory.ErrAmbiguous) {
		t.Fatalf("Get(01X) in the whole store: %v, want ErrAmbiguous", err)
	}
	if _, err := b.Delete(ctx, nil, []string{"01X"}); !errors.Is(err, memory.ErrAmbiguous) {
		t.Fatalf("Delete(01X) in the whole store: %v, want ErrAmbiguous", err)
	}
	if _, err := b.RecordUse(ctx, nil, []string{"01X"}, at, true); !errors.Is(err, memory.ErrAmbiguous) {
		t.Fatalf("strict RecordUse(01X) in the whole store: %v, want ErrAmbiguous", err)
	}
	// Scoped calls act on their own memory only.
	uses, err := b.RecordUse(ctx, teamB, []string{"01X"}, at, true)
	if err != nil || len(uses) != 1 || uses[0].Uses != 1 {
		t.Fatalf("team b's RecordUse(01X) = %+v, %v", uses, err)
	}
	if got := get(t, b, teamA, "01X"); got.Uses != 0 {
		t.Fatalf("team b's use counted team a's 01X: %+v", got)
	}
	v := &memory.Embedding{Model: "other:model", Dim: 2, Vector: []float32{0.6, 0.8}}
	if n, err := b.SetEmbeddings(ctx, teamB, []backend.EmbeddingUpdate{{ID: "01X", Hash: get(t, b, teamB, "01X").ContentHash, Embedding: v}}); err != nil || n != 1 {
		t.Fatalf("team b's SetEmbeddings(01X) = %d, %v", n, err)
	}
	if got := get(t, b, teamA, "01X"); got.Embedding == nil || got.Embedding.Model != model {
		t.Fatalf("team b's SetEmbeddings changed team a's 01X: %+v", got.Embedding)
	}
	// Both are found, each with its scope, by a search of the whole store.
	res := legs(t, b, backend.LegQuery{K: 10, Text: "owls"})
	if len(res.BM25) != 2 || reflect.DeepEqual(res.BM25[0].Memory.Scope, res.BM25[1].Memory.Scope) {
		t.Fatalf("the whole store's search for owls: %v", res.BM25)
	}
	if n, err := b.Delete(ctx, teamA, []string{"01X"}); err != nil || n != 1 {
		t.Fatalf("team a's Delete(01X) = %d, %v", n, err)
	}
	if get(t, b, teamB, "01X") == nil {
		t.Fatal("team a's delete removed team b's 01X")
	}
	// One left: the whole store reaches it again.
	if got := get(t, b, nil, "01X"); got == nil || !reflect.DeepEqual(got.Scope, teamB) {
		t.Fatalf("Get(01X) in the whole store with one left = %+v", got)
	}
}

func testIDNesting(t *testing.T, s suite) {
	b := s.backend(t)
	// A parent scope reaches its only child's memory by id.
	put(t, b, nil, mem("01C", "u1's note", teamAU1))
	if got := get(t, b, teamA, "01C"); got == nil || !reflect.DeepEqual(got.Scope, teamAU1) {
		t.Fatalf("team a's Get of u1's 01C = %+v", got)
	}
	// Two children hold it: ambiguous for the parent, each child's own for it.
	put(t, b, nil, mem("01C", "u2's note", teamAU2))
	if _, err := b.Get(ctx, teamA, []string{"01C"}); !errors.Is(err, memory.ErrAmbiguous) {
		t.Fatalf("team a's Get of 01C held by two children: %v, want ErrAmbiguous", err)
	}
	for _, sc := range []map[string]string{teamAU1, teamAU2} {
		if got := get(t, b, sc, "01C"); got == nil || !reflect.DeepEqual(got.Scope, sc) {
			t.Fatalf("Get(01C) in %v = %+v", sc, got)
		}
	}
	// The parent's own memory with the id is what the parent addresses.
	put(t, b, nil, mem("01C", "team a's own note", teamA))
	if got := get(t, b, teamA, "01C"); got == nil || got.Text != "team a's own note" {
		t.Fatalf("team a's Get of 01C with its own = %+v", got)
	}
	if n, err := b.Delete(ctx, teamA, []string{"01C"}); err != nil || n != 1 {
		t.Fatalf("team a's Delete(01C) = %d, %v", n, err)
	}
	if got := list(t, b, backend.ListQuery{Filter: memory.Filter{Scope: teamA}}); len(got) != 2 {
		t.Fatalf("team a's delete of its own 01C removed a child's: %v left", got)
	}
	// A child never reaches its parent's memory.
	put(t, b, nil, mem("01P", "the parent's", teamA))
	if got := get(t, b, teamAU1, "01P"); got != nil {
		t.Fatalf("u1 reached its parent's memory: %+v", got)
	}
}

func testUpdate(t *testing.T, s suite) {
	b := s.backend(t)
	put(t, b, nil, mem("01A", "the first text mentions zebras", teamAU1), mem("01T", "a memory in u2", teamAU2))
	if _, err := b.Update(ctx, teamB, "01A", func(m *memory.Memory) (*memory.Memory, error) { return m, nil }); !errors.Is(err, memory.ErrNotFound) {
		t.Fatalf("team b's Update of team a's memory: %v, want ErrNotFound", err)
	}
	got, err := b.Update(ctx, teamA, "01A", func(m *memory.Memory) (*memory.Memory, error) {
		m.Text, m.UpdatedAt = "the new text mentions giraffes", at.Add(time.Minute)
		m.ContentHash = m.ComputeHash()
		m.Embedding = &memory.Embedding{Model: model, Dim: dim, Vector: embedText(m.Text)}
		return m, nil
	})
	if err != nil || got.Text != "the new text mentions giraffes" {
		t.Fatalf("Update = %+v, %v", got, err)
	}
	sameMemory(t, "Get after Update", get(t, b, nil, "01A"), got)
	if res := legs(t, b, backend.LegQuery{K: 5, Text: "zebras"}); len(res.BM25) != 0 {
		t.Fatalf("the old text is still found: %v", ids(res.BM25))
	}
	if res := legs(t, b, backend.LegQuery{K: 5, Text: "giraffes"}); len(res.BM25) != 1 {
		t.Fatalf("the new text is not found: %v", ids(res.BM25))
	}
	// fn's nil leaves the store as it was; fn's error aborts.
	same, err := b.Update(ctx, nil, "01A", func(*memory.Memory) (*memory.Memory, error) { return nil, nil })
	if err != nil || !reflect.DeepEqual(same, got) {
		t.Fatalf("a no-op Update = %+v, %v", same, err)
	}
	stop := errors.New("stop")
	if _, err := b.Update(ctx, nil, "01A", func(m *memory.Memory) (*memory.Memory, error) { m.Text = "lost"; return m, stop }); err != stop {
		t.Fatalf("Update with fn's error: %v", err)
	}
	if get(t, b, nil, "01A").Text == "lost" {
		t.Fatal("an aborted Update was stored")
	}
	// Moving: out of the caller's scope is refused, onto a taken id too.
	move := func(scope, to map[string]string) error {
		_, err := b.Update(ctx, scope, "01A", func(m *memory.Memory) (*memory.Memory, error) { m.Scope = to; return m, nil })
		return err
	}
	if err := move(teamAU1, teamB); !errors.Is(err, memory.ErrInvalid) {
		t.Fatalf("a move out of the caller's scope: %v, want ErrInvalid", err)
	}
	put(t, b, nil, mem("01A", "u2's own 01A", teamAU2))
	if err := move(teamAU1, teamAU2); err == nil {
		t.Fatal("a move onto a memory with the same id succeeded")
	}
	if err := move(teamA, teamA); !errors.Is(err, memory.ErrAmbiguous) {
		t.Fatalf("Update of an id two children hold: %v, want ErrAmbiguous", err)
	}
	if err := move(teamAU1, teamA); !errors.Is(err, memory.ErrInvalid) {
		t.Fatalf("a move to a parent scope, outside the caller's: %v, want ErrInvalid", err)
	}
	if err := move(nil, teamA); !errors.Is(err, memory.ErrAmbiguous) {
		t.Fatalf("Update of an ambiguous id from the whole store: %v", err)
	}
	if n, _ := b.Delete(ctx, teamAU2, []string{"01A"}); n != 1 {
		t.Fatal("delete u2's 01A")
	}
	if err := move(teamA, teamA); err != nil {
		t.Fatalf("a move from a child to its parent by the parent: %v", err)
	}
	if get(t, b, teamAU1, "01A") != nil || get(t, b, teamA, "01A") == nil {
		t.Fatal("the move did not move the memory")
	}
	if got := list(t, b, backend.ListQuery{}); len(got) != 2 {
		t.Fatalf("after the move: %v", got)
	}
	if res := legs(t, b, backend.LegQuery{K: 5, Text: "giraffes", Filter: memory.Filter{Scope: teamAU1}}); len(res.BM25) != 0 {
		t.Fatalf("the moved memory is still found in its old scope: %v", res.BM25)
	}
}

// testEngineDeleteScope: forgetting a scope deletes every memory inside it
// whatever their ids, even an id several of its children hold (which is
// ambiguous by id), and nothing outside; an ambiguous id is named by
// narrowing the view to one child (Within).
func testEngineDeleteScope(t *testing.T, s suite) {
	db := s.engine(t)
	s1 := map[string]string{"team": "a", "user": "u1", "session": "s1"}
	s2 := map[string]string{"team": "a", "user": "u1", "session": "s2"}
	_, err := db.Add(ctx,
		&engram.Memory{ID: "x", Text: "u1's first session", Scope: s1},
		&engram.Memory{ID: "x", Text: "u1's second session", Scope: s2},
		&engram.Memory{ID: "y", Text: "u1's note", Scope: teamAU1},
		&engram.Memory{ID: "x", Text: "u2's note", Scope: teamAU2},
		&engram.Memory{ID: "x", Text: "team b's note", Scope: teamB})
	if err != nil {
		t.Fatal(err)
	}
	a, err := db.WithScope(teamA)
	if err != nil {
		t.Fatal(err)
	}
	// By id, x is ambiguous for team a; Within names one child's.
	if _, err := a.Get(ctx, "x"); !errors.Is(err, memory.ErrAmbiguous) {
		t.Fatalf("team a's Get(x): %v, want ErrAmbiguous", err)
	}
	u2, err := a.Within(map[string]string{"user": "u2"})
	if err != nil {
		t.Fatal(err)
	}
	if m, err := u2.Get(ctx, "x"); err != nil || m.Text != "u2's note" {
		t.Fatalf("team a's Get(x) within user u2: %+v, %v", m, err)
	}
	if _, err := a.Within(teamB); !errors.Is(err, engram.ErrScope) {
		t.Fatalf("team a's Within(team b): %v, want ErrScope", err)
	}
	// Forgetting user u1 takes both of its x and its y, nothing else.
	n, err := a.DeleteScope(ctx, map[string]string{"user": "u1"})
	if err != nil || n != 3 {
		t.Fatalf("team a's DeleteScope(user=u1) = %d, %v; want 3", n, err)
	}
	var left []string
	page, err := db.List(ctx, engram.ListOptions{Order: "id", Limit: 10})
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range page.Memories {
		left = append(left, m.Text)
	}
	if strings.Join(left, "|") != "u2's note|team b's note" {
		t.Fatalf("left after forgetting u1: %q", left)
	}
	// The whole store forgets team a, whose id x team b holds too.
	if n, err := db.DeleteScope(ctx, teamA); err != nil || n != 1 {
		t.Fatalf("DeleteScope(team=a) = %d, %v; want 1", n, err)
	}
	if m, err := db.Get(ctx, "x"); err != nil || m.Text != "team b's note" {
		t.Fatalf("team b's x after forgetting team a: %+v, %v", m, err)
	}
}

// testDeleteKeys: a KeyDeleter deletes exactly the memories its keys name
// inside the caller's scope, whatever their ids, and skips keys that name
// none or lie outside.
func testDeleteKeys(t *testing.T, s suite) {
	b := s.backend(t)
	put(t, b, nil, mem("01K", "u1's", teamAU1), mem("01K", "u2's", teamAU2), mem("01K", "team b's", teamB), mem("01L", "team a's", teamA))
	keys := []string{memory.Key("01K", teamAU1), memory.Key("01K", teamAU2), memory.Key("01K", teamB),
		memory.Key("01Z", teamA), memory.Key("01K", map[string]string{"team": "a", "user": "u9"}), "01L\x00not json"}
	n, err := b.DeleteKeys(ctx, teamA, keys)
	if err != nil || n != 2 {
		t.Fatalf("team a's DeleteKeys = %d, %v; want its two 01K", n, err)
	}
	if got := list(t, b, backend.ListQuery{}); !reflect.DeepEqual(got, []string{"01K", "01L"}) {
		t.Fatalf("left %v, want team b's 01K and team a's 01L", got)
	}
	if got := get(t, b, teamB, "01K"); got == nil {
		t.Fatal("team a's DeleteKeys removed team b's 01K")
	}
	if n, err := b.DeleteKeys(ctx, nil, []string{memory.Key("01K", teamB)}); err != nil || n != 1 {
		t.Fatalf("the whole store's DeleteKeys = %d, %v; want 1", n, err)
	}
}
