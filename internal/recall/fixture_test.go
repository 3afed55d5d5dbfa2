package recall

import (
	"context"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/engram-memory/engram/backend"
	"github.com/engram-memory/engram/backend/memback"
	"github.com/engram-memory/engram/embed"
	"github.com/engram-memory/engram/memory"
)

// The tests run the pipeline on the reference backend (backend/memback): a
// real backend whose legs are brute force, so what the pipeline does with
// them can be computed by hand from the legs.

var ctx = context.Background()

// clock is the tests' now.
var clock = time.Date(2026, 6, 1, 12, 0, 0, 0, time.UTC)

// testModel embeds by a fixed vocabulary: each known word (punctuation and
// case aside) adds 1 to its concept's component, so texts about the same
// concepts point the same way and a text with no known word has no vector.
const testModel = "test:concepts"

var concepts = map[string]int{
	"deploy": 0, "deploys": 0, "deployed": 0, "release": 0, "canary": 1, "tuesdays": 2, "thursday": 2,
	"staging": 3, "database": 3, "reset": 4, "night": 4, "ana": 5, "team": 5, "platform": 5,
	"coffee": 6, "floor": 6, "wifi": 7, "password": 7, "fridge": 8, "user": 9, "lives": 9,
	"berlin": 10, "paris": 10, "window": 11, "moved": 11,
}

const testDim = 12

func conceptVector(text string) []float32 {
	v := make([]float32, testDim)
	known := false
	for _, w := range strings.Fields(strings.ToLower(text)) {
		if i, ok := concepts[strings.Trim(w, ".,;:!?'\"")]; ok {
			v[i]++
			known = true
		}
	}
	if !known {
		return nil
	}
	var n float64
	for _, x := range v {
		n += float64(x) * float64(x)
	}
	for i := range v {
		v[i] = float32(float64(v[i]) / math.Sqrt(n))
	}
	return v
}

// embedder is the test model as an embedder.
var embedder = embed.Func{ModelID: testModel, F: func(_ context.Context, texts []string) ([][]float32, error) {
	out := make([][]float32, len(texts))
	for i, s := range texts {
		out[i] = conceptVector(s)
	}
	return out, nil
}}

// note is a stored memory with the test model's vector of its text,
// created a month before the clock.
func note(id, text string) *memory.Memory {
	m := &memory.Memory{ID: id, Text: text, Type: "note", CreatedAt: clock.AddDate(0, -1, 0)}
	m.UpdatedAt, m.OccurredAt = m.CreatedAt, m.CreatedAt
	m.ContentHash = m.ComputeHash()
	if v := conceptVector(text); v != nil {
		m.Embedding = &memory.Embedding{Model: testModel, Dim: testDim, Vector: v}
	}
	return m
}

// store is the tests' memories in a fresh reference backend.
func store(t testing.TB, mems ...*memory.Memory) *memback.Backend {
	t.Helper()
	b := memback.New()
	if err := b.Put(ctx, nil, mems); err != nil {
		t.Fatal(err)
	}
	return b
}

// fixture is a small store: deploys, the staging database, a team, coffee,
// two identical wifi notes (one a favorite, one much used), a memory of 9
// February 2023, and a move that supersedes an older one.
func fixture() []*memory.Memory {
	twinA, twinB := note("06A", "the wifi password is on the fridge"), note("06B", "the wifi password is on the fridge")
	twinB.Favorite = true
	used := clock
	twinA.Uses, twinA.Demand, twinA.DemandAt = 8, 8, &used
	dated := note("07", "we moved the deploy window to thursday")
	dated.OccurredAt = time.Date(2023, 2, 9, 15, 0, 0, 0, time.UTC)
	berlin, paris := note("08", "the user lives in Berlin"), note("09", "the user lives in Paris")
	berlin.OccurredAt, paris.OccurredAt = time.Date(2022, 1, 1, 0, 0, 0, 0, time.UTC), time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)
	paris.Supersedes = "08"
	return []*memory.Memory{
		note("01", "Deploys go out on Tuesdays after the canary passes"),
		note("02", "The staging database is reset every night"),
		note("03", "Ana leads the platform team and reviews deploys"),
		note("04", "Coffee is on the third floor"),
		twinA, twinB, dated, berlin, paris,
		note("10", "a note with no known concept at all"),
	}
}

// searcher is a Searcher over the fixture with the test model and clock.
func searcher(t testing.TB) *Searcher {
	t.Helper()
	return &Searcher{Backend: store(t, fixture()...), Config: Config{Embedder: embedder, VectorWeight: 1, WeightSource: "model",
		VectorFloor: 0.1, Now: func() time.Time { return clock }}}
}

// searchOK runs q and fails the test on error.
func searchOK(t testing.TB, s *Searcher, q memory.Query) *memory.Response {
	t.Helper()
	resp, err := s.Search(ctx, q)
	if err != nil {
		t.Fatalf("Search(%q): %v", q.Query, err)
	}
	return resp
}

func resultIDs(resp *memory.Response) []string {
	out := make([]string, len(resp.Results))
	for i, r := range resp.Results {
		out[i] = r.ID
	}
	return out
}

// stages are the degraded entries' stages, in order.
func stages(resp *memory.Response) []string {
	out := []string{}
	for _, d := range resp.Degraded {
		out = append(out, d.Stage)
	}
	return out
}

// legRanks are the 1-based ranks and scores of each memory in the legs the
// backend returns for q, as the pipeline would ask for them.
func legRanks(t testing.TB, b backend.Searcher, lq backend.LegQuery) (bm25, vec map[string]backend.LegPlace) {
	t.Helper()
	res, err := b.Legs(ctx, lq)
	if err != nil {
		t.Fatal(err)
	}
	place := func(hs []backend.Hit) map[string]backend.LegPlace {
		out := map[string]backend.LegPlace{}
		for i, h := range byScoreThenID(hs) {
			out[h.Memory.ID] = backend.LegPlace{Rank: i + 1, Score: h.Score}
		}
		return out
	}
	return place(res.BM25), place(res.Vector)
}
