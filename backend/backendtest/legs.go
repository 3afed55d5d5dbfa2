package backendtest

import (
	"context"
	"fmt"
	"math"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/engram-memory/engram/backend"
	"github.com/engram-memory/engram/backend/memback"
	"github.com/engram-memory/engram/memory"
)

func testLegsAfterWrites(t *testing.T, s suite) {
	b := s.backend(t)
	q := func(text string) backend.LegQuery {
		return backend.LegQuery{K: 10, Text: text, Vector: embedText(text), Model: model}
	}
	// Each write is searchable by both legs at once: no refresh, no wait.
	put(t, b, nil, mem("01A", "the walrus sleeps on the ice floe", nil))
	res := legs(t, b, q("walrus"))
	if !reflect.DeepEqual(ids(res.BM25), []string{"01A"}) || !slices.Contains(ids(res.Vector), "01A") {
		t.Fatalf("straight after Put: bm25 %v, vector %v", ids(res.BM25), ids(res.Vector))
	}
	put(t, b, nil, mem("01A", "the narwhal sleeps under the ice", nil))
	if res := legs(t, b, q("walrus")); len(res.BM25) != 0 {
		t.Fatalf("straight after an update the old text is found: %v", ids(res.BM25))
	}
	if res := legs(t, b, q("narwhal")); !reflect.DeepEqual(ids(res.BM25), []string{"01A"}) {
		t.Fatalf("straight after an update the new text is not found: %v", ids(res.BM25))
	}
	if _, err := b.Delete(ctx, nil, []string{"01A"}); err != nil {
		t.Fatal(err)
	}
	if res := legs(t, b, q("narwhal")); len(res.BM25)+len(res.Vector) != 0 {
		t.Fatalf("straight after Delete: bm25 %v, vector %v", ids(res.BM25), ids(res.Vector))
	}
	// One leg at a time.
	put(t, b, nil, mem("01B", "the seal swims", nil))
	if res := legs(t, b, backend.LegQuery{K: 10, Text: "seal"}); len(res.BM25) != 1 || len(res.Vector) != 0 {
		t.Fatalf("BM25 only: bm25 %v, vector %v", ids(res.BM25), ids(res.Vector))
	}
	if res := legs(t, b, backend.LegQuery{K: 10, Vector: embedText("seal"), Model: model}); len(res.BM25) != 0 || len(res.Vector) != 1 {
		t.Fatalf("vector only: bm25 %v, vector %v", ids(res.BM25), ids(res.Vector))
	}
	if res := legs(t, b, backend.LegQuery{K: 10, Vector: embedText("seal"), Model: "unknown:model"}); len(res.Vector) != 0 {
		t.Fatalf("a model with no vectors found %v", ids(res.Vector))
	}
}

func testLegsRank(t *testing.T, s suite) {
	b := s.backend(t)
	// BM25: both query terms beat one, the rarer term beats the commoner
	// (kafka is in three memories, consumer in two), at equal lengths; the
	// bound holds every score. Vector: exact cosines, best first.
	put(t, b, nil,
		mem("01A", "kafka consumer lag", nil),
		mem("01B", "kafka broker lag", nil),
		mem("01C", "consumer group lag", nil),
		mem("01D", "kafka topic lag", nil),
		mem("01E", "nothing about it", nil),
	)
	var put2 []*memory.Memory
	for i := range 30 { // a larger store, so idf is meaningful
		put2 = append(put2, mem(fmt.Sprintf("02%02d", i), fmt.Sprintf("filler note number %d about the weather", i), nil))
	}
	put(t, b, nil, put2...)
	res := legs(t, b, backend.LegQuery{K: 2, Text: "kafka consumer"})
	if got := ids(res.BM25); !reflect.DeepEqual(got, []string{"01A", "01C"}) {
		t.Fatalf("BM25 ranking %v, want [01A 01C]", got)
	}
	bestFirst(t, "BM25", res.BM25)
	if res.Bound < 0 || (res.Bound > 0 && res.BM25[0].Score > res.Bound*(1+1e-9)) {
		t.Fatalf("bound %v below the top score %v", res.Bound, res.BM25[0].Score)
	}
	for _, h := range res.BM25 {
		if h.RelevanceScore < 0 || h.RelevanceScore > res.Bound*(1+1e-9) {
			t.Fatalf("%s: relevance score %v outside [0, bound %v]", h.Memory.ID, h.RelevanceScore, res.Bound)
		}
	}
	qv := embedText("kafka consumer lag")
	res = legs(t, b, backend.LegQuery{K: 4, Vector: qv, Model: model})
	if len(res.Vector) != 4 {
		t.Fatalf("vector leg: %d hits, want K=4", len(res.Vector))
	}
	bestFirst(t, "vector", res.Vector)
	for _, h := range res.Vector {
		want := memback.Cosine(qv, embedText(h.Memory.Text))
		if math.Abs(h.Score-want) > 1e-5 {
			t.Fatalf("vector leg: %s cosine %v, want %v", h.Memory.ID, h.Score, want)
		}
	}
	if res.Vector[0].Memory.ID != "01A" {
		t.Fatalf("vector leg: best %s, want 01A", res.Vector[0].Memory.ID)
	}
}

func testLegsFilterInside(t *testing.T, s suite) {
	b := s.backend(t)
	// 300 memories match the query, most outside each filter, and a few
	// inside: a leg that ranked before filtering would miss those few. Each
	// leg must return min(K, what the filter admits and the leg can find),
	// every hit admitted (memory.Filter.Match is the reference).
	var all []*memory.Memory
	for i := range 300 {
		m := mem(fmt.Sprintf("01%03d", i), "deploy deploy the service now", map[string]string{"team": "c"})
		m.CreatedAt = at.Add(10 * 24 * time.Hour)
		m.UpdatedAt = m.CreatedAt
		all = append(all, m)
	}
	small := filtered()
	for _, m := range filtered() {
		m.ID = "09" + m.ID[2:]
		m.Episode, m.Seq = "", 0 // else 01A, 01B would be found through their neighbours' words
		m.Text = "deploy " + m.Text
		m.ContentHash = m.ComputeHash()
		m.Embedding.Vector = embedText(m.Text)
		small = append(small, m)
	}
	all = append(all, small...)
	put(t, b, nil, all...)
	const k = 5
	for _, c := range filterCases() {
		t.Run(c.name, func(t *testing.T) {
			f := c.f
			var keyword, vectors []string // what each leg can find inside the filter
			for _, m := range all {
				if f.Match(m) {
					vectors = append(vectors, m.ID)
					if strings.Contains(m.Text, "deploy") {
						keyword = append(keyword, m.ID)
					}
				}
			}
			res := legs(t, b, backend.LegQuery{Filter: f, K: k, Text: "deploy", Vector: embedText("deploy"), Model: model})
			for _, leg := range []struct {
				name  string
				hits  []backend.Hit
				found []string
			}{{"bm25", res.BM25, keyword}, {"vector", res.Vector, vectors}} {
				for _, h := range leg.hits {
					if !f.Match(h.Memory) {
						t.Fatalf("%s leg returned %s, which the filter does not admit", leg.name, h.Memory.ID)
					}
				}
				if want := min(k, len(leg.found)); len(leg.hits) != want {
					t.Fatalf("%s leg: %d hits %v, want %d of %v", leg.name, len(leg.hits), ids(leg.hits), want, leg.found)
				}
				if len(leg.found) <= k {
					got := ids(leg.hits)
					slices.Sort(got)
					if !slices.Equal(got, leg.found) {
						t.Fatalf("%s leg: %v, want all of %v", leg.name, got, leg.found)
					}
				}
			}
		})
	}
}

func testLegsTenants(t *testing.T, s suite) {
	b := s.backend(t)
	put(t, b, teamA, mem("01A", "the launch codename is Bluebird", teamA))
	put(t, b, teamB, mem("01B", "the launch codename is Redwing", teamB))
	for _, c := range []struct {
		scope map[string]string
		want  string
	}{{teamA, "01A"}, {teamB, "01B"}} {
		res := legs(t, b, backend.LegQuery{Filter: memory.Filter{Scope: c.scope}, K: 10, Text: "launch codename Bluebird Redwing",
			Vector: embedText("launch codename"), Model: model})
		for _, leg := range [][]backend.Hit{res.BM25, res.Vector} {
			if got := ids(leg); !reflect.DeepEqual(got, []string{c.want}) {
				t.Fatalf("scope %v: a leg returned %v, want only %s", c.scope, got, c.want)
			}
		}
	}
}

func testLegsVectors(t *testing.T, s suite) {
	b := s.backend(t)
	nv := mem("01N", "owls hunt at night without a vector", nil)
	nv.Embedding = nil
	put(t, b, nil, mem("01A", "owls hunt at night", nil), nv)
	res := legs(t, b, backend.LegQuery{K: 5, Text: "owls", Vector: embedText("owls hunt"), Model: model, WithVectors: true})
	for _, h := range append(res.BM25, res.Vector...) {
		want := embedText(h.Memory.Text)
		if h.Memory.ID == "01N" {
			want = nil
		}
		if len(h.Vector) != len(want) {
			t.Fatalf("%s: vector %v, want %v", h.Memory.ID, h.Vector, want)
		}
		for i := range want {
			if math.Abs(float64(h.Vector[i]-want[i])) > 1e-6 {
				t.Fatalf("%s: vector %v, want %v", h.Memory.ID, h.Vector, want)
			}
		}
	}
	if res := legs(t, b, backend.LegQuery{K: 5, Text: "owls", Model: model}); len(res.BM25) == 0 || res.BM25[0].Vector != nil {
		t.Fatalf("vectors returned unasked: %+v", res.BM25)
	}
}

func testCancelled(t *testing.T, s suite) {
	b := s.backend(t)
	put(t, b, nil, mem("01A", "a memory", nil))
	c, cancel := context.WithCancel(ctx)
	cancel()
	if _, err := b.Legs(c, backend.LegQuery{K: 5, Text: "memory"}); err == nil {
		t.Error("Legs with a cancelled context did not fail")
	}
	if err := b.Put(c, nil, []*memory.Memory{mem("01B", "another", nil)}); err == nil {
		t.Error("Put with a cancelled context did not fail")
	}
	if get(t, b, nil, "01B") != nil {
		t.Error("a cancelled Put stored its memory")
	}
}

func testHybrid(t *testing.T, s suite) {
	b := s.backend(t)
	hy, ok := b.(backend.Hybrider)
	if !ok {
		t.Skip("the backend has no native hybrid")
	}
	put(t, b, nil, mem("01A", "the heron fishes in the shallows", teamA), mem("01B", "the heron nests high", teamB),
		mem("01C", "shallows are warm in summer", teamA))
	res, err := hy.Hybrid(ctx, backend.HybridQuery{LegQuery: backend.LegQuery{Filter: memory.Filter{Scope: teamA}, K: 10,
		Text: "heron shallows", Vector: embedText("heron shallows"), Model: model}, BM25Weight: 1, VectorWeight: 1})
	if err != nil {
		t.Fatal(err)
	}
	got := make([]string, len(res.Hits))
	for i, h := range res.Hits {
		got[i] = h.Memory.ID
		if i > 0 && h.Score > res.Hits[i-1].Score {
			t.Fatalf("hybrid not best first: %v", res.Hits)
		}
	}
	if len(got) != 2 || got[0] != "01A" || !slices.Contains(got, "01C") {
		t.Fatalf("hybrid in team a = %v, want 01A first, then 01C", got)
	}
}
