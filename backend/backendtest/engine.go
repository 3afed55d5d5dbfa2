package backendtest

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/engram-memory/engram"
	"github.com/engram-memory/engram/embed"
	"github.com/engram-memory/engram/memory"
)

// embedder is the suite's embedding model as an engine embedder.
var embedder = embed.Func{ModelID: model, F: func(_ context.Context, texts []string) ([][]float32, error) {
	out := make([][]float32, len(texts))
	for i, s := range texts {
		out[i] = embedText(s)
	}
	return out, nil
}}

// engine runs the whole engine on a fresh backend; closing the DB closes it.
func (s suite) engine(t *testing.T) *engram.DB {
	t.Helper()
	db, err := engram.OpenBackend(ctx, s.open(t), engram.Options{Embedder: embedder})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := db.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
	})
	return db
}

func search(t *testing.T, db engram.Recall, q engram.Query) *engram.Response {
	t.Helper()
	q.NoRecord = true
	resp, err := db.Search(ctx, q)
	if err != nil {
		t.Fatalf("Search %q: %v", q.Query, err)
	}
	return resp
}

func resultIDs(resp *engram.Response) []string {
	out := make([]string, len(resp.Results))
	for i, r := range resp.Results {
		out[i] = r.ID
	}
	return out
}

// testEngine: everything above the seam works on the backend unchanged:
// search in every mode with explanations, the favorite and demand boosts,
// updates and deletes seen by the next search, brief, inject, stats, and an
// export that imports into another backend as it was.
func testEngine(t *testing.T, s suite) {
	db := s.engine(t)
	texts := []string{
		"The user prefers dark themes in every editor",
		"Deploys go out on Tuesdays after the canary passes",
		"The staging database is reset every night",
		"Ana leads the platform team and reviews deploys",
		"Coffee is on the third floor",
	}
	var mems []*engram.Memory
	for _, s := range texts {
		mems = append(mems, &engram.Memory{Text: s})
	}
	res, err := db.Add(ctx, mems...)
	if err != nil || len(res.IDs) != len(texts) || res.Embedded != len(texts) {
		t.Fatalf("Add = %+v, %v", res, err)
	}
	id := func(i int) string { return res.IDs[i] }
	for _, mode := range []string{memory.ModeBM25, memory.ModeVector, memory.ModeHybrid} {
		resp := search(t, db, engram.Query{Query: "when do deploys go out", Mode: mode, Limit: 3})
		if resp.Strategy != mode || len(resp.Degraded) != 0 {
			t.Fatalf("%s: strategy %s, degraded %v", mode, resp.Strategy, resp.Degraded)
		}
		if len(resp.Results) == 0 || resp.Results[0].ID != id(1) || resp.Results[0].Explain == nil {
			t.Fatalf("%s: results %v, want %s first, explained", mode, resultIDs(resp), id(1))
		}
	}
	// Favorite and demand boosts reorder equal matches (ids given: an exact
	// repeat without one would be merged into the first).
	twins, err := db.Add(ctx, &engram.Memory{ID: "twin-a", Text: "the wifi password is on the fridge"},
		&engram.Memory{ID: "twin-b", Text: "the wifi password is on the fridge", Favorite: true})
	if err != nil {
		t.Fatal(err)
	}
	resp := search(t, db, engram.Query{Query: "wifi password fridge", Limit: 2})
	if got := resultIDs(resp); len(got) != 2 || got[0] != twins.IDs[1] || resp.Results[0].Explain.Boosts.Favorite != 1.15 {
		t.Fatalf("favorite twin not first: %v", got)
	}
	if err := db.Touch(ctx, twins.IDs[0], twins.IDs[0], twins.IDs[0]); err != nil {
		t.Fatal(err)
	}
	resp = search(t, db, engram.Query{Query: "wifi password fridge", Limit: 2})
	for _, r := range resp.Results {
		if r.ID == twins.IDs[0] && !(r.Explain.Boosts.Demand > 1) {
			t.Fatalf("touched memory has no demand boost: %+v", r.Explain.Boosts)
		}
	}
	if err := db.Touch(ctx, "01NOPE"); !errors.Is(err, engram.ErrNotFound) {
		t.Fatalf("Touch of a missing id: %v", err)
	}
	// Updates and deletes reach the next search.
	text := "Coffee moved to the roof terrace"
	if _, err := db.Update(ctx, id(4), engram.Patch{Text: &text}); err != nil {
		t.Fatal(err)
	}
	if got := resultIDs(search(t, db, engram.Query{Query: "roof terrace", Mode: memory.ModeBM25})); len(got) != 1 || got[0] != id(4) {
		t.Fatalf("after Update: %v", got)
	}
	if _, err := db.Delete(ctx, id(2)); err != nil {
		t.Fatal(err)
	}
	if got := resultIDs(search(t, db, engram.Query{Query: "staging database reset", Mode: memory.ModeBM25})); len(got) != 0 {
		t.Fatalf("after Delete: %v", got)
	}
	if _, err := db.Get(ctx, id(2)); !errors.Is(err, engram.ErrNotFound) {
		t.Fatalf("Get after Delete: %v", err)
	}
	// Delivery.
	b, err := db.Brief(ctx, engram.BriefOptions{NoRecord: true})
	if err != nil || len(b.Items) == 0 || b.Items[0].Reason != "favorite" || b.Items[0].ID != twins.IDs[1] || b.Text == "" {
		t.Fatalf("Brief = %+v, %v", b, err)
	}
	inj, err := db.Inject(ctx, "who leads the platform team?", engram.InjectOptions{NoRecord: true})
	if err != nil || len(inj.Results) == 0 || inj.Results[0].ID != id(3) {
		t.Fatalf("Inject = %+v, %v", inj, err)
	}
	st, err := db.Stats(ctx)
	if err != nil || st.Memories != 6 || st.Favorites != 1 || st.Embedded[model] != 6 {
		t.Fatalf("Stats = %+v, %v", st, err)
	}
	// Export, import into another backend, export again: the same bytes.
	var out bytes.Buffer
	if err := db.Export(ctx, &out); err != nil {
		t.Fatal(err)
	}
	other := s.engine(t)
	if _, err := other.Import(ctx, bytes.NewReader(out.Bytes()), engram.ImportOptions{}); err != nil {
		t.Fatal(err)
	}
	var again bytes.Buffer
	if err := other.Export(ctx, &again); err != nil {
		t.Fatal(err)
	}
	if out.String() != again.String() {
		t.Fatalf("export after import differs:\n%s\nwant\n%s", again.String(), out.String())
	}
}

// testEngineTenants: scoped views of the engine on the backend are isolated
// tenants: another tenant's memory answers exactly like a missing one.
func testEngineTenants(t *testing.T, s suite) {
	db := s.engine(t)
	a, err := db.WithScope(teamA)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := db.WithScope(teamB)
	resA, err := a.Add(ctx, &engram.Memory{ID: "secret-a", Text: "the launch codename is Bluebird"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := b.Add(ctx, &engram.Memory{ID: "secret-b", Text: "the launch codename is Redwing"}); err != nil {
		t.Fatal(err)
	}
	if m, err := db.Get(ctx, resA.IDs[0]); err != nil || m.Scope["team"] != "a" {
		t.Fatalf("a tenant's memory lacks its scope: %+v, %v", m, err)
	}
	for _, mode := range []string{memory.ModeBM25, memory.ModeVector, memory.ModeHybrid} {
		got := resultIDs(search(t, b, engram.Query{Query: "launch codename Bluebird", Mode: mode}))
		if strings.Join(got, ",") != "secret-b" {
			t.Fatalf("%s: team b found %v", mode, got)
		}
	}
	text := "stolen"
	for name, err := range map[string]error{
		"get":    func() error { _, err := b.Get(ctx, "secret-a"); return err }(),
		"update": func() error { _, err := b.Update(ctx, "secret-a", engram.Patch{Text: &text}); return err }(),
		"delete": func() error { _, err := b.Delete(ctx, "secret-a"); return err }(),
		"touch":  b.Touch(ctx, "secret-a"),
	} {
		if !errors.Is(err, engram.ErrNotFound) {
			t.Fatalf("team b's %s of team a's memory: %v, want ErrNotFound", name, err)
		}
	}
	// Another tenant's id answers exactly like a free one: team b's Add of
	// it succeeds, is team b's own, and leaves team a's memory as it was.
	if _, err := b.Add(ctx, &engram.Memory{ID: "secret-a", Text: "team b's own note"}); err != nil {
		t.Fatalf("team b's Add of an id team a holds: %v, want it stored as a free id is", err)
	}
	if m, err := b.Get(ctx, "secret-a"); err != nil || m.Text != "team b's own note" {
		t.Fatalf("team b's secret-a: %+v, %v", m, err)
	}
	if m, _ := a.Get(ctx, "secret-a"); m == nil || m.Text != "the launch codename is Bluebird" || m.Uses != 0 {
		t.Fatalf("team a's memory changed: %+v", m)
	}
	if _, err := b.Delete(ctx, "secret-a"); err != nil {
		t.Fatal(err)
	}
	if m, _ := a.Get(ctx, "secret-a"); m == nil {
		t.Fatal("team b's delete of its own secret-a removed team a's")
	}
	var out bytes.Buffer
	if err := b.Export(ctx, &out); err != nil || strings.Contains(out.String(), "Bluebird") || !strings.Contains(out.String(), "Redwing") {
		t.Fatalf("team b's export: %q, %v", out.String(), err)
	}
	if st, err := a.Stats(ctx); err != nil || st.Memories != 1 {
		t.Fatalf("team a's stats: %+v, %v", st, err)
	}
	brief, err := b.Brief(ctx, engram.BriefOptions{NoRecord: true})
	if err != nil || len(brief.Items) != 1 || brief.Items[0].ID != "secret-b" {
		t.Fatalf("team b's brief: %+v, %v", brief, err)
	}
}
