package mcpserver

import (
	"context"
	"crypto/subtle"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/engram-memory/engram"
)

// keyResolver maps bearer keys to scoped views, as the HTTP server does.
func keyResolver(tb testing.TB, db *engram.DB, keys map[string]map[string]string) Resolver {
	tb.Helper()
	views := map[string]*engram.Scoped{}
	for k, scope := range keys {
		v, err := db.WithScope(scope)
		if err != nil {
			tb.Fatal(err)
		}
		views[k] = v
	}
	return func(r *http.Request) (Backend, error) {
		got, found := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
		if !found {
			return nil, errors.New("missing bearer key")
		}
		for k, v := range views {
			if subtle.ConstantTimeCompare([]byte(k), []byte(got)) == 1 {
				return v, nil
			}
		}
		return nil, &StatusError{Status: http.StatusForbidden, Code: "forbidden", Err: errors.New("unknown key")}
	}
}

// bearer adds a key to every request.
type bearer struct {
	key  string
	base http.RoundTripper
}

func (b bearer) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+b.key)
	return b.base.RoundTrip(r)
}

// connectHTTP connects an SDK client to url with a key.
func connectHTTP(tb testing.TB, url, key string) *mcp.ClientSession {
	tb.Helper()
	t := &mcp.StreamableClientTransport{Endpoint: url, MaxRetries: -1,
		HTTPClient: &http.Client{Transport: bearer{key, http.DefaultTransport}}}
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "test-client", Version: "0"}, nil).Connect(context.Background(), t, nil)
	if err != nil {
		tb.Fatalf("connect %s: %v", url, err)
	}
	tb.Cleanup(func() { cs.Close() })
	return cs
}

func TestHTTP(t *testing.T) {
	db := openDB(t)
	mux := http.NewServeMux()
	mux.Handle("/mcp", HTTPHandler(keyResolver(t, db, map[string]map[string]string{
		"key-a": {"team": "a"}, "key-b": {"team": "b"},
	}), HTTPOptions{}))
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)

	t.Run("tools", func(t *testing.T) {
		exercise(t, connectHTTP(t, srv.URL+"/mcp", "key-a"))
	})

	t.Run("isolation", func(t *testing.T) {
		a, b := connectHTTP(t, srv.URL+"/mcp", "key-a"), connectHTTP(t, srv.URL+"/mcp", "key-b")
		var added AddOutput
		ok(t, a, "memory_add", map[string]any{"text": "Alpha team's launch code word is BLUEBIRD"}, &added)
		m, err := db.Get(context.Background(), added.ID)
		if err != nil || m.Scope["team"] != "a" {
			t.Fatalf("key's scope not applied: %+v %v", m, err)
		}
		var resp engram.Response
		ok(t, b, "memory_search", map[string]any{"query": "BLUEBIRD launch code word"}, &resp)
		if len(resp.Results) != 0 {
			t.Errorf("key b found key a's memory: %+v", resp.Results)
		}
		for _, tool := range []string{"memory_get", "memory_delete", "memory_favorite"} {
			if res := call(t, b, tool, map[string]any{"id": added.ID}); !res.IsError {
				t.Errorf("key b: %s on key a's id succeeded", tool)
			}
		}
		if res := call(t, b, "memory_update", map[string]any{"id": added.ID, "text": "x"}); !res.IsError {
			t.Errorf("key b updated key a's memory")
		}
		ok(t, a, "memory_search", map[string]any{"query": "BLUEBIRD"}, &resp)
		if len(resp.Results) == 0 || resp.Results[0].ID != added.ID {
			t.Errorf("key a lost its own memory: %+v", resp.Results)
		}
	})

	t.Run("refused", func(t *testing.T) {
		for _, tc := range []struct {
			name, auth string
			status     int
			code       string
		}{
			{"no key", "", http.StatusUnauthorized, "unauthorized"},
			{"unknown key", "Bearer nope", http.StatusForbidden, "forbidden"},
		} {
			t.Run(tc.name, func(t *testing.T) {
				body := `{"jsonrpc":"2.0","id":1,"method":"tools/list"}`
				req, _ := http.NewRequest(http.MethodPost, srv.URL+"/mcp", strings.NewReader(body))
				req.Header.Set("Content-Type", "application/json")
				req.Header.Set("Accept", "application/json, text/event-stream")
				if tc.auth != "" {
					req.Header.Set("Authorization", tc.auth)
				}
				res, err := http.DefaultClient.Do(req)
				if err != nil {
					t.Fatal(err)
				}
				defer res.Body.Close()
				var e struct {
					Error struct{ Code, Message string } `json:"error"`
				}
				if err := json.NewDecoder(res.Body).Decode(&e); err != nil {
					t.Fatalf("error body: %v", err)
				}
				if res.StatusCode != tc.status || e.Error.Code != tc.code || e.Error.Message == "" {
					t.Errorf("got %d %+v, want %d %s", res.StatusCode, e.Error, tc.status, tc.code)
				}
			})
		}
	})
}

// TestHTTPFixed serves one backend without keys.
func TestHTTPFixed(t *testing.T) {
	srv := httptest.NewServer(HTTPHandler(Fixed(openDB(t)), HTTPOptions{}))
	t.Cleanup(srv.Close)
	exercise(t, connectHTTP(t, srv.URL, "ignored"))
}

// TestHTTPBadJSON: a body that is not JSON gets a JSON-RPC parse error (code
// -32700, id null) as JSON, not the SDK's plain text; valid requests still
// reach the SDK.
func TestHTTPBadJSON(t *testing.T) {
	db := openDB(t)
	ts := httptest.NewServer(HTTPHandler(Fixed(db), HTTPOptions{}))
	defer ts.Close()
	for _, body := range []string{"{not json", "", "\xff"} {
		req, _ := http.NewRequest("POST", ts.URL, strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		resp, err := ts.Client().Do(req)
		if err != nil {
			t.Fatal(err)
		}
		var got struct {
			JSONRPC string `json:"jsonrpc"`
			ID      any    `json:"id"`
			Error   struct {
				Code int `json:"code"`
			} `json:"error"`
		}
		err = json.NewDecoder(resp.Body).Decode(&got)
		resp.Body.Close()
		if err != nil || resp.StatusCode != http.StatusBadRequest || got.JSONRPC != "2.0" || got.ID != nil || got.Error.Code != -32700 {
			t.Fatalf("body %q: %d %+v (%v)", body, resp.StatusCode, got, err)
		}
	}
	cs := connectHTTP(t, ts.URL, "")
	defer cs.Close()
	if _, err := cs.ListTools(context.Background(), nil); err != nil {
		t.Fatalf("a valid session after bad bodies: %v", err)
	}
}
