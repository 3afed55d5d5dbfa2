package engram_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/engram-memory/engram"
	"github.com/engram-memory/engram/embed"
	"github.com/engram-memory/engram/embed/builtin"
	"github.com/engram-memory/engram/memory"
)

func openTest(t testing.TB, opts engram.Options) *engram.DB {
	t.Helper()
	db, err := engram.Open(context.Background(), filepath.Join(t.TempDir(), "t.db"), opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

func add(t testing.TB, db *engram.DB, mems ...*engram.Memory) []string {
	t.Helper()
	res, err := db.Add(context.Background(), mems...)
	if err != nil {
		t.Fatal(err)
	}
	return res.IDs
}

func search(t testing.TB, db *engram.DB, q engram.Query) *engram.Response {
	t.Helper()
	resp, err := db.Search(context.Background(), q)
	if err != nil {
		t.Fatal(err)
	}
	return resp
}

func ids(resp *engram.Response) []string {
	out := make([]string, len(resp.Results))
	for i, r := range resp.Results {
		out[i] = r.ID
	}
	return out
}

func TestAddSearchHybrid(t *testing.T) {
	db := openTest(t, engram.Options{})
	got := add(t, db,
		&engram.Memory{ID: "theme", Text: "Prefers dark themes in every editor and terminal."},
		&engram.Memory{ID: "claim", Text: "tasks_claim must run inside a transaction."},
		&engram.Memory{ID: "coffee", Text: "Drinks espresso without sugar."},
	)
	if strings.Join(got, ",") != "theme,claim,coffee" {
		t.Fatalf("ids = %v", got)
	}
	resp := search(t, db, engram.Query{Query: "tasks_claim"})
	if resp.Strategy != memory.StrategyHybrid || len(resp.Results) == 0 || resp.Results[0].ID != "claim" {
		t.Fatalf("identifier query: strategy %s, results %v", resp.Strategy, ids(resp))
	}
	ex := resp.Results[0].Explain
	if ex.BM25 == nil || ex.BM25.Rank != 1 || ex.Vector == nil || ex.RRF <= 0 {
		t.Fatalf("explain = %+v", ex)
	}
	if resp.Fusion == nil || resp.Fusion.Method != engram.ModelDefaults(db.Embedder().Model()).Fusion || resp.Fusion.Weights["bm25"] != 1 {
		t.Fatalf("fusion = %+v", resp.Fusion)
	}
	// A paraphrase with no shared word: only the vector leg can find it.
	resp = search(t, db, engram.Query{Query: "which colour scheme does the user like", Mode: memory.ModeVector})
	if len(resp.Results) == 0 || resp.Results[0].ID != "theme" {
		t.Fatalf("paraphrase: %v", ids(resp))
	}
}

// TestFilterInsideLegs: a small scope in a large store gets its full result
// count. The static model embeds the 10,000 memories in milliseconds (the
// default transformer took 83 s of the suite under -race): what is tested is
// the filter inside each leg, whatever the model.
func TestFilterInsideLegs(t *testing.T) {
	if testing.Short() {
		t.Skip("10k memories")
	}
	static, err := builtin.New(builtin.Static)
	if err != nil {
		t.Fatal(err)
	}
	db := openTest(t, engram.Options{Embedder: static})
	var mems []*engram.Memory
	for i := 0; i < 10000; i++ {
		mems = append(mems, &engram.Memory{Text: fmt.Sprintf("deploy note %d about the release train", i), Scope: map[string]string{"team": "A"}})
	}
	for i := 0; i < 5; i++ {
		mems = append(mems, &engram.Memory{Text: fmt.Sprintf("deploy checklist item %d", i), Scope: map[string]string{"team": "B"}, Type: "instruction"})
	}
	add(t, db, mems...)
	for _, mode := range []string{"bm25", "vector", "hybrid"} {
		resp := search(t, db, engram.Query{Query: "deploy", Mode: mode, Limit: 10, NoRecord: true,
			Filter: engram.Filter{Scope: map[string]string{"team": "B"}}})
		if len(resp.Results) != 5 {
			t.Errorf("%s: %d results in scope B, want 5", mode, len(resp.Results))
		}
		for _, r := range resp.Results {
			if r.Scope["team"] != "B" {
				t.Errorf("%s: result %s outside scope B", mode, r.ID)
			}
		}
	}
	resp := search(t, db, engram.Query{Query: "deploy", Limit: 10, NoRecord: true, Filter: engram.Filter{Type: "instruction"}})
	if len(resp.Results) != 5 {
		t.Errorf("type filter: %d results, want 5", len(resp.Results))
	}
}

// TestDegrades: without a working embedder, search is keyword-only and says why.
func TestDegrades(t *testing.T) {
	var calls atomic.Int32
	failing := embed.Func{ModelID: "test:failing", F: func(ctx context.Context, texts []string) ([][]float32, error) {
		calls.Add(1)
		return nil, errors.New("connection refused")
	}}
	slow := embed.Func{ModelID: "test:slow", F: func(ctx context.Context, texts []string) ([][]float32, error) {
		<-ctx.Done()
		return nil, ctx.Err()
	}}
	cases := []struct {
		name string
		opts engram.Options
		want string
	}{
		{"none", engram.Options{NoEmbedder: true}, "no embedder configured"},
		{"failing", engram.Options{Embedder: failing}, "no memory has a vector"},
		{"slow", engram.Options{Embedder: slow, EmbedTimeout: 50 * time.Millisecond, WriteEmbedTimeout: 50 * time.Millisecond}, "no memory has a vector"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			db := openTest(t, c.opts)
			res, err := db.Add(context.Background(), &engram.Memory{Text: "the deploy key lives in the vault"})
			if err != nil {
				t.Fatalf("Add must not fail when the embedder does: %v", err)
			}
			if c.name != "none" && res.Deferred == "" {
				t.Error("Add did not say the embedding was deferred")
			}
			resp := search(t, db, engram.Query{Query: "deploy key"})
			if resp.Strategy != memory.StrategyBM25 || len(resp.Results) != 1 {
				t.Fatalf("strategy %s, %d results", resp.Strategy, len(resp.Results))
			}
			if len(resp.Degraded) == 0 || !strings.Contains(resp.Degraded[0].Reason, c.want) {
				t.Fatalf("degraded = %+v, want a reason containing %q", resp.Degraded, c.want)
			}
		})
	}
}

// TestEmbedderDownThenReindex: memories stored while the embedder is down are
// found by keywords at once and get vectors from Reindex.
func TestEmbedderDownThenReindex(t *testing.T) {
	var down atomic.Bool
	down.Store(true)
	e := embed.Func{ModelID: "test:flaky", F: func(ctx context.Context, texts []string) ([][]float32, error) {
		if down.Load() {
			return nil, errors.New("503 service unavailable")
		}
		out := make([][]float32, len(texts))
		for i, t := range texts {
			out[i] = []float32{float32(len(t)), 1, 0.5}
		}
		return out, nil
	}}
	path := filepath.Join(t.TempDir(), "t.db")
	db, err := engram.Open(context.Background(), path, engram.Options{Embedder: e})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	add(t, db, &engram.Memory{Text: "alpha memory"}, &engram.Memory{Text: "beta memory"})
	down.Store(false)
	resp := search(t, db, engram.Query{Query: "alpha"})
	if resp.Strategy != memory.StrategyBM25 || len(resp.Results) != 1 {
		t.Fatalf("before reindex: strategy %s, %d results", resp.Strategy, len(resp.Results))
	}
	res, err := db.Reindex(context.Background(), false, nil)
	if err != nil || res.Embedded != 2 {
		t.Fatalf("Reindex = %+v, %v", res, err)
	}
	resp = search(t, db, engram.Query{Query: "alpha"})
	if resp.Strategy != memory.StrategyHybrid {
		t.Fatalf("after reindex: strategy %s, degraded %+v", resp.Strategy, resp.Degraded)
	}
}

// TestOtherModelNotCompared: vectors from another model are never compared,
// and the response says so.
func TestOtherModelNotCompared(t *testing.T) {
	path := filepath.Join(t.TempDir(), "t.db")
	vec := func(model string) embed.Embedder {
		return embed.Func{ModelID: model, F: func(ctx context.Context, texts []string) ([][]float32, error) {
			out := make([][]float32, len(texts))
			for i := range texts {
				out[i] = []float32{1, 0, 0}
			}
			return out, nil
		}}
	}
	db, err := engram.Open(context.Background(), path, engram.Options{Embedder: vec("test:a")})
	if err != nil {
		t.Fatal(err)
	}
	add(t, db, &engram.Memory{Text: "stored with model a"})
	db.Close()
	db, err = engram.Open(context.Background(), path, engram.Options{Embedder: vec("test:b")})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	resp := search(t, db, engram.Query{Query: "stored"})
	if resp.Strategy != memory.StrategyBM25 {
		t.Fatalf("strategy %s, want bm25", resp.Strategy)
	}
	joined := fmt.Sprint(resp.Degraded)
	if !strings.Contains(joined, "test:a") || !strings.Contains(joined, "test:b") {
		t.Fatalf("degraded does not name both models: %s", joined)
	}
	for _, r := range resp.Results {
		if r.Explain.Vector != nil {
			t.Fatal("a vector from model a was compared with model b's query")
		}
	}
}

// TestTwoHandlesSeeEachOther: a write through one handle (another process) is
// visible to the other's next search without reopening.
func TestTwoHandlesSeeEachOther(t *testing.T) {
	path := filepath.Join(t.TempDir(), "t.db")
	a, err := engram.Open(context.Background(), path, engram.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	b, err := engram.Open(context.Background(), path, engram.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	id := add(t, a, &engram.Memory{Text: "zebra crossings near the office"})[0]
	if resp := search(t, b, engram.Query{Query: "zebra"}); len(resp.Results) != 1 || resp.Results[0].ID != id {
		t.Fatalf("b does not see a's add: %v", ids(resp))
	}
	if _, err := b.Update(context.Background(), id, engram.Patch{Text: ptr("giraffes near the office")}); err != nil {
		t.Fatal(err)
	}
	if resp := search(t, a, engram.Query{Query: "zebra", Mode: "bm25"}); len(resp.Results) != 0 {
		t.Fatalf("a still finds the old text: %v", ids(resp))
	}
	if _, err := a.Delete(context.Background(), id); err != nil {
		t.Fatal(err)
	}
	if resp := search(t, b, engram.Query{Query: "giraffes"}); len(resp.Results) != 0 {
		t.Fatalf("b still finds a deleted memory")
	}
}

func ptr[T any](v T) *T { return &v }

// TestBoostsOnlyReorder: favorites and demand reorder what the legs returned
// and never bring in anything else.
func TestBoostsOnlyReorder(t *testing.T) {
	db := openTest(t, engram.Options{NoEmbedder: true})
	add(t, db,
		&engram.Memory{ID: "a", Text: "release notes for the release train release"},
		&engram.Memory{ID: "b", Text: "release checklist"},
		&engram.Memory{ID: "c", Text: "unrelated favourite", Favorite: true},
	)
	before := ids(search(t, db, engram.Query{Query: "release", NoRecord: true}))
	if strings.Join(before, ",") != "a,b" {
		t.Fatalf("before: %v", before)
	}
	if _, err := db.Favorite(context.Background(), "b", true); err != nil {
		t.Fatal(err)
	}
	resp := search(t, db, engram.Query{Query: "release", NoRecord: true})
	if len(resp.Results) != 2 {
		t.Fatalf("after favorite: %v", ids(resp))
	}
	for _, r := range resp.Results {
		want := map[string]float64{"a": 1, "b": 1.15}[r.ID] // DESIGN §1: a favorite ×1.15
		if ex := r.Explain; ex.Boosts.Favorite != want || math.Abs(r.Score-ex.RRF*ex.Boosts.Favorite*ex.Boosts.Demand) > 1e-6 {
			t.Fatalf("%s: favorite boost %v (want %v), score %v from fused %v", r.ID, ex.Boosts.Favorite, want, r.Score, ex.RRF)
		}
	}
	for i := 0; i < 20; i++ {
		if err := db.Touch(context.Background(), "b"); err != nil {
			t.Fatal(err)
		}
	}
	resp = search(t, db, engram.Query{Query: "release", NoRecord: true})
	for _, r := range resp.Results {
		if r.ID == "c" {
			t.Fatal("a boost brought in a memory no leg returned")
		}
		if d := r.Explain.Boosts.Demand; d < 1 || d >= 1.1 {
			t.Fatalf("demand boost %v outside [1, 1.1)", d)
		}
	}
	if resp.Results[0].ID != "b" {
		t.Fatalf("favorite + demand did not lift b: %v", ids(resp))
	}
}

// TestExportImportRoundTrip: export then import into an empty file restores
// every memory exactly.
func TestExportImportRoundTrip(t *testing.T) {
	ctx := context.Background()
	src := openTest(t, engram.Options{})
	add(t, src,
		&engram.Memory{Name: "n", Description: "d", Text: "first memory", Type: "fact", Scene: "s",
			Scope: map[string]string{"team": "t1", "user": "u7"}, Tags: []string{"x", "y"}, Source: "cli",
			Metadata: []byte(`{"k":[1,2]}`), Favorite: true},
		&engram.Memory{Text: "second memory 只读用户 ünïcödé"},
		&engram.Memory{Text: "zzzz qqqq"}, // no known word: no vector
	)
	if err := src.Touch(ctx, idsOf(t, src)[0]); err != nil {
		t.Fatal(err)
	}
	var first bytes.Buffer
	if err := src.Export(ctx, &first); err != nil {
		t.Fatal(err)
	}
	dst := openTest(t, engram.Options{})
	if _, err := dst.Import(ctx, bytes.NewReader(first.Bytes()), engram.ImportOptions{}); err != nil {
		t.Fatal(err)
	}
	var second bytes.Buffer
	if err := dst.Export(ctx, &second); err != nil {
		t.Fatal(err)
	}
	if first.String() != second.String() {
		t.Fatalf("round trip differs:\n%s\n---\n%s", first.String(), second.String())
	}
	if n := strings.Count(first.String(), "\n"); n != 3 {
		t.Fatalf("exported %d lines, want 3", n)
	}
}

func idsOf(t testing.TB, db *engram.DB) []string {
	var buf bytes.Buffer
	if err := db.Export(context.Background(), &buf); err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, line := range strings.Split(strings.TrimSpace(buf.String()), "\n") {
		m, err := engram.ParseMemoryJSON([]byte(line))
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, m.ID)
	}
	return out
}

func TestImportAllOrNothing(t *testing.T) {
	ctx := context.Background()
	cases := []struct {
		name    string
		input   string
		skip    bool
		wantErr string
		wantN   int
	}{
		{"valid", "{\"text\":\"a\"}\n\n{\"text\":\"b\",\"tags\":[\"t\"]}\n", false, "", 2},
		{"missing text", "{\"text\":\"a\"}\n{\"name\":\"x\"}\n", false, "line 2: field \"text\" is required", 0},
		{"wrong type", "{\"text\":\"a\"}\n{\"text\":\"b\",\"tags\":\"t\"}\n", false, "line 2: field \"tags\": expected an array of strings, got a string", 0},
		{"unknown field", "{\"txt\":\"a\"}\n", false, "line 1: unknown field \"txt\"", 0},
		{"bad json", "{\"text\":\"a\"\n", false, "line 1:", 0},
		{"duplicate id", "{\"id\":\"x\",\"text\":\"a\"}\n{\"id\":\"x\",\"text\":\"b\"}\n", false, "line 2: id \"x\" repeats line 1", 0},
		{"bad scope", "{\"text\":\"a\",\"scope\":{\"k\":\"\"}}\n", false, "line 1:", 0},
		{"skip invalid", "{\"text\":\"a\"}\n{\"name\":\"x\"}\n{\"text\":\"c\"}\n", true, "", 2},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			db := openTest(t, engram.Options{NoEmbedder: true})
			add(t, db, &engram.Memory{ID: "existing", Text: "kept"})
			res, err := db.Import(ctx, strings.NewReader(c.input), engram.ImportOptions{SkipInvalid: c.skip})
			if c.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), c.wantErr) {
					t.Fatalf("err = %v, want %q", err, c.wantErr)
				}
				if !errors.Is(err, engram.ErrInvalid) {
					t.Errorf("err %v is not ErrInvalid", err)
				}
			} else if err != nil {
				t.Fatal(err)
			}
			if len(res.IDs) != c.wantN {
				t.Fatalf("imported %d, want %d", len(res.IDs), c.wantN)
			}
			if got := db.Count(); got != 1+c.wantN {
				t.Fatalf("store holds %d, want %d", got, 1+c.wantN)
			}
		})
	}
}

func TestInvalidQueries(t *testing.T) {
	db := openTest(t, engram.Options{NoEmbedder: true})
	neg, two := -1.0, 2.0
	since := time.Now()
	cases := []struct {
		name string
		q    engram.Query
	}{
		{"empty", engram.Query{Query: "  "}},
		{"negative limit", engram.Query{Query: "x", Limit: -1}},
		{"huge limit", engram.Query{Query: "x", Limit: 1 << 30}},
		{"bad mode", engram.Query{Query: "x", Mode: "fuzzy"}},
		{"bad fusion", engram.Query{Query: "x", Fusion: "max"}},
		{"negative weight", engram.Query{Query: "x", VectorWeight: &neg}},
		{"since after until", engram.Query{Query: "x", Filter: engram.Filter{Since: &since, Until: &since}}},
		{"bad scope", engram.Query{Query: "x", Filter: engram.Filter{Scope: map[string]string{"a=b": "c"}}}},
		{"relevance above 1", engram.Query{Query: "x", MinRelevance: 2}},
		{"negative rrf_k", engram.Query{Query: "x", RRFK: -1}},
		{"huge rrf_k", engram.Query{Query: "x", RRFK: 1e9}},
		{"nan rrf_k", engram.Query{Query: "x", RRFK: math.NaN()}},
		{"keyword gate above 1", engram.Query{Query: "x", KeywordGate: &two}},
		{"negative keyword gate", engram.Query{Query: "x", KeywordGate: &neg}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := db.Search(context.Background(), c.q)
			if !errors.Is(err, engram.ErrInvalidQuery) {
				t.Fatalf("err = %v, want ErrInvalidQuery", err)
			}
		})
	}
}

// TestSettingReachesOtherHandle: a vector weight stored by one process (as
// engram calibrate does) is used by another's next search, without reopening.
func TestSettingReachesOtherHandle(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "t.db")
	a, err := engram.Open(ctx, path, engram.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	b, err := engram.Open(ctx, path, engram.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	add(t, a, &engram.Memory{Text: "the deploy key lives in the vault"})
	if err := a.SetVectorWeight(ctx, 0.3); err != nil {
		t.Fatal(err)
	}
	resp := search(t, b, engram.Query{Query: "deploy key", NoRecord: true})
	if f := resp.Fusion; f == nil || f.Weights["vector"] != 0.3 || f.WeightSource != "store" {
		t.Fatalf("b's fusion after a's setting: %+v", resp.Fusion)
	}
	if err := a.SetVectorWeight(ctx, -1); err != nil { // removes it
		t.Fatal(err)
	}
	resp = search(t, b, engram.Query{Query: "deploy key", NoRecord: true})
	if f := resp.Fusion; f.WeightSource != "model" {
		t.Fatalf("b's fusion after the setting was removed: %+v", f)
	}
}

// TestHandedOutScopesAreCopies: the index shares one scope map among the
// memories of a scope, so a caller changing the scope of a search result or
// of a listed memory must change neither the index nor any other memory.
func TestHandedOutScopesAreCopies(t *testing.T) {
	ctx := context.Background()
	db := openTest(t, engram.Options{Embedder: nil})
	scope := map[string]string{"team": "a"}
	add(t, db, &engram.Memory{Text: "kafka rollback runbook", Type: "fact", Scope: scope},
		&engram.Memory{Text: "kafka consumer lag alert", Type: "fact", Scope: scope})
	inScope := func() int {
		t.Helper()
		r := search(t, db, engram.Query{Query: "kafka", Mode: memory.ModeBM25, Filter: engram.Filter{Scope: map[string]string{"team": "a"}}})
		for _, x := range r.Results {
			if x.Scope["team"] != "a" {
				t.Fatalf("a result of team a says team %q", x.Scope["team"])
			}
		}
		return len(r.Results)
	}
	cases := []struct {
		name  string
		spoil func()
	}{
		{"a search result's scope", func() {
			search(t, db, engram.Query{Query: "kafka", Mode: memory.ModeBM25}).Results[0].Scope["team"] = "b"
		}},
		{"a listed memory's scope", func() {
			page, err := db.List(ctx, engram.ListOptions{})
			if err != nil {
				t.Fatal(err)
			}
			page.Memories[0].Scope["team"] = "b"
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			c.spoil()
			if n := inScope(); n != 2 {
				t.Fatalf("%d memories of team a found after a caller changed a copy, want 2", n)
			}
		})
	}
}
