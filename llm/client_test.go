package llm

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

const testKey = "sk-test-SECRET-4242"

// chatServer is a fake OpenAI-compatible endpoint: each request goes to
// answer, with the number of the attempt (from 1); the last request body is kept.
type chatServer struct {
	*httptest.Server
	calls atomic.Int32
	last  atomic.Pointer[chatRequest]
	auth  atomic.Pointer[string]
}

func newChatServer(tb testing.TB, answer func(w http.ResponseWriter, r *http.Request, call int)) *chatServer {
	tb.Helper()
	s := &chatServer{}
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n := int(s.calls.Add(1))
		if r.URL.Path != "/v1/chat/completions" || r.Method != http.MethodPost {
			http.Error(w, "wrong endpoint "+r.Method+" "+r.URL.Path, http.StatusNotFound)
			return
		}
		var req chatRequest
		body, _ := io.ReadAll(r.Body)
		if err := json.Unmarshal(body, &req); err != nil {
			http.Error(w, "bad request body", http.StatusBadRequest)
			return
		}
		s.last.Store(&req)
		auth := r.Header.Get("Authorization")
		s.auth.Store(&auth)
		answer(w, r, n)
	}))
	tb.Cleanup(s.Close)
	return s
}

// completion writes a chat completion whose first choice says content.
func completion(w http.ResponseWriter, content string) {
	w.Header().Set("Content-Type", "application/json")
	fmt.Fprintf(w, `{"id":"x","object":"chat.completion","choices":[{"index":0,"message":{"role":"assistant","content":%q},"finish_reason":"stop"}]}`, content)
}

// testClient returns a client for s with millisecond backoff.
func testClient(tb testing.TB, s *chatServer, edit func(*Config)) *Client {
	tb.Helper()
	cfg := Config{BaseURL: s.URL + "/v1/", Model: "test-model", APIKey: testKey, Timeout: 2 * time.Second}
	if edit != nil {
		edit(&cfg)
	}
	c, err := New(cfg)
	if err != nil {
		tb.Fatalf("New: %v", err)
	}
	c.p.BaseDelay, c.p.MaxDelay = time.Millisecond, 5*time.Millisecond
	return c
}

func TestNew(t *testing.T) {
	tests := []struct {
		name    string
		cfg     Config
		wantErr string
	}{
		{"ok", Config{BaseURL: "http://127.0.0.1:1/v1", Model: "m"}, ""},
		{"trailing slash", Config{BaseURL: "https://h/v1/", Model: "m", Temperature: 2}, ""},
		{"no url", Config{Model: "m"}, "no base URL"},
		{"bad scheme", Config{BaseURL: "ftp://h", Model: "m"}, "scheme"},
		{"no host", Config{BaseURL: "http://", Model: "m"}, "no host"},
		{"no model", Config{BaseURL: "http://h"}, "no model"},
		{"hot", Config{BaseURL: "http://h", Model: "m", Temperature: 2.5}, "temperature"},
		{"negative tokens", Config{BaseURL: "http://h", Model: "m", MaxTokens: -1}, "max tokens"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, err := New(tt.cfg)
			if tt.wantErr == "" {
				if err != nil {
					t.Fatalf("New: %v", err)
				}
				if c.Model() != "m" {
					t.Errorf("Model() = %q", c.Model())
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Fatalf("New err = %v, want it to mention %q", err, tt.wantErr)
			}
		})
	}
}

func TestCompleteRequest(t *testing.T) {
	s := newChatServer(t, func(w http.ResponseWriter, r *http.Request, _ int) { completion(w, "hi") })
	c := testClient(t, s, func(cfg *Config) { cfg.Temperature, cfg.MaxTokens = 0.3, 64 })
	got, err := c.Complete(context.Background(), "be brief", "hello")
	if err != nil || got != "hi" {
		t.Fatalf("Complete = %q, %v", got, err)
	}
	req := s.last.Load()
	want := []chatMessage{{"system", "be brief"}, {"user", "hello"}}
	if req.Model != "test-model" || req.Temperature != 0.3 || req.MaxTokens != 64 || req.Stream ||
		fmt.Sprint(req.Messages) != fmt.Sprint(want) {
		t.Errorf("request = %+v", *req)
	}
	if a := *s.auth.Load(); a != "Bearer "+testKey {
		t.Errorf("Authorization = %q", a)
	}
	if _, err := c.Complete(context.Background(), "", "only user"); err != nil {
		t.Fatal(err)
	}
	if msgs := s.last.Load().Messages; len(msgs) != 1 || msgs[0].Role != "user" {
		t.Errorf("empty system prompt sent: %+v", msgs)
	}
}

func TestCompleteAnswers(t *testing.T) {
	tests := []struct {
		name    string
		body    string
		want    string
		wantErr string
	}{
		{"text", `{"choices":[{"message":{"content":"  fine  "}}]}`, "  fine  ", ""},
		{"parts", `{"choices":[{"message":{"content":[{"type":"text","text":"a"},{"type":"image_url"},{"type":"text","text":"b"}]}}]}`, "ab", ""},
		{"null content", `{"choices":[{"message":{"content":null},"finish_reason":"length"}]}`, "", ""},
		{"no choices", `{"choices":[]}`, "", "no choices"},
		{"error object", `{"error":{"message":"model not loaded"}}`, "", "model not loaded"},
		{"malformed", `{"choices":[{"message":`, "", "not a chat completion"},
		{"garbage", `<html>proxy error</html>`, "", "not a chat completion"},
		{"empty body", ``, "", "empty body"},
		{"odd content", `{"choices":[{"message":{"content":42}}]}`, "", "neither text"},
		{"echoed key", `{"error":"bad key ` + testKey + `"}`, "", "[redacted]"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := newChatServer(t, func(w http.ResponseWriter, r *http.Request, _ int) { io.WriteString(w, tt.body) })
			got, err := testClient(t, s, nil).Complete(context.Background(), "", "q")
			if tt.wantErr == "" {
				if err != nil || got != tt.want {
					t.Fatalf("Complete = %q, %v; want %q", got, err, tt.want)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Fatalf("err = %v, want it to mention %q", err, tt.wantErr)
			}
			if strings.Contains(err.Error(), testKey) {
				t.Fatalf("API key leaked: %v", err)
			}
			if n := s.calls.Load(); n != 1 {
				t.Errorf("bad answer retried: %d calls", n)
			}
		})
	}
}

func TestCompleteRetries(t *testing.T) {
	fail := func(code int, header string) func(http.ResponseWriter, *http.Request, int) {
		return func(w http.ResponseWriter, r *http.Request, _ int) {
			if header != "" {
				w.Header().Set("Retry-After", header)
			}
			// Some servers echo the credentials they rejected.
			http.Error(w, `{"error":{"message":"rejected `+r.Header.Get("Authorization")+`"}}`, code)
		}
	}
	failThen := func(failures int, failure func(http.ResponseWriter, *http.Request, int)) func(http.ResponseWriter, *http.Request, int) {
		return func(w http.ResponseWriter, r *http.Request, call int) {
			if call <= failures {
				failure(w, r, call)
				return
			}
			completion(w, "ok")
		}
	}
	hangUp := func(w http.ResponseWriter, _ *http.Request, _ int) {
		conn, _, err := http.NewResponseController(w).Hijack()
		if err == nil {
			conn.Close()
		}
	}
	tests := []struct {
		name      string
		retries   int
		answer    func(http.ResponseWriter, *http.Request, int)
		wantCalls int32
		wantCode  int    // 0: success expected
		wantErr   string // when wantCode is 0 and an error is expected
	}{
		{"500 then success", 0, failThen(1, fail(500, "")), 2, 0, ""},
		{"429 with Retry-After", 0, failThen(2, fail(429, "1")), 3, 0, ""},
		{"hang-ups then success", 3, failThen(2, hangUp), 3, 0, ""},
		{"503 exhausts retries", 2, fail(503, ""), 3, 503, "after 3 attempts"},
		{"no retries configured", -1, fail(502, ""), 1, 502, ""},
		{"401 not retried", 5, fail(401, ""), 1, 401, "rejected Bearer [redacted]"},
		{"400 not retried", 5, fail(400, ""), 1, 400, ""},
		{"404 not retried", 5, fail(404, ""), 1, 404, ""},
		{"501 not retried", 5, fail(501, ""), 1, 501, ""},
		{"hang-ups exhaust retries", 1, hangUp, 2, 0, "after 2 attempts"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := newChatServer(t, tt.answer)
			c := testClient(t, s, func(cfg *Config) { cfg.MaxRetries = tt.retries })
			got, err := c.Complete(context.Background(), "", "q")
			if n := s.calls.Load(); n != tt.wantCalls {
				t.Errorf("calls = %d, want %d", n, tt.wantCalls)
			}
			if tt.wantCode == 0 && tt.wantErr == "" {
				if err != nil || got != "ok" {
					t.Fatalf("Complete = %q, %v", got, err)
				}
				return
			}
			if err == nil {
				t.Fatal("no error")
			}
			if strings.Contains(err.Error(), testKey) {
				t.Fatalf("API key leaked: %v", err)
			}
			var se *StatusError
			if tt.wantCode != 0 && (!errors.As(err, &se) || se.Code != tt.wantCode) {
				t.Errorf("err = %v, want status %d", err, tt.wantCode)
			}
			if !strings.Contains(err.Error(), tt.wantErr) {
				t.Errorf("err = %v, want it to mention %q", err, tt.wantErr)
			}
		})
	}
}

// slowServer answers only when the client gives up or after a long time.
func slowServer(tb testing.TB) *chatServer {
	return newChatServer(tb, func(w http.ResponseWriter, r *http.Request, _ int) {
		select {
		case <-r.Context().Done():
		case <-time.After(5 * time.Second):
			completion(w, "late")
		}
	})
}

func TestCompleteTimeout(t *testing.T) {
	s := slowServer(t)
	c := testClient(t, s, func(cfg *Config) { cfg.Timeout, cfg.MaxRetries = 50*time.Millisecond, 1 })
	start := time.Now()
	_, err := c.Complete(context.Background(), "", "q")
	if !errors.Is(err, context.DeadlineExceeded) || !strings.Contains(err.Error(), "no answer within 50ms") {
		t.Fatalf("err = %v, want a 50ms timeout", err)
	}
	if n := s.calls.Load(); n != 2 {
		t.Errorf("calls = %d, want 2 (a timeout is retried once)", n)
	}
	if d := time.Since(start); d > 2*time.Second {
		t.Errorf("took %v", d)
	}
}

func TestCompleteCancel(t *testing.T) {
	t.Run("during request", func(t *testing.T) {
		s := slowServer(t)
		c := testClient(t, s, nil)
		ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
		defer cancel()
		_, err := c.Complete(ctx, "", "q")
		if !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("err = %v", err)
		}
		if n := s.calls.Load(); n != 1 {
			t.Errorf("calls = %d, want 1: the caller's deadline is not retried", n)
		}
	})
	t.Run("during backoff", func(t *testing.T) {
		s := newChatServer(t, func(w http.ResponseWriter, _ *http.Request, _ int) { http.Error(w, "busy", 503) })
		c := testClient(t, s, nil)
		c.p.BaseDelay, c.p.MaxDelay = 10*time.Second, 10*time.Second
		ctx, cancel := context.WithCancel(context.Background())
		time.AfterFunc(50*time.Millisecond, cancel)
		start := time.Now()
		_, err := c.Complete(ctx, "", "q")
		if !errors.Is(err, context.Canceled) || !strings.Contains(err.Error(), "503") {
			t.Fatalf("err = %v, want cancellation naming the 503", err)
		}
		if d := time.Since(start); d > 2*time.Second {
			t.Errorf("backoff ignored cancellation: took %v", d)
		}
	})
}

func TestConfigHidesKey(t *testing.T) {
	cfg := Config{BaseURL: "http://h/v1", Model: "m", APIKey: testKey}
	var logged strings.Builder
	slog.New(slog.NewTextHandler(&logged, nil)).Info("llm", "cfg", cfg)
	for _, s := range []string{cfg.String(), fmt.Sprintf("%v %+v", cfg, cfg), logged.String()} {
		if strings.Contains(s, testKey) {
			t.Errorf("key shown in %q", s)
		}
	}
}

func FuzzParseChat(f *testing.F) {
	for _, s := range []string{
		`{"choices":[{"message":{"content":"x"}}]}`,
		`{"choices":[{"message":{"content":[{"type":"text","text":"a"}]}}]}`,
		`{"error":{"message":"no"}}`, `[]`, `null`, `{"choices":null}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		if _, err := parseChat(data); err != nil && err.Error() == "" {
			t.Fatal("error without text")
		}
	})
}

func BenchmarkParseChat(b *testing.B) {
	for _, size := range []int{100, 10_000, 100_000} {
		body, _ := json.Marshal(map[string]any{"choices": []any{map[string]any{
			"message": map[string]any{"role": "assistant", "content": strings.Repeat("word ", size/5)},
		}}})
		b.Run(fmt.Sprintf("chars=%d", size), func(b *testing.B) {
			b.ReportAllocs()
			b.SetBytes(int64(len(body)))
			for b.Loop() {
				if _, err := parseChat(body); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
