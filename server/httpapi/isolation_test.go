package httpapi

import (
	"net/http"
	"strings"
	"testing"

	"github.com/engram-memory/engram"
)

// TestIsolation: key A can neither read, search, update, delete, favorite,
// touch nor export key B's memories, even by their exact ids; a write by A
// carries A's scope; A naming B's scope is refused.
func TestIsolation(t *testing.T) {
	db := openDB(t, true)
	_, ts := startServer(t, db, Config{Keys: testKeys})
	c, base := ts.Client(), ts.URL

	add := func(key, text string, extra map[string]any) string {
		body := map[string]any{"text": text}
		for k, v := range extra {
			body[k] = v
		}
		var res engram.AddResult
		mustJSON(t, call(t, c, base, "POST", "/v1/memories", key, body), http.StatusCreated, &res)
		return res.IDs[0]
	}
	idA := add(keyA, "The deploy password rotates every Monday for team A.", nil)
	idB := add(keyB, "The deploy password rotates every Friday for team B.", map[string]any{"scope": map[string]string{"team": "b", "user": "u9"}})
	add(keyB, "Team B secret: the launch codename is Bluebird.", map[string]any{"id": "b-secret"})

	// Writes carry the key's scope.
	for _, tc := range []struct {
		id, key, team string
	}{{idA, keyA, "a"}, {idB, keyB, "b"}, {"b-secret", keyB, "b"}} {
		m, err := db.Get(t.Context(), tc.id)
		if err != nil || m.Scope["team"] != tc.team {
			t.Fatalf("%s: scope %v (%v), want team=%s", tc.id, m, err, tc.team)
		}
	}

	// Every single-memory route answers A's request for B's memory as missing.
	for _, id := range []string{idB, "b-secret"} {
		for _, tc := range []struct {
			method, path string
			body         any
		}{
			{"GET", "/v1/memories/" + id, nil},
			{"PATCH", "/v1/memories/" + id, map[string]any{"text": "overwritten by A"}},
			{"DELETE", "/v1/memories/" + id, nil},
			{"POST", "/v1/memories/" + id + "/favorite", map[string]bool{"on": true}},
			{"POST", "/v1/memories/" + id + "/touch", nil},
		} {
			r := call(t, c, base, tc.method, tc.path, keyA, tc.body)
			if r.status != http.StatusNotFound || r.errCode() != CodeNotFound {
				t.Errorf("A %s %s: %d %s, want 404 not_found", tc.method, tc.path, r.status, r.body)
			}
			missing := call(t, c, base, tc.method, "/v1/memories/no-such-id"+strings.TrimPrefix(tc.path, "/v1/memories/"+id), keyA, tc.body)
			if missing.status != r.status || missing.errCode() != r.errCode() {
				t.Errorf("A %s %s: answer differs from a missing id's: %d vs %d", tc.method, tc.path, r.status, missing.status)
			}
		}
	}
	// B's memories are untouched.
	m, err := db.Get(t.Context(), "b-secret")
	if err != nil || m.Text != "Team B secret: the launch codename is Bluebird." || m.Favorite || m.Uses != 0 {
		t.Fatalf("B's memory changed: %+v %v", m, err)
	}

	// Search, inject, brief and export never cross.
	for _, q := range []string{"deploy password rotates", "launch codename Bluebird", "team B"} {
		var resp engram.Response
		mustJSON(t, call(t, c, base, "POST", "/v1/search", keyA, map[string]any{"query": q, "limit": 50}), http.StatusOK, &resp)
		for _, r := range resp.Results {
			if r.Scope["team"] != "a" {
				t.Errorf("A's search %q returned %s (scope %v)", q, r.ID, r.Scope)
			}
		}
	}
	var inj engram.Injection
	mustJSON(t, call(t, c, base, "POST", "/v1/inject", keyA, map[string]any{"prompt": "Bluebird launch codename", "min_relevance": 0}), http.StatusOK, &inj)
	if strings.Contains(inj.Text, "Bluebird") {
		t.Errorf("A's injection holds B's memory: %q", inj.Text)
	}
	var br engram.Brief
	mustJSON(t, call(t, c, base, "POST", "/v1/brief", keyA, nil), http.StatusOK, &br)
	if len(br.Items) != 1 || br.Items[0].ID != idA {
		t.Errorf("A's brief: %+v", br.Items)
	}
	exp := call(t, c, base, "GET", "/v1/export", keyA, nil)
	if got := readJSONL(t, exp.body); len(got) != 1 || got[0].ID != idA {
		t.Errorf("A's export: %s", exp.body)
	}
	var st engram.Stats
	mustJSON(t, call(t, c, base, "GET", "/v1/stats", keyA, nil), http.StatusOK, &st)
	if st.Memories != 1 || st.Path != "" {
		t.Errorf("A's stats: %+v", st)
	}

	// Naming B's scope in a body is refused.
	for _, tc := range []struct {
		name, method, path string
		body               any
	}{
		{"add", "POST", "/v1/memories", map[string]any{"text": "x", "scope": map[string]string{"team": "b"}}},
		{"batch add", "POST", "/v1/memories", map[string]any{"memories": []any{map[string]any{"text": "x"}, map[string]any{"text": "y", "scope": map[string]string{"team": "b"}}}}},
		{"patch scope", "PATCH", "/v1/memories/" + idA, map[string]any{"scope": map[string]string{"team": "b"}}},
		{"search", "POST", "/v1/search", map[string]any{"query": "password", "scope": map[string]string{"team": "b"}}},
		{"inject", "POST", "/v1/inject", map[string]any{"prompt": "password", "scope": map[string]string{"team": "b"}}},
		{"brief", "POST", "/v1/brief", map[string]any{"scope": map[string]string{"team": "b"}}},
		{"import", "POST", "/v1/import", `{"text": "x", "scope": {"team": "b"}}` + "\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := call(t, c, base, tc.method, tc.path, keyA, tc.body)
			if r.status != http.StatusForbidden || r.errCode() != CodeForbidden {
				t.Errorf("%d %s, want 403 forbidden", r.status, r.body)
			}
		})
	}
	// A's write of B's id answers as for a free id and creates A's own
	// memory: ids are per-tenant namespaces; B's is untouched.
	if r := call(t, c, base, "POST", "/v1/memories", keyA, map[string]any{"id": "b-secret", "text": "mine now"}); r.status != http.StatusCreated {
		t.Errorf("A adding B's id: %d %s, want 201 as for a free id", r.status, r.body)
	}
	if m, err := db.WithScope(map[string]string{"team": "b"}); err == nil {
		if got, _ := m.Get(t.Context(), "b-secret"); got == nil || strings.Contains(got.Text, "mine") {
			t.Errorf("B's memory taken over: %+v", got)
		}
	}
	var mine engram.Memory
	mustJSON(t, call(t, c, base, "GET", "/v1/memories/b-secret", keyA, nil), http.StatusOK, &mine)
	if mine.Text != "mine now" || mine.Scope["team"] != "a" {
		t.Errorf("A's b-secret: %+v", mine)
	}
	// A narrower scope inside A's own is fine, and B still sees only B's.
	mustJSON(t, call(t, c, base, "POST", "/v1/memories", keyA, map[string]any{"text": "x", "scope": map[string]string{"team": "a", "user": "u1"}}), http.StatusCreated, nil)
	exp = call(t, c, base, "GET", "/v1/export", keyB, nil)
	for _, m := range readJSONL(t, exp.body) {
		if m.Scope["team"] != "b" {
			t.Errorf("B's export holds %s (scope %v)", m.ID, m.Scope)
		}
	}
}
