package mcpserver

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/engram-memory/engram"
)

var toolNames = []string{"memory_add", "memory_add_episode", "memory_brief", "memory_delete", "memory_favorite", "memory_get", "memory_history", "memory_list", "memory_search", "memory_update"}

// exercise runs the whole tool surface through a client session: list, add,
// search, get, update, favorite, brief, delete. It returns the id it added
// (deleted by the end).
func exercise(t *testing.T, cs *mcp.ClientSession) {
	t.Helper()
	ctx := context.Background()
	lt, err := cs.ListTools(ctx, nil)
	if err != nil {
		t.Fatalf("list tools: %v", err)
	}
	var names []string
	for _, tool := range lt.Tools {
		names = append(names, tool.Name)
		if len(tool.Description) < 80 {
			t.Errorf("%s: description too thin for an LLM: %q", tool.Name, tool.Description)
		}
		schema, _ := tool.InputSchema.(map[string]any)
		if schema["type"] != "object" || schema["properties"] == nil {
			t.Errorf("%s: input schema %v", tool.Name, tool.InputSchema)
		}
		if tool.OutputSchema == nil {
			t.Errorf("%s: no output schema", tool.Name)
		}
	}
	slices.Sort(names)
	if !slices.Equal(names, toolNames) {
		t.Fatalf("tools = %v, want %v", names, toolNames)
	}

	var added AddOutput
	txt := ok(t, cs, "memory_add", map[string]any{
		"text": "Deploys to production go through the blue-green pipeline; ticket OPS-4512 tracks the cutover.",
		"name": "Deploy process", "type": "instruction", "tags": []string{"ops"},
		"metadata": map[string]any{"owner": "sre"},
	}, &added)
	if added.ID == "" || !strings.Contains(txt, added.ID) {
		t.Fatalf("add: id %q, text %q", added.ID, txt)
	}
	ok(t, cs, "memory_add", map[string]any{"text": "The user prefers dark themes in every editor.", "type": "preference"}, nil)

	// Exact identifier and natural language both find it.
	for _, q := range []string{"OPS-4512", "how do deploys to production work?"} {
		var resp engram.Response
		txt := ok(t, cs, "memory_search", map[string]any{"query": q, "limit": 5}, &resp)
		if len(resp.Results) == 0 || resp.Results[0].ID != added.ID {
			t.Fatalf("search %q: results %+v", q, resp.Results)
		}
		if !strings.Contains(txt, added.ID) || !strings.Contains(txt, "relevance") {
			t.Errorf("search %q text lacks id or relevance:\n%s", q, txt)
		}
	}

	// The model's relevance bar by default: nothing for a topic the store
	// lacks, said plainly; min_relevance 0 lists every match, however weak.
	var none engram.Response
	if txt := ok(t, cs, "memory_search", map[string]any{"query": "how do I configure kubernetes ingress"}, &none); len(none.Results) != 0 ||
		!strings.Contains(txt, "Nothing relevant") || !strings.Contains(txt, "relevance bar") {
		t.Errorf("absent topic: %d results, text %q", len(none.Results), txt)
	}
	if ok(t, cs, "memory_search", map[string]any{"query": "how do I configure kubernetes ingress", "min_relevance": 0}, &none); len(none.Results) == 0 {
		t.Errorf("min_relevance 0 lists nothing")
	}

	var got MemoryOut
	txt = ok(t, cs, "memory_get", map[string]any{"id": added.ID}, &got)
	if got.Name != "Deploy process" || got.Metadata["owner"] != "sre" || !strings.Contains(txt, "text:\nDeploys") {
		t.Errorf("get: %+v\n%s", got, txt)
	}

	ok(t, cs, "memory_update", map[string]any{"id": added.ID, "text": "Deploys go through the canary pipeline now (OPS-4512 closed)."}, &got)
	if !strings.Contains(got.Text, "canary") || got.Name != "Deploy process" {
		t.Errorf("update: %+v", got)
	}
	ok(t, cs, "memory_favorite", map[string]any{"id": added.ID}, &got)
	if !got.Favorite {
		t.Errorf("favorite: not marked")
	}

	var brief engram.Brief
	txt = ok(t, cs, "memory_brief", map[string]any{}, &brief)
	if len(brief.Items) != 2 || brief.Items[0].ID != added.ID || brief.Items[0].Reason != "favorite" {
		t.Errorf("brief items: %+v", brief.Items)
	}
	if !strings.Contains(txt, added.ID+" [instruction") || !strings.Contains(txt, "favorite") {
		t.Errorf("brief text:\n%s", txt)
	}

	// memory_list pages through what is stored, newest first.
	var page ListOutput
	txt = ok(t, cs, "memory_list", map[string]any{"limit": 1}, &page)
	if len(page.Memories) != 1 || page.NextCursor == "" || !strings.Contains(txt, "cursor "+page.NextCursor) {
		t.Errorf("list page 1: %+v\n%s", page, txt)
	}
	first, cursor := page.Memories[0].ID, page.NextCursor
	page = ListOutput{}
	ok(t, cs, "memory_list", map[string]any{"limit": 1, "cursor": cursor}, &page)
	if len(page.Memories) != 1 || page.Memories[0].ID == first || page.NextCursor != "" {
		t.Errorf("list page 2: %+v", page)
	}
	page = ListOutput{}
	ok(t, cs, "memory_list", map[string]any{"type": "instruction"}, &page)
	if len(page.Memories) != 1 || page.Memories[0].ID != added.ID {
		t.Errorf("list by type: %+v", page)
	}
	if res := call(t, cs, "memory_list", map[string]any{"order": "size"}); !res.IsError {
		t.Errorf("list with a bad order: no error")
	}

	var del DeleteOutput
	ok(t, cs, "memory_delete", map[string]any{"id": added.ID}, &del)
	if del.Deleted != 1 {
		t.Errorf("delete: %+v", del)
	}
	if res := call(t, cs, "memory_get", map[string]any{"id": added.ID}); !res.IsError || !strings.Contains(text(res), "not found") {
		t.Errorf("get after delete: %v %q", res.IsError, text(res))
	}
}

func TestToolsInMemory(t *testing.T) {
	exercise(t, connectInMemory(t, openDB(t)))
}

// TestEpisodeTools: a conversation stored in one call (again: nothing
// duplicated), searched with its turns around each result, a supersession
// by memory_add with supersedes, as_of, and memory_history.
func TestEpisodeTools(t *testing.T) {
	cs := connectInMemory(t, openDB(t))
	msgs := []map[string]any{
		{"speaker": "Melanie", "text": "Which flowers did you plant by the porch?", "occurred_at": "2023-05-08"},
		{"speaker": "Caroline", "text": "They're called Peruvian Lilies.", "occurred_at": "2023-05-08"},
		{"speaker": "Melanie", "text": "Lovely, they last for weeks.", "occurred_at": "2023-05-08"},
	}
	for range 2 {
		var out EpisodeOutput
		txt := ok(t, cs, "memory_add_episode", map[string]any{"episode": "garden", "messages": msgs}, &out)
		if !slices.Equal(out.IDs, []string{"garden:1", "garden:2", "garden:3"}) || !strings.Contains(txt, "3 turns") {
			t.Fatalf("add_episode: %+v\n%s", out, txt)
		}
	}
	var page ListOutput
	ok(t, cs, "memory_list", map[string]any{"episode": "garden", "order": "seq"}, &page)
	if len(page.Memories) != 3 || page.Memories[1].Speaker != "Caroline" || page.Memories[1].Seq != 2 {
		t.Fatalf("the episode listed: %+v", page.Memories)
	}
	var resp engram.Response
	txt := ok(t, cs, "memory_search", map[string]any{"query": "Peruvian Lilies", "limit": 1}, &resp)
	if len(resp.Results) != 1 || len(resp.Results[0].Neighbours) != 2 ||
		!strings.Contains(txt, "Melanie: Which flowers did you plant by the porch? / Caroline: They're called Peruvian Lilies.") {
		t.Fatalf("search with the turns around it: %+v\n%s", resp.Results, txt)
	}
	var old, cur AddOutput
	ok(t, cs, "memory_add", map[string]any{"text": "Sam lives in Porto", "occurred_at": "2021-01-01"}, &old)
	ok(t, cs, "memory_add", map[string]any{"text": "Sam lives in Oslo", "occurred_at": "2024-01-01", "supersedes": old.ID}, &cur)
	for _, c := range []struct {
		args      map[string]any
		want, not string
	}{
		{map[string]any{"query": "where does Sam live", "min_relevance": 0}, cur.ID, old.ID},
		{map[string]any{"query": "where does Sam live", "min_relevance": 0, "as_of": "2022-06-01"}, old.ID, cur.ID},
	} {
		var r engram.Response
		ok(t, cs, "memory_search", c.args, &r)
		if len(r.Results) == 0 || r.Results[0].ID != c.want || slices.ContainsFunc(r.Results, func(x engram.Result) bool { return x.ID == c.not }) {
			t.Fatalf("search %v: %+v, want %s first and %s absent", c.args, r.Results, c.want, c.not)
		}
	}
	var hist HistoryOutput
	txt = ok(t, cs, "memory_history", map[string]any{"id": old.ID}, &hist)
	if len(hist.Versions) != 2 || hist.Versions[0].Current || !hist.Versions[1].Current || !strings.Contains(txt, "superseded by "+cur.ID) {
		t.Fatalf("history: %+v\n%s", hist, txt)
	}
	if res := call(t, cs, "memory_add", map[string]any{"text": "x", "supersedes": "nowhere"}); !res.IsError || !strings.Contains(text(res), "supersedes") {
		t.Fatalf("supersedes naming nothing: %v %q", res.IsError, text(res))
	}
}

// TestToolErrors checks that bad arguments and unknown ids come back as tool
// errors (IsError with a readable message), not protocol failures.
func TestToolErrors(t *testing.T) {
	db := openDB(t)
	cs := connectInMemory(t, db)
	var added AddOutput
	ok(t, cs, "memory_add", map[string]any{"text": "something to update"}, &added)
	for _, tc := range []struct {
		name, tool string
		args       map[string]any
		want       string
	}{
		{"search empty query", "memory_search", map[string]any{"query": ""}, "query"},
		{"search missing query", "memory_search", map[string]any{}, "query"},
		{"search limit too big", "memory_search", map[string]any{"query": "x", "limit": 500}, "limit"},
		{"search unknown mode", "memory_search", map[string]any{"query": "x", "mode": "fuzzy"}, "mode"},
		{"search bad since", "memory_search", map[string]any{"query": "x", "since": "last tuesday"}, "since"},
		{"search wrong type", "memory_search", map[string]any{"query": 42}, "query"},
		{"search unknown field", "memory_search", map[string]any{"query": "x", "colour": "red"}, "colour"},
		{"add empty text", "memory_add", map[string]any{"text": "  "}, "text"},
		{"add bad scope key", "memory_add", map[string]any{"text": "t", "scope": map[string]any{"": "x"}}, "scope"},
		{"add scope value with a trailing space", "memory_add", map[string]any{"text": "t", "scope": map[string]any{"team": "a "}}, `team="a "`},
		{"list scope value with a leading space", "memory_list", map[string]any{"scope": map[string]any{"team": " a"}}, `team=" a"`},
		{"search scope key with a space", "memory_search", map[string]any{"query": "x", "scope": map[string]any{"team ": "a"}}, `"team "`},
		{"get within a control character", "memory_get", map[string]any{"id": "x", "within": map[string]any{"team": "a\n"}}, `team="a\n"`},
		{"get unknown id", "memory_get", map[string]any{"id": "01NOPE"}, "not found"},
		{"get empty id", "memory_get", map[string]any{"id": ""}, "id"},
		{"update unknown id", "memory_update", map[string]any{"id": "01NOPE", "text": "x"}, "not found"},
		{"update nothing", "memory_update", map[string]any{"id": added.ID}, "nothing to change"},
		{"update empty text", "memory_update", map[string]any{"id": added.ID, "text": ""}, "text"},
		{"delete unknown id", "memory_delete", map[string]any{"id": "01NOPE"}, "not found"},
		{"favorite unknown id", "memory_favorite", map[string]any{"id": "01NOPE"}, "not found"},
		{"brief negative budget", "memory_brief", map[string]any{"budget": -1}, "budget"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res := call(t, cs, tc.tool, tc.args)
			if !res.IsError {
				t.Fatalf("no tool error; text %q", text(res))
			}
			t.Logf("%s", text(res))
			if msg := text(res); !strings.Contains(msg, tc.want) {
				t.Errorf("error %q does not mention %q", msg, tc.want)
			}
		})
	}
	// Nothing above changed the memory.
	m, err := db.Get(context.Background(), added.ID)
	if err != nil || m.Text != "something to update" {
		t.Errorf("memory changed by failed calls: %+v %v", m, err)
	}
}

// TestScopedBackend serves a tenant's view: what it adds carries its scope,
// and another tenant's memories are invisible, by search and by id.
func TestScopedBackend(t *testing.T) {
	db := openDB(t)
	ctx := context.Background()
	other, err := db.Add(ctx, &engram.Memory{Text: "Team two's secret launch date is in March", Scope: map[string]string{"team": "t2"}})
	if err != nil {
		t.Fatal(err)
	}
	view, err := db.WithScope(map[string]string{"team": "t1"})
	if err != nil {
		t.Fatal(err)
	}
	cs := connectInMemory(t, view)
	var added AddOutput
	ok(t, cs, "memory_add", map[string]any{"text": "Team one's launch date is in May"}, &added)
	m, err := db.Get(ctx, added.ID)
	if err != nil || m.Scope["team"] != "t1" {
		t.Fatalf("added memory scope: %+v %v", m, err)
	}
	var resp engram.Response
	ok(t, cs, "memory_search", map[string]any{"query": "secret launch date March"}, &resp)
	for _, r := range resp.Results {
		if r.ID == other.IDs[0] {
			t.Errorf("search leaked another scope's memory")
		}
	}
	for _, tool := range []string{"memory_get", "memory_delete", "memory_favorite"} {
		if res := call(t, cs, tool, map[string]any{"id": other.IDs[0]}); !res.IsError {
			t.Errorf("%s on another scope's id succeeded", tool)
		}
	}
	if res := call(t, cs, "memory_add", map[string]any{"text": "x", "scope": map[string]any{"team": "t2"}}); !res.IsError {
		t.Errorf("add into another scope succeeded")
	}
	if _, err := db.Get(ctx, other.IDs[0]); err != nil {
		t.Errorf("other scope's memory gone: %v", err)
	}
}

// TestWithin: an id several memories below the caller's scope hold is
// ambiguous by id alone; every tool that takes an id takes "within" too,
// which names one of them, and never reaches outside the caller's scope.
func TestWithin(t *testing.T) {
	db := openDB(t)
	ctx := context.Background()
	u1 := map[string]string{"team": "t1", "user": "u1"}
	u2 := map[string]string{"team": "t1", "user": "u2"}
	_, err := db.Add(ctx, &engram.Memory{ID: "x", Text: "u1's note about owls", Scope: u1},
		&engram.Memory{ID: "x", Text: "u2's note about owls", Scope: u2},
		&engram.Memory{ID: "x", Text: "team two's note", Scope: map[string]string{"team": "t2"}})
	if err != nil {
		t.Fatal(err)
	}
	view, err := db.WithScope(map[string]string{"team": "t1"})
	if err != nil {
		t.Fatal(err)
	}
	cs := connectInMemory(t, view)
	if res := call(t, cs, "memory_get", map[string]any{"id": "x"}); !res.IsError || !strings.Contains(text(res), "within") {
		t.Fatalf("get of an ambiguous id: %v %q, want an error saying to give within", res.IsError, text(res))
	}
	within := map[string]any{"user": "u2"}
	var m MemoryOut
	ok(t, cs, "memory_get", map[string]any{"id": "x", "within": within}, &m)
	if m.Text != "u2's note about owls" {
		t.Fatalf("get within user u2: %+v", m)
	}
	ok(t, cs, "memory_update", map[string]any{"id": "x", "within": within, "text": "u2's note about hawks"}, &m)
	ok(t, cs, "memory_favorite", map[string]any{"id": "x", "within": within}, &m)
	if m.Text != "u2's note about hawks" || !m.Favorite {
		t.Fatalf("update and favorite within user u2: %+v", m)
	}
	var h HistoryOutput
	ok(t, cs, "memory_history", map[string]any{"id": "x", "within": within}, &h)
	if len(h.Versions) != 1 {
		t.Fatalf("history within user u2: %+v", h)
	}
	if res := call(t, cs, "memory_delete", map[string]any{"id": "x", "within": map[string]any{"team": "t2"}}); !res.IsError {
		t.Fatalf("delete within another tenant's scope succeeded: %q", text(res))
	}
	var d DeleteOutput
	ok(t, cs, "memory_delete", map[string]any{"id": "x", "within": map[string]any{"user": "u1"}}, &d)
	if d.Deleted != 1 {
		t.Fatalf("delete within user u1: %+v", d)
	}
	for scope, want := range map[string]string{"t1,u2": "u2's note about hawks", "t2": "team two's note"} {
		sc := map[string]string{"team": "t2"}
		if scope == "t1,u2" {
			sc = u2
		}
		v, _ := db.WithScope(sc)
		if got, err := v.Get(ctx, "x"); err != nil || got.Text != want {
			t.Errorf("%s's x: %+v, %v; want %q", scope, got, err, want)
		}
	}
	if v, _ := db.WithScope(u1); func() bool { _, err := v.Get(ctx, "x"); return err == nil }() {
		t.Error("u1's x survived its delete")
	}
}
