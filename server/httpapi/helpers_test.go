package httpapi

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"

	"github.com/engram-memory/engram"
)

// Test keys: two tenants in different teams.
const (
	keyA = "key-a-0123456789abcdef"
	keyB = "key-b-0123456789abcdef"
)

var testKeys = []Key{
	{Key: keyA, Scope: map[string]string{"team": "a"}},
	{Key: keyB, Scope: map[string]string{"team": "b"}},
}

// openDB opens a real store in a temporary directory; builtin selects the
// built-in embedder, else keyword-only.
func openDB(tb testing.TB, builtin bool) *engram.DB {
	tb.Helper()
	db, err := engram.Open(context.Background(), filepath.Join(tb.TempDir(), "engram.db"), engram.Options{NoEmbedder: !builtin})
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { db.Close() })
	return db
}

// startServer serves db on 127.0.0.1 (random port) until the test ends.
func startServer(tb testing.TB, db *engram.DB, cfg Config) (*Server, *httptest.Server) {
	tb.Helper()
	s, err := New(db, cfg)
	if err != nil {
		tb.Fatal(err)
	}
	return startServerWith(tb, s)
}

// startServerWith serves s on 127.0.0.1 (random port) until the test ends.
func startServerWith(tb testing.TB, s *Server) (*Server, *httptest.Server) {
	tb.Helper()
	ts := httptest.NewServer(s)
	tb.Cleanup(ts.Close)
	return s, ts
}

// reply is a response read whole.
type reply struct {
	status int
	header http.Header
	body   []byte
}

// errCode is the error code of an error reply, or "".
func (r reply) errCode() string {
	var e ErrorBody
	if json.Unmarshal(r.body, &e) != nil || e.Error == nil {
		return ""
	}
	return e.Error.Code
}

// call sends one request; body may be a string, []byte or a value to encode.
func call(tb testing.TB, c *http.Client, base, method, path, key string, body any) reply {
	tb.Helper()
	r, err := send(c, base, method, path, key, body)
	if err != nil {
		tb.Fatal(err)
	}
	return r
}

// send is call for goroutines other than the test's: it returns the error.
func send(c *http.Client, base, method, path, key string, body any) (reply, error) {
	var rd io.Reader
	switch b := body.(type) {
	case nil:
	case string:
		rd = strings.NewReader(b)
	case []byte:
		rd = bytes.NewReader(b)
	default:
		data, err := json.Marshal(b)
		if err != nil {
			return reply{}, err
		}
		rd = bytes.NewReader(data)
	}
	req, err := http.NewRequest(method, base+path, rd)
	if err != nil {
		return reply{}, err
	}
	if rd != nil {
		ctype := "application/json"
		if strings.HasPrefix(path, "/v1/import") {
			ctype = "application/x-ndjson"
		}
		req.Header.Set("Content-Type", ctype)
	}
	if key != "" {
		req.Header.Set("Authorization", "Bearer "+key)
	}
	resp, err := c.Do(req)
	if err != nil {
		return reply{}, fmt.Errorf("%s %s: %w", method, path, err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		return reply{}, fmt.Errorf("%s %s: reading the body: %w", method, path, err)
	}
	return reply{status: resp.StatusCode, header: resp.Header, body: data}, nil
}

// mustJSON decodes a reply's body, failing the test on a status other than want.
func mustJSON(tb testing.TB, r reply, want int, v any) {
	tb.Helper()
	if r.status != want {
		tb.Fatalf("status %d, want %d: %s", r.status, want, r.body)
	}
	if v != nil {
		if err := json.Unmarshal(r.body, v); err != nil {
			tb.Fatalf("decoding %s: %v", r.body, err)
		}
	}
}
