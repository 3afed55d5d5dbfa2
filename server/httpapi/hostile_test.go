package httpapi

import (
	"bytes"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"

	"github.com/engram-memory/engram"
)

// TestHostileInput: every bad request gets a clear 4xx JSON error with a
// stable code, never a 5xx or a panic.
func TestHostileInput(t *testing.T) {
	db := openDB(t, false)
	_, ts := startServer(t, db, Config{Keys: testKeys, MaxBodyBytes: 4096, MaxImportBytes: 8192, MaxLimit: 50, MaxBatch: 3})
	c, base := ts.Client(), ts.URL
	mustJSON(t, call(t, c, base, "POST", "/v1/memories", keyA, map[string]any{"id": "m1", "text": "a memory"}), http.StatusCreated, nil)

	big := `{"text": "` + strings.Repeat("x", 5000) + `"}`
	tests := []struct {
		name, method, path, key string
		body                    any
		status                  int
		code                    string
	}{
		{"oversized body", "POST", "/v1/memories", keyA, big, 413, CodeTooLarge},
		{"oversized import", "POST", "/v1/import", keyA, strings.Repeat(`{"text": "a memory to import"}`+"\n", 400), 413, CodeTooLarge},
		{"too many in a batch", "POST", "/v1/memories", keyA, `{"memories": [{"text": "a"}, {"text": "b"}, {"text": "c"}, {"text": "d"}]}`, 413, CodeTooLarge},
		{"empty batch", "POST", "/v1/memories", keyA, `{"memories": []}`, 400, CodeBadRequest},
		{"null in a batch", "POST", "/v1/memories", keyA, `{"memories": [null]}`, 400, CodeBadRequest},
		{"bad json", "POST", "/v1/memories", keyA, `{"text": "x"`, 400, CodeInvalidJSON},
		{"not json", "POST", "/v1/search", keyA, `query=x`, 400, CodeInvalidJSON},
		{"empty body", "POST", "/v1/search", keyA, ``, 400, CodeInvalidJSON},
		{"two values", "POST", "/v1/search", keyA, `{"query": "x"} {"query": "y"}`, 400, CodeInvalidJSON},
		{"array instead of object", "POST", "/v1/memories", keyA, `[{"text": "x"}]`, 400, CodeBadRequest},
		{"wrong type text", "POST", "/v1/memories", keyA, `{"text": 42}`, 400, CodeBadRequest},
		{"wrong type limit", "POST", "/v1/search", keyA, `{"query": "x", "limit": "ten"}`, 400, CodeBadRequest},
		{"wrong type scope", "POST", "/v1/search", keyA, `{"query": "x", "scope": ["team", "a"]}`, 400, CodeBadRequest},
		{"bad time", "POST", "/v1/search", keyA, `{"query": "x", "since": "yesterday"}`, 400, CodeBadRequest},
		{"unknown field", "POST", "/v1/search", keyA, `{"query": "x", "limt": 5}`, 400, CodeUnknownField},
		{"unknown field in memory", "POST", "/v1/memories", keyA, `{"text": "x", "colour": "red"}`, 400, CodeUnknownField},
		{"unknown field in batch", "POST", "/v1/memories", keyA, `{"memories": [{"text": "x", "evil": 1}]}`, 400, CodeUnknownField},
		{"batch with other keys", "POST", "/v1/memories", keyA, `{"memories": [{"text": "x"}], "text": "y"}`, 400, CodeUnknownField},
		{"unknown field in patch", "PATCH", "/v1/memories/m1", keyA, `{"id": "other"}`, 400, CodeUnknownField},
		{"unknown field in favorite", "POST", "/v1/memories/m1/favorite", keyA, `{"off": true}`, 400, CodeUnknownField},
		{"body on touch", "POST", "/v1/memories/m1/touch", keyA, `{"n": 3}`, 400, CodeUnknownField},
		{"invalid utf-8", "POST", "/v1/memories", keyA, "{\"text\": \"caf\xe9\"}", 400, CodeInvalidJSON},
		{"invalid utf-8 import", "POST", "/v1/import", keyA, "{\"text\": \"caf\xe9\"}\n", 400, CodeBadRequest},
		{"empty text", "POST", "/v1/memories", keyA, `{"text": "  "}`, 400, CodeBadRequest},
		{"empty query", "POST", "/v1/search", keyA, `{"query": ""}`, 400, CodeBadRequest},
		{"blank query", "POST", "/v1/search", keyA, `{"query": " \t "}`, 400, CodeBadRequest},
		{"empty prompt", "POST", "/v1/inject", keyA, `{"prompt": ""}`, 400, CodeBadRequest},
		{"huge limit", "POST", "/v1/search", keyA, `{"query": "x", "limit": 1000000000}`, 400, CodeBadRequest},
		{"overflowing limit", "POST", "/v1/search", keyA, `{"query": "x", "limit": 1e30}`, 400, CodeBadRequest},
		{"negative limit", "POST", "/v1/search", keyA, `{"query": "x", "limit": -5}`, 400, CodeBadRequest},
		{"huge candidates", "POST", "/v1/search", keyA, `{"query": "x", "candidates": 1000000000}`, 400, CodeBadRequest},
		{"bad mode", "POST", "/v1/search", keyA, `{"query": "x", "mode": "magic"}`, 400, CodeBadRequest},
		{"keyword gate above 1", "POST", "/v1/search", keyA, `{"query": "x", "keyword_gate": 1.5}`, 400, CodeBadRequest},
		{"negative keyword gate", "POST", "/v1/search", keyA, `{"query": "x", "keyword_gate": -0.5}`, 400, CodeBadRequest},
		{"huge inject limit", "POST", "/v1/inject", keyA, `{"prompt": "x", "limit": 100000}`, 400, CodeBadRequest},
		{"negative brief limit", "POST", "/v1/brief", keyA, `{"limit": -1}`, 400, CodeBadRequest},
		{"huge brief budget", "POST", "/v1/brief", keyA, `{"budget": 1000000000}`, 400, CodeBadRequest},
		{"bad skip_invalid", "POST", "/v1/import?skip_invalid=maybe", keyA, `{"text": "x"}`, 400, CodeBadRequest},
		{"bad metadata", "POST", "/v1/memories", keyA, `{"text": "x", "metadata": [1]}`, 400, CodeBadRequest},
		{"bad scope value", "POST", "/v1/memories", keyA, `{"text": "x", "scope": {"user": "a,b"}}`, 400, CodeBadRequest},
		{"long id", "POST", "/v1/memories", keyA, `{"id": "` + strings.Repeat("i", 200) + `", "text": "x"}`, 400, CodeBadRequest},
		{"missing bearer", "GET", "/v1/stats", "", nil, 401, CodeUnauthorized},
		{"unknown bearer", "GET", "/v1/stats", "key-c-0123456789abcdef", nil, 401, CodeUnauthorized},
		{"bearer prefix of a key", "GET", "/v1/stats", keyA[:len(keyA)-1], nil, 401, CodeUnauthorized},
		{"missing id", "GET", "/v1/memories/nope", keyA, nil, 404, CodeNotFound},
		{"empty id", "GET", "/v1/memories/", keyA, nil, 404, CodeNotFound},
		{"wrong method", "PUT", "/v1/memories/m1", keyA, `{}`, 405, CodeMethodNotAllowed},
		{"wrong method search", "GET", "/v1/search", keyA, nil, 405, CodeMethodNotAllowed},
		{"unknown path", "GET", "/v2/memories", keyA, nil, 404, CodeNotFound},
		{"unknown path root", "GET", "/", "", nil, 404, CodeNotFound},
		{"trailing slash", "POST", "/v1/search/", keyA, `{"query": "x"}`, 404, CodeNotFound},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := call(t, c, base, tc.method, tc.path, tc.key, tc.body)
			if r.status != tc.status || r.errCode() != tc.code {
				t.Fatalf("%d %s, want %d %s", r.status, r.body, tc.status, tc.code)
			}
			if ct := r.header.Get("Content-Type"); !strings.HasPrefix(ct, "application/json") {
				t.Fatalf("Content-Type %q", ct)
			}
			if strings.Count(strings.TrimSpace(string(r.body)), "\n") != 0 {
				t.Fatalf("error body is not one line: %s", r.body)
			}
		})
	}

	// Malformed Authorization headers.
	for _, h := range []string{"Basic " + keyA, "Bearer", "Bearer ", keyA, "Bearer " + keyA + "x"} {
		req, _ := http.NewRequest("GET", base+"/v1/stats", nil)
		req.Header.Set("Authorization", h)
		resp, err := c.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusUnauthorized || resp.Header.Get("WWW-Authenticate") == "" {
			t.Errorf("Authorization %q: %d", h, resp.StatusCode)
		}
	}
	// 405 names the allowed methods.
	r := call(t, c, base, "PUT", "/v1/memories/m1", keyA, `{}`)
	if allow := r.header.Get("Allow"); allow != "GET, PATCH, DELETE" {
		t.Errorf("Allow %q", allow)
	}
	// Nothing was stored by the refused writes.
	if n := db.Count(); n != 1 {
		t.Errorf("%d memories stored, want 1", n)
	}
}

// FuzzDecodeSearch feeds arbitrary bodies to the JSON routes, as a sequence
// of requests on one store that keeps what earlier inputs wrote: add, search,
// inject, brief, then PATCH, favorite and touch of what was added, stats and
// export. Every answer is a 2xx or a 4xx, never a 5xx or a panic, and every
// 2xx has a body that is JSON (JSONL for the export) and not empty.
func FuzzDecodeSearch(f *testing.F) {
	db := openDB(f, false)
	s, err := New(db, Config{MaxBodyBytes: 1 << 16})
	if err != nil {
		f.Fatal(err)
	}
	for _, seed := range []string{`{"query": "x"}`, `{"query": "x", "limit": -1}`, `{}`, `[]`, `{"scope": {"a": "b"}, "query": "y"}`, "\xff",
		`{"text": "a", "uses": 9223372036854775807}`, `{"query": "x", "vector_weight": 1e308}`, `{"text": "b", "created_at": "2500-01-01T00:00:00Z"}`,
		`{"text": "c", "id": "fixed", "demand": 1e300, "demand_at": "2020-01-01T00:00:00Z"}`, `{"query": "x", "since": "0001-01-01T00:00:00Z"}`,
		`{"memories": [{"text": "d", "id": "d1"}, {"text": "e", "id": "d1"}]}`, `{"prompt": "x", "min_relevance": 0}`, `{"on": false}`} {
		f.Add([]byte(seed))
	}
	serve := func(t *testing.T, method, path string, body []byte) *httptest.ResponseRecorder {
		req, _ := http.NewRequest(method, "http://127.0.0.1"+path, bytes.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		w := httptest.NewRecorder()
		s.ServeHTTP(w, req)
		if w.Code >= 500 {
			t.Fatalf("%s %s %q: %d %s", method, path, body, w.Code, w.Body.String())
		}
		if w.Code < 300 {
			b := bytes.TrimSpace(w.Body.Bytes())
			if len(b) == 0 && path != "/v1/export" {
				t.Fatalf("%s %s %q: %d with an empty body", method, path, body, w.Code)
			}
			for _, line := range bytes.Split(b, []byte("\n")) {
				if len(line) > 0 && !json.Valid(line) {
					t.Fatalf("%s %s %q: %d with a body that is not JSON: %q", method, path, body, w.Code, line)
				}
			}
		}
		return w
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		for _, path := range []string{"/v1/search", "/v1/inject", "/v1/brief"} {
			serve(t, "POST", path, body)
		}
		added := serve(t, "POST", "/v1/memories", body)
		var res engram.AddResult
		if added.Code == http.StatusCreated && json.Unmarshal(added.Body.Bytes(), &res) == nil {
			for _, id := range res.IDs {
				p := "/v1/memories/" + url.PathEscape(id)
				serve(t, "PATCH", p, body)
				serve(t, "POST", p+"/favorite", body)
				serve(t, "POST", p+"/touch", nil)
				serve(t, "GET", p, nil)
			}
		}
		serve(t, "GET", "/v1/stats", nil)
		serve(t, "GET", "/v1/export", nil)
	})
}
