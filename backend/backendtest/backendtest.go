// Package backendtest is the suite every backend must pass: the promises of
// backend.Backend (writes all or nothing, reads as stored, scopes as isolated
// tenants, the legs with every filter inside, straight after each write), and
// the whole engine running on the backend unchanged. A backend package runs
// it from a test with a func that opens a fresh, empty backend:
//
//	func TestBackend(t *testing.T) {
//		backendtest.Run(t, func(tb testing.TB) backend.Backend { return openEmpty(tb) })
//	}
package backendtest

import (
	"context"
	"fmt"
	"hash/fnv"
	"math"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/engram-memory/engram/backend"
	"github.com/engram-memory/engram/memory"
)

// Run runs the suite. Each subtest opens its own backend with open, which
// must return a fresh, empty one (failing tb when it cannot); Run closes
// every backend it opens. A backend that implements backend.Hybrider also
// gets the native hybrid's tests.
func Run(t *testing.T, open func(testing.TB) backend.Backend) {
	s := suite{open: open}
	for _, c := range []struct {
		name string
		test func(*testing.T, suite)
	}{
		{"PutGet", testPutGet},
		{"PutReplaces", testPutReplaces},
		{"PutAllOrNothing", testPutAllOrNothing},
		{"Get", testGet},
		{"Delete", testDelete},
		{"IDNamespaces", testIDNamespaces},
		{"IDNesting", testIDNesting},
		{"DeleteKeys", testDeleteKeys},
		{"Update", testUpdate},
		{"PutMerging", testPutMerging},
		{"List", testList},
		{"ListFilters", testListFilters},
		{"RecordUse", testRecordUse},
		{"SetEmbeddings", testSetEmbeddings},
		{"Models", testModels},
		{"LegsAfterWrites", testLegsAfterWrites},
		{"LegsRank", testLegsRank},
		{"LegsFilterInside", testLegsFilterInside},
		{"LegsTenants", testLegsTenants},
		{"LegsScopeStats", testLegsScopeStats},
		{"LegsVectors", testLegsVectors},
		{"Cancelled", testCancelled},
		{"Hybrid", testHybrid},
		{"EpisodeContext", testEpisodeContext},
		{"EpisodeNeighbours", testEpisodeNeighbours},
		{"Supersedes", testSupersedes},
		{"LegsWindows", testLegsWindows},
		{"LegsReference", testLegsReference},
		{"Engine", testEngine},
		{"EngineTenants", testEngineTenants},
		{"EngineDeleteScope", testEngineDeleteScope},
		{"EngineScores", testEngineScores},
	} {
		t.Run(c.name, func(t *testing.T) { c.test(t, s) })
	}
}

type suite struct {
	open func(testing.TB) backend.Backend
}

// backend opens a fresh backend that is closed when the test ends.
func (s suite) backend(t *testing.T) backend.Backend {
	t.Helper()
	b := s.open(t)
	t.Cleanup(func() {
		if err := b.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
	})
	return b
}

var ctx = context.Background()

// at is the suite's clock: times with nanoseconds, which a backend must keep.
var at = time.Date(2026, 11, 30, 8, 0, 0, 123456789, time.UTC)

// model is the suite's embedding model: vectors of dim bag-of-words counts.
const (
	model = "backendtest:bow"
	dim   = 16
)

// embedText is the suite's embedder: each word adds 1 to the component its
// FNV hash picks, normalised. Texts sharing words point the same way.
func embedText(text string) []float32 {
	v := make([]float32, dim)
	for _, w := range strings.Fields(strings.ToLower(text)) {
		h := fnv.New32a()
		h.Write([]byte(strings.Trim(w, ".,;:!?")))
		v[h.Sum32()%dim]++
	}
	var n float64
	for _, x := range v {
		n += float64(x) * float64(x)
	}
	if n == 0 {
		return nil
	}
	for i := range v {
		v[i] = float32(float64(v[i]) / math.Sqrt(n))
	}
	return v
}

// mem is a complete memory as the engine hands it to Put: normalised, with
// times, hash and the suite model's vector of its text.
func mem(id, text string, scope map[string]string) *memory.Memory {
	m := &memory.Memory{ID: id, Text: text, Type: "note", Scope: scope, CreatedAt: at, UpdatedAt: at, OccurredAt: at}
	m.ContentHash = m.ComputeHash()
	if v := embedText(text); v != nil {
		m.Embedding = &memory.Embedding{Model: model, Dim: dim, Vector: v}
	}
	return m
}

// clone is a deep copy, so a test keeps what it gave Put (which takes the
// memories over).
func clone(m *memory.Memory) *memory.Memory {
	c := *m
	if m.Scope != nil {
		c.Scope = make(map[string]string, len(m.Scope))
		for k, v := range m.Scope {
			c.Scope[k] = v
		}
	}
	c.Tags = append([]string(nil), m.Tags...)
	if m.Tags == nil {
		c.Tags = nil
	}
	c.Metadata = append([]byte(nil), m.Metadata...)
	if m.Metadata == nil {
		c.Metadata = nil
	}
	if m.DemandAt != nil {
		t := *m.DemandAt
		c.DemandAt = &t
	}
	if m.Embedding != nil {
		e := *m.Embedding
		e.Vector = append([]float32(nil), m.Embedding.Vector...)
		c.Embedding = &e
	}
	return &c
}

// put stores memories (copies of them) and fails the test on error.
func put(t *testing.T, b backend.Backend, scope map[string]string, mems ...*memory.Memory) {
	t.Helper()
	cs := make([]*memory.Memory, len(mems))
	for i, m := range mems {
		cs[i] = clone(m)
	}
	if err := b.Put(ctx, scope, cs); err != nil {
		t.Fatalf("Put: %v", err)
	}
}

// get returns one memory in scope, or nil.
func get(t *testing.T, b backend.Backend, scope map[string]string, id string) *memory.Memory {
	t.Helper()
	got, err := b.Get(ctx, scope, []string{id})
	if err != nil {
		t.Fatalf("Get(%s): %v", id, err)
	}
	return got[id]
}

// list returns the ids List visits for q, in its order.
func list(t *testing.T, b backend.Backend, q backend.ListQuery) []string {
	t.Helper()
	ids := []string{}
	if err := b.List(ctx, q, func(m *memory.Memory) error { ids = append(ids, m.ID); return nil }); err != nil {
		t.Fatalf("List: %v", err)
	}
	return ids
}

// legs runs the legs and fails the test on error.
func legs(t *testing.T, b backend.Searcher, q backend.LegQuery) *backend.LegResult {
	t.Helper()
	res, err := b.Legs(ctx, q)
	if err != nil {
		t.Fatalf("Legs: %v", err)
	}
	if co, ok := b.(backend.Completer); ok {
		completeHits(t, co, res.BM25)
		completeHits(t, co, res.Vector)
	}
	return res
}

// completeHits replaces a Completer's partial leg memories by the complete
// ones, as the engine does, after checking that each partial memory carries
// what the Completer promises.
func completeHits(t *testing.T, co backend.Completer, hits []backend.Hit) {
	t.Helper()
	if len(hits) == 0 {
		return
	}
	partial := make([]*memory.Memory, len(hits))
	for i, h := range hits {
		partial[i] = h.Memory
	}
	full, err := co.Complete(ctx, partial)
	if err != nil || len(full) != len(hits) {
		t.Fatalf("Complete: %d of %d, %v", len(full), len(hits), err)
	}
	for i, p := range partial {
		f := full[i]
		if f == nil {
			t.Fatalf("Complete: memory %s missing", p.ID)
		}
		if f.ID != p.ID || !reflect.DeepEqual(f.Scope, p.Scope) || f.Type != p.Type || f.Scene != p.Scene || f.Source != p.Source ||
			!reflect.DeepEqual(f.Tags, p.Tags) || !f.CreatedAt.Equal(p.CreatedAt) || f.Favorite != p.Favorite || f.Uses != p.Uses ||
			f.Demand != p.Demand || !reflect.DeepEqual(f.DemandAt, p.DemandAt) || !f.OccurredAt.Equal(p.OccurredAt) ||
			!reflect.DeepEqual(f.Superseded, p.Superseded) {
			t.Fatalf("a partial leg memory differs from the complete one in what fusion and the boosts read:\n partial %s\n    full %s", dump(p), dump(f))
		}
		if f.Embedding != nil && f.Embedding.Vector != nil {
			t.Fatalf("Complete returned %s with its vector", f.ID)
		}
		hits[i].Memory = f
	}
}

// ids are the hits' memory ids, in order.
func ids(hits []backend.Hit) []string {
	out := make([]string, len(hits))
	for i, h := range hits {
		out[i] = h.Memory.ID
	}
	return out
}

// sameMemory fails unless got is want as stored.
func sameMemory(t *testing.T, what string, got, want *memory.Memory) {
	t.Helper()
	if got == nil {
		t.Fatalf("%s: memory %s missing", what, want.ID)
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("%s: memory %s\n got %s\nwant %s", what, want.ID, dump(got), dump(want))
	}
}

func dump(m *memory.Memory) string {
	s := fmt.Sprintf("%+v", *m)
	if m.DemandAt != nil {
		s += fmt.Sprintf(" DemandAt=%s", m.DemandAt.Format(time.RFC3339Nano))
	}
	if m.Embedding != nil {
		s += fmt.Sprintf(" Embedding=%+v", *m.Embedding)
	}
	return s
}

// bestFirst fails unless the hits' scores never rise.
func bestFirst(t *testing.T, leg string, hits []backend.Hit) {
	t.Helper()
	for i := 1; i < len(hits); i++ {
		if hits[i].Score > hits[i-1].Score {
			t.Fatalf("%s leg not best first: %v then %v", leg, hits[i-1].Score, hits[i].Score)
		}
	}
}
