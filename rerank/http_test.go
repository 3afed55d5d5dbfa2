package rerank

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"
)

func TestNewHTTP(t *testing.T) {
	tests := []struct {
		name    string
		cfg     HTTPConfig
		wantErr string
	}{
		{"ok", HTTPConfig{BaseURL: "http://127.0.0.1:8080/", Model: "bge"}, ""},
		{"no url", HTTPConfig{Model: "bge"}, "no base URL"},
		{"bad scheme", HTTPConfig{BaseURL: "unix:///tmp/s", Model: "bge"}, "scheme"},
		{"no model", HTTPConfig{BaseURL: "http://h"}, "no model"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h, err := NewHTTP(tt.cfg)
			if tt.wantErr == "" {
				if err != nil || h.Name() != "http:bge" {
					t.Fatalf("NewHTTP = %v, %v", h, err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Fatalf("err = %v, want it to mention %q", err, tt.wantErr)
			}
		})
	}
}

func TestHTTPProtocols(t *testing.T) {
	servers := []struct {
		name   string
		answer answerFunc
	}{
		{"results", cohere(t, false)},
		{"results out of order", cohere(t, true)},
		{"TEI bare array", tei(t, false)},
		{"bare array with documents", tei(t, true)},
	}
	for _, srv := range servers {
		for _, topN := range []int{0, 1, 3, 5, 9} {
			t.Run(fmt.Sprintf("%s/top_n=%d", srv.name, topN), func(t *testing.T) {
				h := testHTTP(t, newFake(t, srv.answer), nil)
				got, err := h.Rerank(context.Background(), testQuery, testDocs, topN)
				if err != nil {
					t.Fatal(err)
				}
				want := testOrder[:limit(topN, len(testDocs))]
				if !slices.Equal(indexes(got), want) {
					t.Fatalf("order = %v, want %v", indexes(got), want)
				}
				for _, s := range got {
					if w := overlap(testQuery, testDocs[s.Index]); s.Score != w {
						t.Errorf("doc %d score = %v, want %v", s.Index, s.Score, w)
					}
				}
			})
		}
	}
}

func TestHTTPRequest(t *testing.T) {
	s := newFake(t, cohere(t, false))
	if _, err := testHTTP(t, s, nil).Rerank(context.Background(), testQuery, testDocs, 3); err != nil {
		t.Fatal(err)
	}
	req := *s.last.Load()
	model, _ := reqField[string](t, req, "model")
	query, _ := reqField[string](t, req, "query")
	docs, _ := reqField[[]string](t, req, "documents")
	topN, _ := reqField[int](t, req, "top_n")
	if model != "test-reranker" || query != testQuery || !slices.Equal(docs, testDocs) || topN != 3 {
		t.Errorf("request = model %q query %q docs %q top_n %d", model, query, docs, topN)
	}
	if a := *s.auth.Load(); a != "Bearer "+testKey {
		t.Errorf("Authorization = %q", a)
	}
}

func TestHTTPSwitchesToTEI(t *testing.T) {
	s := newFake(t, tei(t, false))
	h := testHTTP(t, s, nil)
	for round := range 2 {
		got, err := h.Rerank(context.Background(), testQuery, testDocs, 2)
		if err != nil || !slices.Equal(indexes(got), testOrder[:2]) {
			t.Fatalf("round %d: %v, %v", round, indexes(got), err)
		}
	}
	if n := s.calls.Load(); n != 3 {
		t.Errorf("calls = %d, want 3 (one refusal, then texts twice)", n)
	}
	if _, ok := (*s.last.Load())["documents"]; ok {
		t.Error("TEI request still sends documents")
	}
}

func TestHTTPOmitted(t *testing.T) {
	// The server scores docs 3 and 1 only.
	s := newFake(t, fixed(200, `{"results":[{"index":3,"relevance_score":0.9},{"index":1,"relevance_score":0.4}]}`))
	h := testHTTP(t, s, nil)
	tests := []struct {
		topN int
		want []Score
	}{
		{0, []Score{{3, 0.9}, {1, 0.4}, {0, 0.4}, {2, 0.4}, {4, 0.4}}},
		{2, []Score{{3, 0.9}, {1, 0.4}}},
		{3, []Score{{3, 0.9}, {1, 0.4}, {0, 0.4}}},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprintf("top_n=%d", tt.topN), func(t *testing.T) {
			got, err := h.Rerank(context.Background(), testQuery, testDocs, tt.topN)
			if err != nil || !slices.Equal(got, tt.want) {
				t.Fatalf("Rerank = %v, %v; want %v", got, err, tt.want)
			}
		})
	}
}

func TestHTTPInvalidAnswers(t *testing.T) {
	tests := []struct {
		name    string
		body    string
		wantErr string
	}{
		{"malformed JSON", `{"results":[{"index":0,"relevance_score":0.5}`, "malformed JSON"},
		{"index out of range", `{"results":[{"index":0,"relevance_score":0.5},{"index":5,"relevance_score":0.1}]}`, "result 1 has index 5, outside the 5 documents"},
		{"negative index", `[{"index":-1,"score":0.5}]`, "index -1"},
		{"duplicate index", `{"results":[{"index":2,"relevance_score":0.5},{"index":2,"relevance_score":0.1}]}`, "scores index 2 a second time"},
		{"NaN", `{"results":[{"index":0,"relevance_score":NaN}]}`, "non-finite score (NaN)"},
		{"Infinity", `[{"index":0,"score":-Infinity}]`, "non-finite score (Infinity)"},
		{"float index", `[{"index":1.5,"score":1}]`, "malformed JSON"},
		{"missing score", `{"results":[{"index":0}]}`, "result 0 (index 0) has no relevance_score or score"},
		{"missing index", `{"results":[{"relevance_score":0.3}]}`, "result 0 has no index"},
		{"no results", `{"id":"x"}`, `no "results" list`},
		{"error in body", `{"error":{"message":"model warming up"}}`, "model warming up"},
		{"empty results", `{"results":[]}`, "no scores for any of the 5 documents"},
		{"not JSON", `<html>502 from proxy</html>`, "not JSON"},
		{"empty body", ``, "empty body"},
		{"key echoed", `{"results":[{"index":9,"relevance_score":1}],"note":"` + testKey + `"}`, "index 9"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := newFake(t, fixed(200, tt.body))
			_, err := testHTTP(t, s, nil).Rerank(context.Background(), testQuery, testDocs, 0)
			if !errors.Is(err, ErrInvalidResponse) || !strings.Contains(err.Error(), tt.wantErr) {
				t.Fatalf("err = %v, want ErrInvalidResponse mentioning %q", err, tt.wantErr)
			}
			if strings.Contains(err.Error(), testKey) {
				t.Fatalf("API key leaked: %v", err)
			}
			if n := s.calls.Load(); n != 1 {
				t.Errorf("invalid answer retried: %d calls", n)
			}
		})
	}
}

func TestHTTPRetries(t *testing.T) {
	echoKey := func(code int) answerFunc {
		return func(w http.ResponseWriter, r *http.Request, _ map[string]json.RawMessage, _ int) {
			http.Error(w, `{"detail":"rejected `+r.Header.Get("Authorization")+`"}`, code)
		}
	}
	hangUp := func(w http.ResponseWriter, _ *http.Request, _ map[string]json.RawMessage, _ int) {
		if conn, _, err := http.NewResponseController(w).Hijack(); err == nil {
			conn.Close()
		}
	}
	tests := []struct {
		name      string
		retries   int
		answer    answerFunc
		wantCalls int32
		wantCode  int // 0: success expected
	}{
		{"500 then success", 0, failThen(1, fixed(500, "boom"), cohere(t, false)), 2, 0},
		{"429 then success", 0, failThen(2, fixed(429, "slow down"), cohere(t, false)), 3, 0},
		{"hang-up then success", 0, failThen(1, hangUp, cohere(t, false)), 2, 0},
		{"503 until retries run out", 3, fixed(503, "overloaded"), 4, 503},
		{"401 not retried", 5, echoKey(401), 1, 401},
		{"403 not retried", 5, echoKey(403), 1, 403},
		{"413 not retried", 5, fixed(413, "too many documents"), 1, 413},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := newFake(t, tt.answer)
			h := testHTTP(t, s, func(c *HTTPConfig) { c.MaxRetries = tt.retries })
			got, err := h.Rerank(context.Background(), testQuery, testDocs, 2)
			if n := s.calls.Load(); n != tt.wantCalls {
				t.Errorf("calls = %d, want %d", n, tt.wantCalls)
			}
			if tt.wantCode == 0 {
				if err != nil || !slices.Equal(indexes(got), testOrder[:2]) {
					t.Fatalf("Rerank = %v, %v", got, err)
				}
				return
			}
			var se *StatusError
			if !errors.As(err, &se) || se.Code != tt.wantCode {
				t.Fatalf("err = %v, want status %d", err, tt.wantCode)
			}
			if strings.Contains(err.Error(), testKey) {
				t.Fatalf("API key leaked: %v", err)
			}
		})
	}
}

func TestHTTPTimeoutAndCancel(t *testing.T) {
	t.Run("slow server vs timeout", func(t *testing.T) {
		s := newFake(t, slow)
		h := testHTTP(t, s, func(c *HTTPConfig) { c.Timeout, c.MaxRetries = 50*time.Millisecond, -1 })
		start := time.Now()
		_, err := h.Rerank(context.Background(), testQuery, testDocs, 0)
		if !errors.Is(err, context.DeadlineExceeded) || !strings.Contains(err.Error(), "no answer within 50ms") {
			t.Fatalf("err = %v", err)
		}
		if d := time.Since(start); d > 2*time.Second {
			t.Errorf("took %v", d)
		}
	})
	t.Run("caller cancels", func(t *testing.T) {
		s := newFake(t, slow)
		h := testHTTP(t, s, nil)
		ctx, cancel := context.WithCancel(context.Background())
		time.AfterFunc(50*time.Millisecond, cancel)
		_, err := h.Rerank(ctx, testQuery, testDocs, 0)
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("err = %v", err)
		}
		if n := s.calls.Load(); n != 1 {
			t.Errorf("calls = %d: a cancelled call was retried", n)
		}
	})
}

func TestHTTPNoDocuments(t *testing.T) {
	s := newFake(t, cohere(t, false))
	got, err := testHTTP(t, s, nil).Rerank(context.Background(), testQuery, nil, 5)
	if got != nil || err != nil || s.calls.Load() != 0 {
		t.Fatalf("Rerank(no docs) = %v, %v after %d calls", got, err, s.calls.Load())
	}
}

func TestHTTPConfigHidesKey(t *testing.T) {
	cfg := HTTPConfig{BaseURL: "http://h", Model: "m", APIKey: testKey}
	var logged strings.Builder
	slog.New(slog.NewJSONHandler(&logged, nil)).Info("rerank", "cfg", cfg)
	for _, s := range []string{fmt.Sprintf("%v %+v %s", cfg, cfg, cfg), logged.String()} {
		if strings.Contains(s, testKey) {
			t.Errorf("key shown in %q", s)
		}
	}
}

func FuzzParseResults(f *testing.F) {
	for _, s := range []string{
		`{"results":[{"index":0,"relevance_score":0.5}]}`, `[{"index":1,"score":-2.5}]`,
		`{"data":[{"index":0,"relevance_score":1}]}`, `{"error":"x"}`, `[{"index":0}]`, `nope`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		scores, err := parseResults(data)
		if err != nil {
			if !errors.Is(err, ErrInvalidResponse) {
				t.Fatalf("error %v does not wrap ErrInvalidResponse", err)
			}
			return
		}
		checkOrdered(t, scores, 6, 4)
	})
}

// checkOrdered runs order on scores for n documents and checks its output's
// invariants when it accepts them.
func checkOrdered(t *testing.T, scores []Score, n, topN int) {
	t.Helper()
	out, err := order(scores, n, topN)
	if err != nil {
		return
	}
	if len(out) != limit(topN, n) {
		t.Fatalf("len = %d, want %d", len(out), limit(topN, n))
	}
	seen := map[int]bool{}
	for i, s := range out {
		if s.Index < 0 || s.Index >= n || seen[s.Index] {
			t.Fatalf("bad index in %v", out)
		}
		seen[s.Index] = true
		if i > 0 && s.Score > out[i-1].Score {
			t.Fatalf("not best first: %v", out)
		}
	}
}

func BenchmarkParseResults(b *testing.B) {
	for _, n := range []int{10, 100, 1000} {
		var sb strings.Builder
		sb.WriteString(`{"results":[`)
		for i := range n {
			if i > 0 {
				sb.WriteByte(',')
			}
			fmt.Fprintf(&sb, `{"index":%d,"relevance_score":%g}`, n-1-i, 1/float64(i+1))
		}
		sb.WriteString(`]}`)
		body := []byte(sb.String())
		b.Run(fmt.Sprintf("n=%d", n), func(b *testing.B) {
			b.ReportAllocs()
			b.SetBytes(int64(len(body)))
			for b.Loop() {
				if _, err := parseResults(body); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

func BenchmarkHTTPRerank(b *testing.B) {
	for _, n := range []int{10, 50, 200} {
		docs := make([]string, n)
		for i := range docs {
			docs[i] = fmt.Sprintf("memory %d about rotating the signing key and other chores", i)
		}
		b.Run(fmt.Sprintf("n=%d", n), func(b *testing.B) {
			h := testHTTP(b, newFake(b, cohere(b, false)), nil)
			b.ReportAllocs()
			for b.Loop() {
				if _, err := h.Rerank(context.Background(), testQuery, docs, 10); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
