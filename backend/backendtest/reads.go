package backendtest

import (
	"fmt"
	"reflect"
	"testing"
	"time"

	"github.com/engram-memory/engram/backend"
	"github.com/engram-memory/engram/memory"
)

func testList(t *testing.T, s suite) {
	b := s.backend(t)
	// Written out of id order, in two batches.
	put(t, b, nil, mem("01C", "third", teamA), mem("01A", "first", teamA))
	put(t, b, nil, mem("01B", "second", teamB), mem("01D", "fourth", nil))
	if got, want := list(t, b, backend.ListQuery{}), []string{"01A", "01B", "01C", "01D"}; !reflect.DeepEqual(got, want) {
		t.Fatalf("List = %v, want %v (id order)", got, want)
	}
	if got, want := list(t, b, backend.ListQuery{Filter: memory.Filter{Scope: teamA}}), []string{"01A", "01C"}; !reflect.DeepEqual(got, want) {
		t.Fatalf("List in team a = %v, want %v", got, want)
	}
	// Without Vectors a memory still names its model and dimension.
	err := b.List(ctx, backend.ListQuery{}, func(m *memory.Memory) error {
		if e := m.Embedding; e == nil || e.Model != model || e.Dim != dim {
			return fmt.Errorf("memory %s: embedding %+v, want model %s dim %d", m.ID, e, model, dim)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	// fn's error stops the listing and comes back.
	stop := fmt.Errorf("stop")
	n := 0
	if err := b.List(ctx, backend.ListQuery{}, func(*memory.Memory) error { n++; return stop }); err != stop || n != 1 {
		t.Fatalf("List with a failing fn: %v after %d calls; want the fn's error after 1", err, n)
	}
}

// filtered are the memories the filter tests select from.
func filtered() []*memory.Memory {
	day := 24 * time.Hour
	ms := []*memory.Memory{
		mem("01A", "alpha", map[string]string{"team": "a", "user": "u1"}),
		mem("01B", "beta", map[string]string{"team": "a", "user": "u2"}),
		mem("01C", "gamma", map[string]string{"team": "b"}),
		mem("01D", "delta", nil),
	}
	ms[0].Type, ms[0].Scene, ms[0].Source, ms[0].Tags = "fact", "work", "chat", []string{"x", "y"}
	ms[1].Type, ms[1].Scene, ms[1].Tags = "fact", "home", []string{"x"}
	ms[2].Source, ms[2].Tags = "chat", []string{"y"}
	ms[0].Episode, ms[0].Seq, ms[1].Episode = "call 1", 1, "call 1"
	for i, m := range ms {
		m.CreatedAt = at.Add(time.Duration(i) * day)
		m.UpdatedAt, m.OccurredAt = m.CreatedAt, m.CreatedAt
	}
	return ms
}

// filterCases are filters and the ids of filtered() each admits.
func filterCases() []struct {
	name string
	f    memory.Filter
	want []string
} {
	day := 24 * time.Hour
	since, until := at.Add(day), at.Add(3*day)
	return []struct {
		name string
		f    memory.Filter
		want []string
	}{
		{"none", memory.Filter{}, []string{"01A", "01B", "01C", "01D"}},
		{"parent scope", memory.Filter{Scope: map[string]string{"team": "a"}}, []string{"01A", "01B"}},
		{"child scope", memory.Filter{Scope: map[string]string{"team": "a", "user": "u2"}}, []string{"01B"}},
		{"unknown scope", memory.Filter{Scope: map[string]string{"team": "z"}}, []string{}},
		{"type", memory.Filter{Type: "fact"}, []string{"01A", "01B"}},
		{"scene", memory.Filter{Scene: "work"}, []string{"01A"}},
		{"source", memory.Filter{Source: "chat"}, []string{"01A", "01C"}},
		{"one tag", memory.Filter{Tags: []string{"y"}}, []string{"01A", "01C"}},
		{"every tag", memory.Filter{Tags: []string{"x", "y"}}, []string{"01A"}},
		{"since inclusive", memory.Filter{Since: &since}, []string{"01B", "01C", "01D"}},
		{"until exclusive", memory.Filter{Until: &until}, []string{"01A", "01B", "01C"}},
		{"window", memory.Filter{Since: &since, Until: &until}, []string{"01B", "01C"}},
		{"all of them", memory.Filter{Scope: map[string]string{"team": "a"}, Type: "fact", Tags: []string{"x"}, Since: &since}, []string{"01B"}},
		{"episode", memory.Filter{Episode: "call 1"}, []string{"01A", "01B"}},
		{"episode in scope", memory.Filter{Episode: "call 1", Scope: map[string]string{"user": "u2"}}, []string{"01B"}},
		{"no such episode", memory.Filter{Episode: "call 2"}, []string{}},
		{"current", memory.Filter{Current: true}, []string{"01A", "01B", "01C", "01D"}},
	}
}

func testListFilters(t *testing.T, s suite) {
	b := s.backend(t)
	put(t, b, nil, filtered()...)
	for _, c := range filterCases() {
		t.Run(c.name, func(t *testing.T) {
			for _, vectors := range []bool{false, true} {
				if got := list(t, b, backend.ListQuery{Filter: c.f, Vectors: vectors}); !reflect.DeepEqual(got, c.want) {
					t.Fatalf("List (vectors %t) = %v, want %v", vectors, got, c.want)
				}
			}
		})
	}
}

func testModels(t *testing.T, s suite) {
	b := s.backend(t)
	if models, err := b.Models(ctx); err != nil || len(models) != 0 {
		t.Fatalf("Models of an empty store = %v, %v", models, err)
	}
	other := mem("01O", "other model", nil)
	other.Embedding = &memory.Embedding{Model: "other:model", Dim: 3, Vector: []float32{1, 0, 0}}
	none := mem("01N", "no vector", nil)
	none.Embedding = nil
	put(t, b, nil, mem("01A", "one", nil), mem("01B", "two", nil), other, none)
	models, err := b.Models(ctx)
	want := map[string]backend.ModelInfo{model: {Dim: dim, Count: 2}, "other:model": {Dim: 3, Count: 1}}
	if err != nil || !reflect.DeepEqual(models, want) {
		t.Fatalf("Models = %v, %v; want %v", models, err, want)
	}
}
