package httpapi

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/engram-memory/engram"
)

// TestRoutes walks every route's happy path on a keyless loopback server with
// the built-in embedder.
func TestRoutes(t *testing.T) {
	db := openDB(t, true)
	_, ts := startServer(t, db, Config{})
	c := ts.Client()
	base := ts.URL

	var added engram.AddResult
	mustJSON(t, call(t, c, base, "POST", "/v1/memories", "", map[string]any{
		"name": "Editor theme", "text": "The user prefers dark themes in every editor and terminal.", "type": "preference",
		"scope": map[string]string{"user": "u1"}, "tags": []string{"ui"},
	}), http.StatusCreated, &added)
	if len(added.IDs) != 1 || added.Embedded != 1 {
		t.Fatalf("add: %+v", added)
	}
	id := added.IDs[0]
	var batch engram.AddResult
	mustJSON(t, call(t, c, base, "POST", "/v1/memories", "", map[string]any{"memories": []map[string]any{
		{"text": "Production runs PostgreSQL 15 with a read replica used for reports.", "type": "fact"},
		{"id": "coffee", "text": "The user drinks espresso, no sugar.", "type": "preference", "scope": map[string]string{"user": "u1"}},
	}}), http.StatusCreated, &batch)
	if len(batch.IDs) != 2 || batch.IDs[1] != "coffee" {
		t.Fatalf("batch add: %+v", batch)
	}

	var m engram.Memory
	mustJSON(t, call(t, c, base, "GET", "/v1/memories/"+id, "", nil), http.StatusOK, &m)
	if m.Name != "Editor theme" || m.Scope["user"] != "u1" || m.Embedding == nil {
		t.Fatalf("get: %+v", m)
	}
	mustJSON(t, call(t, c, base, "PATCH", "/v1/memories/"+id, "", map[string]any{"text": "The user prefers dark themes everywhere.", "tags": []string{"ui", "colour"}}), http.StatusOK, &m)
	if m.Text != "The user prefers dark themes everywhere." || len(m.Tags) != 2 {
		t.Fatalf("patch: %+v", m)
	}
	mustJSON(t, call(t, c, base, "POST", "/v1/memories/"+id+"/favorite", "", map[string]bool{"on": true}), http.StatusOK, &m)
	if !m.Favorite {
		t.Fatal("favorite: not marked")
	}
	mustJSON(t, call(t, c, base, "POST", "/v1/memories/coffee/favorite", "", nil), http.StatusOK, &m)
	if !m.Favorite {
		t.Fatal("favorite without a body: not marked")
	}
	var unfav engram.Memory
	mustJSON(t, call(t, c, base, "POST", "/v1/memories/coffee/favorite", "", map[string]bool{"on": false}), http.StatusOK, &unfav)
	if unfav.Favorite || unfav.ID != "coffee" {
		t.Fatal("favorite on=false: still marked")
	}
	var touched map[string]int
	mustJSON(t, call(t, c, base, "POST", "/v1/memories/coffee/touch", "", nil), http.StatusOK, &touched)
	mustJSON(t, call(t, c, base, "GET", "/v1/memories/coffee", "", nil), http.StatusOK, &m)
	if m.Uses != 1 {
		t.Fatalf("touch: uses %d, want 1", m.Uses)
	}

	var resp engram.Response
	mustJSON(t, call(t, c, base, "POST", "/v1/search", "", map[string]any{"query": "dark themes", "limit": 3, "qid": "q1", "no_record": true}), http.StatusOK, &resp)
	if resp.QID != "q1" || len(resp.Results) == 0 || resp.Results[0].ID != id || resp.Results[0].Explain == nil {
		t.Fatalf("search: %+v", resp)
	}
	mustJSON(t, call(t, c, base, "POST", "/v1/search", "", map[string]any{"query": "espresso", "scope": map[string]string{"user": "u1"}, "mode": "bm25"}), http.StatusOK, &resp)
	if len(resp.Results) != 1 || resp.Results[0].ID != "coffee" || resp.Strategy != "bm25" {
		t.Fatalf("scoped search: %+v", resp)
	}

	var inj engram.Injection
	mustJSON(t, call(t, c, base, "POST", "/v1/inject", "", map[string]any{"prompt": "which database do reports use", "min_relevance": 0.0}), http.StatusOK, &inj)
	if len(inj.Results) == 0 || !strings.Contains(inj.Text, "PostgreSQL") {
		t.Fatalf("inject: %+v", inj)
	}
	var br engram.Brief
	mustJSON(t, call(t, c, base, "POST", "/v1/brief", "", map[string]any{"budget": 500}), http.StatusOK, &br)
	if len(br.Items) == 0 || br.Items[0].ID != id || br.Items[0].Reason != "favorite" {
		t.Fatalf("brief: %+v", br)
	}
	mustJSON(t, call(t, c, base, "POST", "/v1/brief", "", nil), http.StatusOK, &br)

	var imp engram.ImportResult
	jsonl := `{"id": "imp-1", "text": "Alice owns the billing service."}` + "\n" + `{"text": ""}` + "\n"
	r := call(t, c, base, "POST", "/v1/import", "", jsonl)
	if r.status != http.StatusBadRequest || !strings.Contains(string(r.body), "line 2") {
		t.Fatalf("import of an invalid line: %d %s", r.status, r.body)
	}
	mustJSON(t, call(t, c, base, "POST", "/v1/import?skip_invalid=true", "", jsonl), http.StatusOK, &imp)
	if len(imp.IDs) != 1 || len(imp.Skipped) != 1 || imp.Skipped[0].Line != 2 {
		t.Fatalf("import: %+v", imp)
	}

	var st engram.Stats
	mustJSON(t, call(t, c, base, "GET", "/v1/stats", "", nil), http.StatusOK, &st)
	if st.Memories != 4 || st.Favorites != 1 || st.Path != db.Path() {
		t.Fatalf("stats: %+v", st)
	}

	r = call(t, c, base, "GET", "/v1/export", "", nil)
	if r.status != http.StatusOK || !strings.HasPrefix(r.header.Get("Content-Type"), "application/x-ndjson") {
		t.Fatalf("export: %d %v", r.status, r.header)
	}
	var want bytes.Buffer
	if err := db.Export(context.Background(), &want); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(r.body, want.Bytes()) {
		t.Fatalf("export differs from the store's:\n%s\nwant\n%s", r.body, want.Bytes())
	}

	var del map[string]int
	mustJSON(t, call(t, c, base, "DELETE", "/v1/memories/imp-1", "", nil), http.StatusOK, &del)
	if del["deleted"] != 1 {
		t.Fatalf("delete: %v", del)
	}
	if r := call(t, c, base, "GET", "/v1/memories/imp-1", "", nil); r.status != http.StatusNotFound || r.errCode() != CodeNotFound {
		t.Fatalf("get after delete: %d %s", r.status, r.body)
	}

	for _, p := range []string{"/healthz", "/readyz"} {
		if r := call(t, c, base, "GET", p, "", nil); r.status != http.StatusOK {
			t.Fatalf("%s: %d", p, r.status)
		}
	}
	if r := call(t, c, base, "GET", "/openapi.json", "", nil); r.status != http.StatusOK || !json.Valid(r.body) {
		t.Fatalf("openapi.json: %d", r.status)
	}
}

// TestIDWithSlash reaches a memory whose id holds a slash, path-escaped.
func TestIDWithSlash(t *testing.T) {
	_, ts := startServer(t, openDB(t, false), Config{})
	mustJSON(t, call(t, ts.Client(), ts.URL, "POST", "/v1/memories", "", map[string]any{"id": "notes/a+b", "text": "x"}), http.StatusCreated, nil)
	var m engram.Memory
	mustJSON(t, call(t, ts.Client(), ts.URL, "GET", "/v1/memories/notes%2Fa+b", "", nil), http.StatusOK, &m)
	if m.ID != "notes/a+b" {
		t.Fatalf("got %q", m.ID)
	}
}

func TestReadyz(t *testing.T) {
	s, ts := startServer(t, openDB(t, false), Config{})
	s.SetReady(false)
	r := call(t, ts.Client(), ts.URL, "GET", "/readyz", "", nil)
	if r.status != http.StatusServiceUnavailable || r.errCode() != CodeUnavailable {
		t.Fatalf("readyz while draining: %d %s", r.status, r.body)
	}
	if r := call(t, ts.Client(), ts.URL, "GET", "/healthz", "", nil); r.status != http.StatusOK {
		t.Fatalf("healthz while draining: %d", r.status)
	}
}

func TestNewRefusesBadKeys(t *testing.T) {
	db := openDB(t, false)
	tests := []struct {
		name string
		keys []Key
		want string
	}{
		{"empty scope", []Key{{Key: keyA}}, "at least one key=value"},
		{"short key", []Key{{Key: "short", Scope: map[string]string{"team": "a"}}}, "shorter than"},
		{"duplicate", []Key{testKeys[0], {Key: keyA, Scope: map[string]string{"team": "c"}}}, "repeats key 1"},
		{"invalid scope", []Key{{Key: keyA, Scope: map[string]string{"team": "a,b"}}}, "value must be non-empty"},
		{"whitespace", []Key{{Key: keyA + " x", Scope: map[string]string{"team": "a"}}}, "whitespace"},
		{"NUL", []Key{{Key: keyA + "\x00", Scope: map[string]string{"team": "a"}}}, "printable ASCII"},
		{"NBSP", []Key{{Key: keyA + "\u00a0", Scope: map[string]string{"team": "a"}}}, "printable ASCII"},
		// Issue 14 item 3: team b could plant memories for user u1.
		{"overlap without nesting", []Key{
			{Key: keyA, Scope: map[string]string{"team": "b"}},
			{Key: keyB, Scope: map[string]string{"user": "u1"}},
			{Key: keyA + "-p", Scope: map[string]string{"project": "p1"}},
		}, "keys 1 (scope team=b) and 2 (scope user=u1) overlap without nesting: a memory of scope team=b,user=u1"},
		{"overlap on two keys", []Key{
			{Key: keyA, Scope: map[string]string{"team": "a", "user": "u1"}},
			{Key: keyB, Scope: map[string]string{"team": "a", "project": "p"}},
		}, "overlap without nesting"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := New(db, Config{Keys: tc.keys})
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err %v, want one containing %q", err, tc.want)
			}
		})
	}
}

// TestKeySetsThatNest: scopes that nest (a parent and its children) or
// conflict on a key (two teams) are accepted; so are two keys of one scope.
func TestKeySetsThatNest(t *testing.T) {
	db := openDB(t, false)
	keys := []Key{
		{Key: keyA, Scope: map[string]string{"team": "a"}},
		{Key: keyA + "-u1", Scope: map[string]string{"team": "a", "user": "u1"}},
		{Key: keyA + "-u2", Scope: map[string]string{"team": "a", "user": "u2"}},
		{Key: keyB, Scope: map[string]string{"team": "b"}},
		{Key: keyB + "-2", Scope: map[string]string{"team": "b"}},
		{Key: keyB + "-p", Scope: map[string]string{"team": "b", "project": "p", "user": "u1"}},
	}
	if _, err := New(db, Config{Keys: keys}); err != nil {
		t.Fatal(err)
	}
}

// panicky is a Backend whose Stats panics.
type panicky struct{ Backend }

func (panicky) Stats(context.Context) (engram.Stats, error) { panic("boom") }

func TestPanicRecovered(t *testing.T) {
	s, ts := startServer(t, openDB(t, false), Config{})
	s.open.b = panicky{s.open.b}
	r := call(t, ts.Client(), ts.URL, "GET", "/v1/stats", "", nil)
	if r.status != http.StatusInternalServerError || r.errCode() != CodeInternal || strings.Contains(string(r.body), "boom") {
		t.Fatalf("panic: %d %s", r.status, r.body)
	}
	if r := call(t, ts.Client(), ts.URL, "GET", "/healthz", "", nil); r.status != http.StatusOK {
		t.Fatalf("after a panic: %d", r.status)
	}
}

// TestKeylessHostAndOrigin: a keyless server answers only loopback Host names
// and no browser origin (DNS rebinding, cross-site requests).
func TestKeylessHostAndOrigin(t *testing.T) {
	_, ts := startServer(t, openDB(t, false), Config{})
	tests := []struct {
		name, host, origin string
		want               int
	}{
		{"loopback ip", "127.0.0.1:7077", "", 200},
		{"localhost", "localhost", "", 200},
		{"ipv6 loopback", "[::1]:7077", "", 200},
		{"rebinding name", "evil.example:7077", "", 403},
		{"lan address", "192.168.1.5:7077", "", 403},
		{"browser origin", "127.0.0.1", "http://evil.example", 403},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			req, _ := http.NewRequest("GET", ts.URL+"/v1/stats", nil)
			req.Host = tc.host
			if tc.origin != "" {
				req.Header.Set("Origin", tc.origin)
			}
			resp, err := ts.Client().Do(req)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			if resp.StatusCode != tc.want {
				t.Fatalf("status %d, want %d", resp.StatusCode, tc.want)
			}
		})
	}
	// AnyHost lifts the Host rule (the operator exposed the server on purpose).
	_, ts2 := startServer(t, openDB(t, false), Config{AnyHost: true})
	req, _ := http.NewRequest("GET", ts2.URL+"/v1/stats", nil)
	req.Host = "memory.internal"
	resp, err := ts2.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Fatalf("AnyHost: %d", resp.StatusCode)
	}
}

// readJSONL splits an export into memories.
func readJSONL(tb testing.TB, data []byte) []engram.Memory {
	tb.Helper()
	var out []engram.Memory
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(nil, 16<<20)
	for sc.Scan() {
		var m engram.Memory
		if err := json.Unmarshal(sc.Bytes(), &m); err != nil {
			tb.Fatalf("export line %q: %v", sc.Text(), err)
		}
		out = append(out, m)
	}
	return out
}
