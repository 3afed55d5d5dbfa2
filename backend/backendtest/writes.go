package backendtest

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"reflect"
	"testing"
	"time"

	"github.com/engram-memory/engram/backend"
	"github.com/engram-memory/engram/memory"
)

var (
	teamA = map[string]string{"team": "a"}
	teamB = map[string]string{"team": "b"}
)

// full is a memory with every field set, nanosecond times included.
func full(id string) *memory.Memory {
	used := at.Add(-time.Hour)
	m := &memory.Memory{
		ID: id, Name: "Deploy checklist", Description: "how a release goes out",
		Text: "Run the migrations, then deploy the canary, then the rest.", Type: "instruction", Scene: "work",
		Scope: map[string]string{"team": "a", "user": "u7"}, Tags: []string{"deploy", "release"}, Source: "wiki",
		Metadata: json.RawMessage(`{"confidence":0.9,"links":["a","b"]}`), Favorite: true,
		CreatedAt: at, UpdatedAt: at.Add(time.Second), Uses: 3, Demand: 2.5, DemandAt: &used,
		Episode: "release chat 7", Seq: 12, Speaker: "Caroline", OccurredAt: at.Add(-36 * time.Hour).Add(123456789), Supersedes: "01OLD",
	}
	m.ContentHash = m.ComputeHash()
	m.Embedding = &memory.Embedding{Model: model, Dim: dim, Vector: embedText(m.EmbedText())}
	return m
}

func testPutGet(t *testing.T, s suite) {
	b := s.backend(t)
	want := []*memory.Memory{full("01FULL"), mem("01PLAIN", "a memory with few fields", nil)}
	want[1].Embedding = nil
	put(t, b, nil, want...)
	for _, w := range want {
		sameMemory(t, "Get after Put", get(t, b, nil, w.ID), w)
		sameMemory(t, "Get in the memory's own scope", get(t, b, w.Scope, w.ID), w)
	}
	// A parent scope sees its children.
	sameMemory(t, "Get in a parent scope", get(t, b, teamA, "01FULL"), want[0])
	var got []*memory.Memory
	err := b.List(ctx, backend.ListQuery{Vectors: true}, func(m *memory.Memory) error { got = append(got, m); return nil })
	if err != nil || len(got) != 2 {
		t.Fatalf("List with vectors: %d memories, %v", len(got), err)
	}
	sameMemory(t, "List with vectors", got[0], want[0])
	sameMemory(t, "List with vectors", got[1], want[1])
}

func testPutReplaces(t *testing.T, s suite) {
	b := s.backend(t)
	put(t, b, nil, mem("01A", "the first version mentions zebras", teamA))
	v2 := mem("01A", "the second version mentions giraffes", teamA)
	v2.Favorite, v2.UpdatedAt = true, at.Add(time.Minute)
	put(t, b, teamA, v2)
	sameMemory(t, "Get after a replacing Put", get(t, b, nil, "01A"), v2)
	if got := list(t, b, backend.ListQuery{}); len(got) != 1 {
		t.Fatalf("List after a replacing Put: %v", got)
	}
	res := legs(t, b, backend.LegQuery{K: 5, Text: "zebras"})
	if len(res.BM25) != 0 {
		t.Fatalf("the replaced text is still found: %v", ids(res.BM25))
	}
	if res := legs(t, b, backend.LegQuery{K: 5, Text: "giraffes"}); len(res.BM25) != 1 {
		t.Fatalf("the new text is not found: %v", ids(res.BM25))
	}
}

func testPutAllOrNothing(t *testing.T, s suite) {
	b := s.backend(t)
	put(t, b, nil, mem("01B", "team b owns this id", teamB))
	// A memory outside the caller's scope fails the whole batch.
	err := b.Put(ctx, teamA, []*memory.Memory{mem("01NEW", "a new memory of team a", teamA), mem("01C", "planted in team b", teamB)})
	if !errors.Is(err, memory.ErrInvalid) {
		t.Fatalf("Put of a memory outside the caller's scope: %v, want an error wrapping memory.ErrInvalid", err)
	}
	if get(t, b, nil, "01NEW") != nil || get(t, b, nil, "01C") != nil {
		t.Fatal("a failed Put stored part of its batch")
	}
	if res := legs(t, b, backend.LegQuery{K: 5, Text: "planted new"}); len(res.BM25) != 0 {
		t.Fatalf("a failed Put is searchable: %v", ids(res.BM25))
	}
	// Team b's id is free for team a: ids are per-scope namespaces.
	put(t, b, teamA, mem("01B", "team a's own 01B", teamA))
	if got := get(t, b, teamB, "01B"); got == nil || got.Text != "team b owns this id" {
		t.Fatalf("team a's Put of the same id changed team b's memory: %+v", got)
	}
	if got := get(t, b, teamA, "01B"); got == nil || got.Text != "team a's own 01B" {
		t.Fatalf("team a's 01B: %+v", got)
	}
}

func testGet(t *testing.T, s suite) {
	b := s.backend(t)
	put(t, b, nil, mem("01A", "in team a", teamA), mem("01B", "in team b", teamB), mem("01N", "in no team", nil))
	got, err := b.Get(ctx, teamA, []string{"01A", "01B", "01N", "01NOPE"})
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 1 || got["01A"] == nil {
		t.Fatalf("Get in team a = %v; want 01A only", keys(got))
	}
	if got, err := b.Get(ctx, nil, []string{"01A", "01B", "01N", "01NOPE"}); err != nil || len(got) != 3 {
		t.Fatalf("Get in the whole store = %v, %v; want 3", keys(got), err)
	}
	if got, err := b.Get(ctx, nil, nil); err != nil || len(got) != 0 {
		t.Fatalf("Get of no ids = %v, %v", keys(got), err)
	}
}

func keys(m map[string]*memory.Memory) []string {
	out := []string{}
	for k := range m {
		out = append(out, k)
	}
	return out
}

func testDelete(t *testing.T, s suite) {
	b := s.backend(t)
	put(t, b, nil, mem("01A", "penguins in team a", teamA), mem("01B", "penguins in team b", teamB), mem("01C", "penguins also in a", teamA))
	n, err := b.Delete(ctx, teamA, []string{"01A", "01B", "01NOPE"})
	if err != nil || n != 1 {
		t.Fatalf("Delete in team a = %d, %v; want 1 (01B is team b's)", n, err)
	}
	if get(t, b, nil, "01A") != nil || get(t, b, nil, "01B") == nil {
		t.Fatal("Delete removed the wrong memories")
	}
	if got := list(t, b, backend.ListQuery{}); len(got) != 2 {
		t.Fatalf("List after Delete = %v", got)
	}
	res := legs(t, b, backend.LegQuery{K: 5, Text: "penguins", Vector: embedText("penguins in team a"), Model: model})
	for _, h := range append(res.BM25, res.Vector...) {
		if h.Memory.ID == "01A" {
			t.Fatalf("a deleted memory is still found: %v %v", ids(res.BM25), ids(res.Vector))
		}
	}
	if n, err := b.Delete(ctx, nil, []string{"01A"}); err != nil || n != 0 {
		t.Fatalf("Delete again = %d, %v; want 0", n, err)
	}
	if models, err := b.Models(ctx); err != nil || models[model].Count != 2 {
		t.Fatalf("Models after Delete = %v, %v; want 2 vectors", models, err)
	}
}

func testRecordUse(t *testing.T, s suite) {
	b := s.backend(t)
	put(t, b, nil, mem("01A", "used often", teamA), mem("01B", "team b's", teamB))
	t0 := at.Add(time.Hour)
	uses, err := b.RecordUse(ctx, teamA, []string{"01A", "01B", "01NOPE"}, t0, false)
	if err != nil || len(uses) != 1 || uses[0].ID != "01A" || uses[0].Uses != 1 || uses[0].Demand != 1 {
		t.Fatalf("RecordUse in team a = %+v, %v; want one use of 01A", uses, err)
	}
	// A month later the first use has half its weight.
	t1 := t0.Add(memory.DemandHalfLife)
	uses, err = b.RecordUse(ctx, nil, []string{"01A"}, t1, true)
	if err != nil || len(uses) != 1 || uses[0].Uses != 2 || math.Abs(uses[0].Demand-1.5) > 1e-9 {
		t.Fatalf("second use = %+v, %v; want uses 2, demand 1.5", uses, err)
	}
	got := get(t, b, nil, "01A")
	if got.Uses != 2 || got.Demand != uses[0].Demand || got.DemandAt == nil || !got.DemandAt.Equal(t1) || !uses[0].At.Equal(t1) {
		t.Fatalf("stored after two uses: %s; RecordUse said %+v", dump(got), uses[0])
	}
	// Strict: one id outside the scope fails it all.
	if _, err := b.RecordUse(ctx, teamA, []string{"01A", "01B"}, t1, true); !errors.Is(err, memory.ErrNotFound) {
		t.Fatalf("strict RecordUse with another scope's id: %v, want ErrNotFound", err)
	}
	if got := get(t, b, nil, "01A"); got.Uses != 2 {
		t.Fatalf("a failed strict RecordUse counted a use: uses %d", got.Uses)
	}
	if got := get(t, b, nil, "01B"); got.Uses != 0 {
		t.Fatalf("team a's RecordUse counted team b's memory: uses %d", got.Uses)
	}
	// What a search sees straight after the use.
	res := legs(t, b, backend.LegQuery{K: 5, Text: "used often"})
	if len(res.BM25) == 0 || res.BM25[0].Memory.Uses != 2 || res.BM25[0].Memory.Demand != uses[0].Demand {
		t.Fatalf("the legs do not see the recorded uses: %+v", res.BM25)
	}
}

func testSetEmbeddings(t *testing.T, s suite) {
	b := s.backend(t)
	a, bm := mem("01A", "needs a vector", teamA), mem("01B", "team b needs one too", teamB)
	a.Embedding, bm.Embedding = nil, nil
	put(t, b, nil, a, bm)
	v := &memory.Embedding{Model: "other:model", Dim: 2, Vector: []float32{0.6, 0.8}}
	n, err := b.SetEmbeddings(ctx, teamA, []backend.EmbeddingUpdate{
		{ID: "01A", Hash: "stale", Embedding: v},        // content changed since
		{ID: "01A", Hash: a.ContentHash, Embedding: v},  // stored
		{ID: "01B", Hash: bm.ContentHash, Embedding: v}, // another scope's
		{ID: "01NOPE", Hash: "h", Embedding: v},         // gone
	})
	if err != nil || n != 1 {
		t.Fatalf("SetEmbeddings = %d, %v; want 1", n, err)
	}
	if got := get(t, b, nil, "01A"); got.Embedding == nil || got.Embedding.Model != "other:model" || got.Embedding.Vector[1] != 0.8 {
		t.Fatalf("01A's embedding: %+v", got.Embedding)
	}
	if got := get(t, b, nil, "01B"); got.Embedding != nil {
		t.Fatalf("team a's SetEmbeddings set team b's vector: %+v", got.Embedding)
	}
	res := legs(t, b, backend.LegQuery{K: 5, Vector: []float32{0.6, 0.8}, Model: "other:model"})
	if len(res.Vector) != 1 || res.Vector[0].Memory.ID != "01A" {
		t.Fatalf("the new vector is not searchable: %v", ids(res.Vector))
	}
}

func testPutMerging(t *testing.T, s suite) {
	b := s.backend(t)
	put(t, b, nil, mem("01B", "the same words", teamA), mem("01A", "the same words", teamA))
	// A repeat in the same scope merges into the least id; the same words in
	// another scope, a new text, or a memory not mergeable are stored.
	in := []*memory.Memory{mem("02A", "the same words", teamA), mem("02B", "the same words", teamB),
		mem("02C", "other words", teamA), mem("02D", "the same words", teamA)}
	existing, err := b.PutMerging(ctx, nil, in, []bool{true, true, true, false}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"01A", "", "", ""}; !reflect.DeepEqual(existing, want) {
		t.Fatalf("PutMerging existing = %q, want %q", existing, want)
	}
	if got := list(t, b, backend.ListQuery{}); !reflect.DeepEqual(got, []string{"01A", "01B", "02B", "02C", "02D"}) {
		t.Fatalf("after PutMerging: %v", got)
	}
	// Outside the caller's scope: refused, nothing stored.
	_, err = b.PutMerging(ctx, teamA, []*memory.Memory{mem("03A", "new", teamA), mem("03B", "planted", teamB)}, []bool{true, true}, nil)
	if !errors.Is(err, memory.ErrInvalid) || get(t, b, nil, "03A") != nil {
		t.Fatalf("PutMerging outside the scope: %v", err)
	}
	// merge gets the stored memory whole, inside the write; what it returns
	// replaces it there, and nothing else of the repeat is stored.
	var got []string
	existing, err = b.PutMerging(ctx, nil, []*memory.Memory{mem("04A", "other words", teamA), mem("04B", "fresh words", teamA)}, []bool{true, true},
		func(i int, stored *memory.Memory) (*memory.Memory, error) {
			got = append(got, fmt.Sprintf("%d:%s:%v", i, stored.ID, stored.Embedding != nil))
			upd := clone(stored)
			upd.Tags, upd.Favorite = []string{"merged"}, true
			return upd, nil
		})
	if err != nil || !reflect.DeepEqual(existing, []string{"02C", ""}) || !reflect.DeepEqual(got, []string{"0:02C:true"}) {
		t.Fatalf("PutMerging with merge: existing %q, merge calls %q, %v", existing, got, err)
	}
	if m := get(t, b, nil, "02C"); !m.Favorite || !reflect.DeepEqual(m.Tags, []string{"merged"}) || m.Text != "other words" || m.Embedding == nil {
		t.Fatalf("merged memory as stored: %+v", m)
	}
	if get(t, b, nil, "04A") != nil || get(t, b, nil, "04B") == nil {
		t.Fatal("PutMerging with merge stored the repeat, or not the new memory")
	}
	// A repeat is found by its text normalised (memory.TextKey), whatever
	// its name: another name, other white space.
	named := mem("06A", "spaced  words\nhere", teamA)
	named.Name = "a name"
	named.ContentHash = named.ComputeHash()
	put(t, b, nil, named)
	existing, err = b.PutMerging(ctx, nil, []*memory.Memory{mem("06B", " spaced words here ", teamA)}, []bool{true}, nil)
	if err != nil || !reflect.DeepEqual(existing, []string{"06A"}) {
		t.Fatalf("PutMerging of the same text, normalised, without the name: %q, %v", existing, err)
	}
	// A failing merge fails the call: nothing of it is stored.
	_, err = b.PutMerging(ctx, nil, []*memory.Memory{mem("05A", "brand new", teamA), mem("05B", "other words", teamA)}, []bool{true, true},
		func(int, *memory.Memory) (*memory.Memory, error) { return nil, errors.New("refused") })
	if err == nil || get(t, b, nil, "05A") != nil {
		t.Fatalf("a failing merge: %v, 05A stored %v", err, get(t, b, nil, "05A") != nil)
	}
}
