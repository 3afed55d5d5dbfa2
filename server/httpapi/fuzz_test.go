package httpapi

import (
	"bytes"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/engram-memory/engram"
)

// FuzzMemoryBodies feeds arbitrary bodies to the routes that change one
// memory (PATCH, favorite, touch) and to import: never a 5xx or a panic, a
// 2xx always with a JSON body, and what they store always readable back (a
// GET of the memory and an export answer 200).
func FuzzMemoryBodies(f *testing.F) {
	db := openDB(f, false)
	s, err := New(db, Config{MaxBodyBytes: 1 << 16, MaxImportBytes: 1 << 16})
	if err != nil {
		f.Fatal(err)
	}
	if _, err := db.Add(f.Context(), &engram.Memory{ID: "m1", Text: "a memory to change"}); err != nil {
		f.Fatal(err)
	}
	for _, seed := range []string{`{}`, `{"text": "new"}`, `{"on": true}`, `{"on": "yes"}`, `{"scope": {"team": "t"}}`,
		`{"tags": ["a", "a"]}`, `{"metadata": []}`, `{"metadata": {"k": 1}}`, `{"text": ""}`, `null`,
		`{"text": "a"}` + "\n" + `{"text": "b", "uses": -1}`, `{"id": "m1", "text": "imported over"}`,
		`{"text": "x", "created_at": "9999-12-31T23:59:59Z"}`, `{"text":"y","embedding":{"model":"m","dim":1,"vector":[0]}}`} {
		f.Add([]byte(seed))
	}
	serve := func(t *testing.T, method, path, ctype string, body []byte) {
		req, _ := http.NewRequest(method, "http://127.0.0.1"+path, bytes.NewReader(body))
		req.Header.Set("Content-Type", ctype)
		w := httptest.NewRecorder()
		s.ServeHTTP(w, req)
		if w.Code >= 500 {
			t.Fatalf("%s %s %q: %d %s", method, path, body, w.Code, w.Body.String())
		}
		if w.Code < 300 && path != "/v1/export" && !json.Valid(w.Body.Bytes()) {
			t.Fatalf("%s %s %q: %d with a body that is not JSON: %q", method, path, body, w.Code, w.Body.String())
		}
		if w.Code < 300 && path == "/v1/export" && w.Code != http.StatusOK {
			t.Fatalf("export after %s: %d", path, w.Code)
		}
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		serve(t, "PATCH", "/v1/memories/m1", "application/json", body)
		serve(t, "POST", "/v1/memories/m1/favorite", "application/json", body)
		serve(t, "POST", "/v1/memories/m1/touch", "application/json", body)
		serve(t, "POST", "/v1/import", "application/x-ndjson", body)
		serve(t, "POST", "/v1/import?skip_invalid=true", "application/x-ndjson", body)
		serve(t, "GET", "/v1/memories/m1", "", nil)
		serve(t, "GET", "/v1/export", "", nil)
	})
}

// FuzzKeysFile: any keys document either is refused with an error or gives a
// server on which every key it accepted authenticates (before, a key with a
// NUL or an NBSP passed the check and could never be sent).
func FuzzKeysFile(f *testing.F) {
	db := openDB(f, false)
	for _, seed := range []string{
		`{"keys": [{"key": "0123456789abcdef", "scope": {"team": "a"}}]}`,
		`{"keys": [{"key": "0123456789abcdef\u0000", "scope": {"team": "a"}}]}`,
		`{"keys": [{"key": "0123456789abcdef\u00a0", "scope": {"team": "a"}}]}`,
		`{"keys": [{"key": "0123456789abcdef", "scope": {"team": "b"}}, {"key": "fedcba9876543210", "scope": {"user": "u1"}}]}`,
		`{"keys": [{"key": "0123456789abcdef", "scope": {}}]}`, `{"keys": []}`, `{"keys": [{"key": 5}]}`, `{"extra": 1}`, `[]`,
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		keys, err := ParseKeys(data)
		if err != nil {
			return
		}
		s, err := New(db, Config{Keys: keys})
		if err != nil {
			return
		}
		for i, k := range keys {
			for j := 0; j < len(k.Key); j++ {
				if c := k.Key[j]; c <= ' ' || c >= 0x7f {
					t.Fatalf("key %d (%q) was accepted with byte %#x, which no HTTP client sends as it is", i+1, k.Key, c)
				}
			}
			req, _ := http.NewRequest("GET", "http://127.0.0.1/v1/stats", nil)
			req.Header.Set("Authorization", "Bearer "+k.Key)
			w := httptest.NewRecorder()
			s.ServeHTTP(w, req)
			if w.Code != http.StatusOK {
				t.Fatalf("key %d (%q) was accepted but does not authenticate: %d %s", i+1, k.Key, w.Code, strings.TrimSpace(w.Body.String()))
			}
		}
		if err := checkKeyScopes(keys); err != nil {
			t.Fatalf("New accepted keys whose scopes overlap: %v", err)
		}
	})
}
