package httpapi

import (
	"net/http"
	"strings"
	"testing"
)

// TestZeroTimeRefused: a time given as the zero instant is refused on every
// write path (issue 25: POST /v1/memories stored it as now, although import
// refused it), with a 400 naming the field and, in a list, the element.
func TestZeroTimeRefused(t *testing.T) {
	db := openDB(t, false)
	_, ts := startServer(t, db, Config{})
	c := ts.Client()
	id := func() string {
		var res struct{ IDs []string }
		mustJSON(t, call(t, c, ts.URL, "POST", "/v1/memories", "", `{"text": "a memory to patch"}`), http.StatusCreated, &res)
		return res.IDs[0]
	}()
	const zero = `"0001-01-01T00:00:00Z"`
	for _, c2 := range []struct {
		name, method, path, body, want string
	}{
		{"add created_at", "POST", "/v1/memories", `{"text": "x", "created_at": ` + zero + `}`, `field \"created_at\"`},
		{"add occurred_at", "POST", "/v1/memories", `{"text": "x", "occurred_at": ` + zero + `}`, `field \"occurred_at\"`},
		{"add updated_at", "POST", "/v1/memories", `{"text": "x", "updated_at": ` + zero + `}`, `field \"updated_at\"`},
		{"batch", "POST", "/v1/memories", `{"memories": [{"text": "a"}, {"text": "b", "created_at": ` + zero + `}]}`, `memory 2: invalid: field \"created_at\"`},
		{"episode message", "POST", "/v1/episodes", `{"episode": "e1", "messages": [{"text": "hi", "occurred_at": ` + zero + `}]}`, `message 1: invalid: field \"occurred_at\"`},
		{"patch", "PATCH", "/v1/memories/" + id, `{"occurred_at": ` + zero + `}`, `field \"occurred_at\"`},
		{"import", "POST", "/v1/import", `{"text": "x", "created_at": ` + zero + `}` + "\n", `line 1: field \"created_at\"`},
	} {
		t.Run(c2.name, func(t *testing.T) {
			r := call(t, c, ts.URL, c2.method, c2.path, "", c2.body)
			if r.status != http.StatusBadRequest || !strings.Contains(string(r.body), c2.want) || !strings.Contains(string(r.body), "0001-01-01T00:00:00Z") {
				t.Fatalf("%d %s; want 400 naming %s", r.status, r.body, c2.want)
			}
		})
	}
	var page struct{ Memories []any }
	mustJSON(t, call(t, c, ts.URL, "GET", "/v1/memories", "", nil), http.StatusOK, &page)
	if len(page.Memories) != 1 {
		t.Fatalf("%d memories stored, want only the first", len(page.Memories))
	}
}

// TestEmptyImportIDs: an import of nothing answers "ids": [], not null.
func TestEmptyImportIDs(t *testing.T) {
	db := openDB(t, false)
	_, ts := startServer(t, db, Config{})
	r := call(t, ts.Client(), ts.URL, "POST", "/v1/import", "", "\n")
	if r.status != http.StatusOK || !strings.Contains(string(r.body), `"ids":[]`) {
		t.Fatalf("%d %s", r.status, r.body)
	}
}

// TestJSONErrorsInJSONWords: a body field of the wrong kind, or a time that
// does not parse, is a 400 naming the field and the kind of value it takes,
// never a Go type.
func TestJSONErrorsInJSONWords(t *testing.T) {
	db := openDB(t, false)
	_, ts := startServer(t, db, Config{})
	for _, c := range []struct{ path, body, want string }{
		{"/v1/memories", `{"text": "x", "tags": "a"}`, `field \"tags\": expected an array of strings, got a string`},
		{"/v1/memories", `{"text": "x", "created_at": "yesterday"}`, `field \"created_at\": \"yesterday\" is not an RFC 3339 time`},
		{"/v1/search", `{"query": "x", "limit": "3"}`, `field \"limit\": expected an integer, got a string`},
	} {
		r := call(t, ts.Client(), ts.URL, "POST", c.path, "", c.body)
		if r.status != http.StatusBadRequest || !strings.Contains(string(r.body), c.want) || strings.Contains(string(r.body), "Go ") {
			t.Errorf("%s %s: %d %s; want 400 with %s", c.path, c.body, r.status, r.body, c.want)
		}
	}
}
