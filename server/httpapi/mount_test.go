package httpapi

import (
	"errors"
	"net/http"
	"strings"
	"testing"

	"github.com/engram-memory/engram"
)

// TestHandleAndAuthorize: a mounted handler sees the key's scoped view and
// the same refusals as the JSON API.
func TestHandleAndAuthorize(t *testing.T) {
	db := openDB(t, false)
	s, err := New(db, Config{Keys: testKeys, MaxBodyBytes: 64})
	if err != nil {
		t.Fatal(err)
	}
	s.Handle("/mcp", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, err := s.Authorize(r)
		if err != nil {
			var e *Error
			if !errors.As(err, &e) {
				t.Errorf("Authorize error %T", err)
			}
			writeError(w, e)
			return
		}
		sc, ok := b.(*engram.Scoped)
		if !ok {
			t.Errorf("backend %T, want *engram.Scoped", b)
			return
		}
		writeJSON(w, http.StatusOK, sc.Scope())
	}))
	_, ts := startServerWith(t, s)
	c := ts.Client()
	var scope map[string]string
	mustJSON(t, call(t, c, ts.URL, "POST", "/mcp", keyB, `{}`), http.StatusOK, &scope)
	if scope["team"] != "b" {
		t.Fatalf("scope %v", scope)
	}
	if r := call(t, c, ts.URL, "POST", "/mcp", "", `{}`); r.status != http.StatusUnauthorized || r.errCode() != CodeUnauthorized {
		t.Fatalf("no key: %d %s", r.status, r.body)
	}
	if r := call(t, c, ts.URL, "POST", "/mcp", keyA, strings.Repeat("x", 100)); r.status != http.StatusRequestEntityTooLarge {
		t.Fatalf("oversized: %d %s", r.status, r.body)
	}
	if r := call(t, c, ts.URL, "GET", "/mcpx", keyA, nil); r.status != http.StatusNotFound {
		t.Fatalf("/mcpx: %d", r.status)
	}
}

func TestParseKeys(t *testing.T) {
	tests := []struct {
		name, in, err string
		n             int
	}{
		{"two keys", `{"keys": [{"key": "k1", "scope": {"team": "a"}}, {"key": "k2", "scope": {"team": "b", "user": "u"}}]}`, "", 2},
		{"no keys", `{"keys": []}`, "no keys", 0},
		{"unknown field", `{"keys": [{"key": "k1", "scopes": {}}]}`, "unknown field", 0},
		{"wrong type", `{"keys": {"key": "k1"}}`, "expected an array", 0},
		{"not json", `keys: k1`, "invalid JSON", 0},
		{"trailing", `{"keys": [{"key": "k1", "scope": {"a": "b"}}]} {}`, "more than one", 0},
		// encoding/json would keep the last "key": issue 25's low list.
		{"key given twice", `{"keys": [{"key": "k1", "scope": {"a": "b"}}, {"key": "k2", "key": "k3"}]}`, `keys: field "keys[1].key" appears twice in the same object`, 0},
		{"scope key given twice", `{"keys": [{"key": "k1", "scope": {"a": "b", "a": "c"}}]}`, `field "keys[0].scope.a" appears twice`, 0},
		{"keys given twice", `{"keys": [{"key": "k1"}], "keys": [{"key": "k2"}]}`, `field "keys" appears twice`, 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			keys, err := ParseKeys([]byte(tc.in))
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("err %v, want %q", err, tc.err)
				}
				return
			}
			if err != nil || len(keys) != tc.n {
				t.Fatalf("%v %v", keys, err)
			}
		})
	}
}
