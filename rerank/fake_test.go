package rerank

import (
	"cmp"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

const testKey = "rk-test-SECRET-9001"

// fakeServer is a local rerank endpoint at /v1/rerank. Each request's JSON
// body goes to answer with the call's number (from 1).
type fakeServer struct {
	*httptest.Server
	calls atomic.Int32
	last  atomic.Pointer[map[string]json.RawMessage]
	auth  atomic.Pointer[string]
}

type answerFunc func(w http.ResponseWriter, r *http.Request, req map[string]json.RawMessage, call int)

func newFake(tb testing.TB, answer answerFunc) *fakeServer {
	tb.Helper()
	s := &fakeServer{}
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n := int(s.calls.Add(1))
		if r.Method != http.MethodPost || r.URL.Path != "/v1/rerank" {
			http.Error(w, "no route "+r.Method+" "+r.URL.Path, http.StatusNotFound)
			return
		}
		body, _ := io.ReadAll(r.Body)
		var req map[string]json.RawMessage
		if err := json.Unmarshal(body, &req); err != nil {
			http.Error(w, "request is not JSON", http.StatusBadRequest)
			return
		}
		s.last.Store(&req)
		auth := r.Header.Get("Authorization")
		s.auth.Store(&auth)
		answer(w, r, req, n)
	}))
	tb.Cleanup(s.Close)
	return s
}

// testHTTP returns an HTTP reranker for s with millisecond backoff.
func testHTTP(tb testing.TB, s *fakeServer, edit func(*HTTPConfig)) *HTTP {
	tb.Helper()
	cfg := HTTPConfig{BaseURL: s.URL + "/v1", Model: "test-reranker", APIKey: testKey, Timeout: 2 * time.Second}
	if edit != nil {
		edit(&cfg)
	}
	h, err := NewHTTP(cfg)
	if err != nil {
		tb.Fatalf("NewHTTP: %v", err)
	}
	h.p.BaseDelay, h.p.MaxDelay = time.Millisecond, 5*time.Millisecond
	return h
}

// overlap is the fake cross-encoder: the share of query words in doc.
func overlap(query, doc string) float64 {
	words := strings.Fields(strings.ToLower(query))
	if len(words) == 0 {
		return 0
	}
	have := strings.Fields(strings.ToLower(doc))
	hits := 0
	for _, w := range words {
		if slices.Contains(have, w) {
			hits++
		}
	}
	return float64(hits) / float64(len(words))
}

type scored struct {
	Index int     `json:"index"`
	Score float64 `json:"-"`
}

// rank scores docs with overlap, best first, ties by index.
func rank(query string, docs []string) []scored {
	out := make([]scored, len(docs))
	for i, d := range docs {
		out[i] = scored{i, overlap(query, d)}
	}
	slices.SortStableFunc(out, func(a, b scored) int { return cmp.Compare(b.Score, a.Score) })
	return out
}

func reqField[T any](tb testing.TB, req map[string]json.RawMessage, key string) (v T, ok bool) {
	raw, ok := req[key]
	if !ok {
		return v, false
	}
	if err := json.Unmarshal(raw, &v); err != nil {
		tb.Errorf("request field %q: %v", key, err)
	}
	return v, true
}

// cohere answers like Cohere, Jina, vLLM and Infinity: {"results": [...]},
// best first, cut to top_n; reversed puts the results worst first.
func cohere(tb testing.TB, reversed bool) answerFunc {
	return func(w http.ResponseWriter, _ *http.Request, req map[string]json.RawMessage, _ int) {
		query, _ := reqField[string](tb, req, "query")
		docs, ok := reqField[[]string](tb, req, "documents")
		if !ok {
			http.Error(w, `{"message":"documents required"}`, http.StatusBadRequest)
			return
		}
		ranked := rank(query, docs)
		if n, ok := reqField[int](tb, req, "top_n"); ok && n > 0 && n < len(ranked) {
			ranked = ranked[:n]
		}
		if reversed {
			slices.Reverse(ranked)
		}
		var b strings.Builder
		b.WriteString(`{"id":"r1","results":[`)
		for i, r := range ranked {
			if i > 0 {
				b.WriteByte(',')
			}
			fmt.Fprintf(&b, `{"index":%d,"relevance_score":%g,"document":{"text":%q}}`, r.Index, r.Score, docs[r.Index])
		}
		b.WriteString(`],"meta":{"billed_units":{"search_units":1}}}`)
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, b.String())
	}
}

// tei answers like Hugging Face text-embeddings-inference: it needs
// "texts", ignores any top_n and answers a bare array of {index, score}.
// With documents set it reads "documents" instead (the bare-array form of
// other servers).
func tei(tb testing.TB, documents bool) answerFunc {
	return func(w http.ResponseWriter, _ *http.Request, req map[string]json.RawMessage, _ int) {
		query, _ := reqField[string](tb, req, "query")
		key := "texts"
		if documents {
			key = "documents"
		}
		docs, ok := reqField[[]string](tb, req, key)
		if !ok {
			w.Header().Set("Content-Type", "text/plain")
			w.WriteHeader(http.StatusUnprocessableEntity)
			io.WriteString(w, "Failed to deserialize the JSON body into the target type: missing field `texts` at line 1 column 90")
			return
		}
		var b strings.Builder
		b.WriteByte('[')
		for i, r := range rank(query, docs) {
			if i > 0 {
				b.WriteByte(',')
			}
			fmt.Fprintf(&b, `{"index":%d,"score":%g}`, r.Index, r.Score)
		}
		b.WriteByte(']')
		io.WriteString(w, b.String())
	}
}

// fixed always answers code and body.
func fixed(code int, body string) answerFunc {
	return func(w http.ResponseWriter, _ *http.Request, _ map[string]json.RawMessage, _ int) {
		w.WriteHeader(code)
		io.WriteString(w, body)
	}
}

// failThen answers with fail for the first n calls, then with ok.
func failThen(n int, fail, ok answerFunc) answerFunc {
	return func(w http.ResponseWriter, r *http.Request, req map[string]json.RawMessage, call int) {
		if call <= n {
			fail(w, r, req, call)
			return
		}
		ok(w, r, req, call)
	}
}

// slow answers only after the client has gone or five seconds.
func slow(w http.ResponseWriter, r *http.Request, _ map[string]json.RawMessage, _ int) {
	select {
	case <-r.Context().Done():
	case <-time.After(5 * time.Second):
		io.WriteString(w, `[]`)
	}
}

var (
	testQuery = "rotate the signing key"
	testDocs  = []string{
		"deploys run on fridays",               // 0
		"rotate the signing key every quarter", // 1: 4/4
		"signing happens in CI",                // 2: 1/4
		"rotate logs daily",                    // 3: 1/4
		"the key lives in the vault",           // 4: 2/4
	}
	// testOrder is testDocs best first by overlap with testQuery.
	testOrder = []int{1, 4, 2, 3, 0}
)

func indexes(s []Score) []int {
	out := make([]int, len(s))
	for i, x := range s {
		out[i] = x.Index
	}
	return out
}
