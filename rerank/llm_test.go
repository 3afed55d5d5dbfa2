package rerank

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/engram-memory/engram/llm"
)

// chatFake is a local chat completions endpoint whose every answer is
// reply(call); it keeps the last user prompt.
type chatFake struct {
	*httptest.Server
	calls  atomic.Int32
	prompt atomic.Pointer[string]
}

func newChatFake(tb testing.TB, reply func(w http.ResponseWriter, call int)) *chatFake {
	tb.Helper()
	s := &chatFake{}
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		call := int(s.calls.Add(1))
		if r.URL.Path != "/v1/chat/completions" {
			http.NotFound(w, r)
			return
		}
		var req struct {
			Messages []struct{ Role, Content string } `json:"messages"`
		}
		body, _ := io.ReadAll(r.Body)
		if err := json.Unmarshal(body, &req); err != nil || len(req.Messages) == 0 {
			http.Error(w, "bad request", http.StatusBadRequest)
			return
		}
		p := req.Messages[len(req.Messages)-1].Content
		s.prompt.Store(&p)
		reply(w, call)
	}))
	tb.Cleanup(s.Close)
	return s
}

func says(content string) func(http.ResponseWriter, int) {
	return func(w http.ResponseWriter, _ int) {
		fmt.Fprintf(w, `{"choices":[{"message":{"role":"assistant","content":%q}}]}`, content)
	}
}

func testLLM(tb testing.TB, s *chatFake) *LLM {
	tb.Helper()
	c, err := llm.New(llm.Config{BaseURL: s.URL + "/v1", Model: "judge", APIKey: testKey, Timeout: 2 * time.Second, MaxRetries: 1})
	if err != nil {
		tb.Fatal(err)
	}
	return NewLLM(c)
}

// goodJSON scores testDocs in testOrder, best 9.
const goodJSON = `[{"index": 1, "score": 9}, {"index": 4, "score": 6}, {"index": 2, "score": 3}, {"index": 3, "score": 2}, {"index": 0, "score": 0}]`

func TestLLMRerank(t *testing.T) {
	tests := []struct {
		name    string
		answer  string
		topN    int
		want    []int
		wantErr string
	}{
		{"bare JSON", goodJSON, 0, testOrder, ""},
		{"fenced JSON", "```json\n" + goodJSON + "\n```", 0, testOrder, ""},
		{"prose around JSON", "Here are the scores for document [0] to [4]:\n" + goodJSON + "\nLet me know if you need more.", 3, testOrder[:3], ""},
		{"reasoning first", "<think>doc [1] matches {exactly}</think>" + goodJSON, 2, testOrder[:2], ""},
		{"object form", `{"scores": ` + goodJSON + `}`, 0, testOrder, ""},
		{"numeric strings", `[{"index":"4","score":"8.5"},{"index":1,"score":"9"}]`, 2, []int{1, 4}, ""},
		{"out of order", `[{"index":0,"score":0},{"index":3,"score":2},{"index":1,"score":9},{"index":2,"score":3},{"index":4,"score":6}]`, 0, testOrder, ""},
		{"omitted documents last", `[{"index":2,"score":8},{"index":4,"score":9}]`, 0, []int{4, 2, 0, 1, 3}, ""},
		{"garbage", "I cannot help with that.", 0, nil, "no JSON list of {index, score}"},
		{"unrelated JSON", `{"answer": 42} and [1, 2, 3]`, 0, nil, "no JSON list"},
		{"empty", "", 0, nil, "no JSON list"},
		{"index out of range", `[{"index":1,"score":9},{"index":7,"score":1}]`, 0, nil, "index 7, outside the 5 documents"},
		{"duplicate index", `[{"index":1,"score":9},{"index":1,"score":1}]`, 0, nil, "scores index 1 a second time"},
		{"NaN score", `[{"index":1,"score":"NaN"}]`, 0, nil, "non-finite score NaN"},
		{"fractional index", `[{"index":1.5,"score":3}]`, 0, nil, "index 1.5 is not a document number"},
		{"missing score", `[{"index":0,"score":3},{"index":1}]`, 0, nil, `item 1 (index 1): no "score"`},
		{"word score", `[{"index":0,"score":"high"}]`, 0, nil, `"score" is`},
		{"cut off", `[{"index":1,"score":9},{"index":4,"sc`, 0, nil, "cut off"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := newChatFake(t, says(tt.answer))
			got, err := testLLM(t, s).Rerank(context.Background(), testQuery, testDocs, tt.topN)
			if tt.wantErr != "" {
				if !errors.Is(err, ErrInvalidResponse) || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err = %v, want ErrInvalidResponse mentioning %q", err, tt.wantErr)
				}
				return
			}
			if err != nil || !slices.Equal(indexes(got), tt.want) {
				t.Fatalf("Rerank = %v, %v; want order %v", got, err, tt.want)
			}
		})
	}
}

func TestLLMPrompt(t *testing.T) {
	s := newChatFake(t, says(goodJSON))
	l := testLLM(t, s)
	if l.Name() != "llm:judge" {
		t.Errorf("Name = %q", l.Name())
	}
	docs := slices.Clone(testDocs)
	docs[2] = "signing happens\n\n in   CI"
	docs[3] = strings.Repeat("long ", maxDocBytes)
	if _, err := l.Rerank(context.Background(), testQuery, docs, 0); err != nil {
		t.Fatal(err)
	}
	p := *s.prompt.Load()
	for _, want := range []string{testQuery, "[0] " + testDocs[0], "[1] " + testDocs[1], "[2] signing happens in CI\n", "[4] " + testDocs[4], "indexes 0 to 4"} {
		if !strings.Contains(p, want) {
			t.Errorf("prompt lacks %q:\n%s", want, p)
		}
	}
	if len(p) > 3*maxDocBytes {
		t.Errorf("long document not cut: prompt is %d bytes", len(p))
	}
}

func TestLLMFailures(t *testing.T) {
	t.Run("500 then success", func(t *testing.T) {
		s := newChatFake(t, func(w http.ResponseWriter, call int) {
			if call == 1 {
				http.Error(w, "loading model", 500)
				return
			}
			says(goodJSON)(w, call)
		})
		got, err := testLLM(t, s).Rerank(context.Background(), testQuery, testDocs, 1)
		if err != nil || !slices.Equal(indexes(got), testOrder[:1]) || s.calls.Load() != 2 {
			t.Fatalf("Rerank = %v, %v after %d calls", got, err, s.calls.Load())
		}
	})
	t.Run("401 not retried", func(t *testing.T) {
		s := newChatFake(t, func(w http.ResponseWriter, _ int) { http.Error(w, "bad key", 401) })
		_, err := testLLM(t, s).Rerank(context.Background(), testQuery, testDocs, 1)
		var se *llm.StatusError
		if !errors.As(err, &se) || se.Code != 401 || s.calls.Load() != 1 {
			t.Fatalf("err = %v after %d calls", err, s.calls.Load())
		}
	})
	t.Run("cancelled", func(t *testing.T) {
		s := newChatFake(t, func(w http.ResponseWriter, _ int) { time.Sleep(100 * time.Millisecond) })
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		if _, err := testLLM(t, s).Rerank(ctx, testQuery, testDocs, 1); !errors.Is(err, context.Canceled) {
			t.Fatalf("err = %v", err)
		}
	})
	t.Run("no client", func(t *testing.T) {
		l := NewLLM(nil)
		if _, err := l.Rerank(context.Background(), testQuery, testDocs, 1); err == nil || l.Name() != "llm:" {
			t.Fatalf("nil client: %v, %q", err, l.Name())
		}
	})
	t.Run("no documents", func(t *testing.T) {
		s := newChatFake(t, says(goodJSON))
		if got, err := testLLM(t, s).Rerank(context.Background(), testQuery, nil, 1); got != nil || err != nil || s.calls.Load() != 0 {
			t.Fatalf("Rerank(no docs) = %v, %v", got, err)
		}
	})
}

func FuzzParseJudgement(f *testing.F) {
	for _, s := range []string{
		goodJSON, "```json\n" + goodJSON + "\n```", "text [0] then " + goodJSON, `{"results":[{"id":1,"relevance":2}]}`,
		`<think>[</think>[{"index":"3","score":"1e3"}]`, `[{"index":1e9,"score":1}]`, "[[[[{{{{", "",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, answer string) {
		scores, err := parseJudgement(answer)
		if err != nil {
			if !errors.Is(err, ErrInvalidResponse) {
				t.Fatalf("error %v does not wrap ErrInvalidResponse", err)
			}
			return
		}
		checkOrdered(t, scores, 8, 5)
	})
}

func BenchmarkParseJudgement(b *testing.B) {
	for _, n := range []int{10, 50, 200} {
		var sb strings.Builder
		sb.WriteString("Sure! Here are the scores:\n```json\n[")
		for i := range n {
			if i > 0 {
				sb.WriteString(",\n ")
			}
			fmt.Fprintf(&sb, `{"index": %d, "score": %d}`, i, (i*7)%11)
		}
		sb.WriteString("]\n```\nDocument [3] was closest.")
		answer := sb.String()
		b.Run(fmt.Sprintf("n=%d", n), func(b *testing.B) {
			b.ReportAllocs()
			b.SetBytes(int64(len(answer)))
			for b.Loop() {
				if _, err := parseJudgement(answer); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
