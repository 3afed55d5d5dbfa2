package httpjson

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

const testKey = "sk-test-SECRET-7"

// answer writes one response; call counts from 1.
type answer func(w http.ResponseWriter, r *http.Request, call int)

// server is a local endpoint that counts calls and checks the request's shape.
type server struct {
	*httptest.Server
	calls atomic.Int32
}

func newServer(tb testing.TB, a answer) *server {
	tb.Helper()
	s := &server{}
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n := int(s.calls.Add(1))
		body, _ := io.ReadAll(r.Body)
		if r.Method != http.MethodPost || r.Header.Get("Content-Type") != "application/json" || string(body) != `{"q":1}` {
			http.Error(w, "bad request "+r.Method+" "+string(body), http.StatusTeapot)
			return
		}
		a(w, r, n)
	}))
	tb.Cleanup(s.Close)
	return s
}

// client is a Client for s with millisecond backoff.
func (s *server) client(retries int) *Client {
	return &Client{URL: s.URL, APIKey: testKey, Timeout: 2 * time.Second, MaxRetries: retries,
		BaseDelay: time.Millisecond, MaxDelay: 5 * time.Millisecond}
}

func ok(w http.ResponseWriter, _ *http.Request, _ int) { fmt.Fprint(w, `{"ok":true}`) }

// fail answers code, echoing the credentials as some servers do.
func fail(code int, retryAfter string) answer {
	return func(w http.ResponseWriter, r *http.Request, _ int) {
		if retryAfter != "" {
			w.Header().Set("Retry-After", retryAfter)
		}
		http.Error(w, `{"error":{"message":"rejected `+r.Header.Get("Authorization")+`"}}`, code)
	}
}

func failThen(failures int, failure answer) answer {
	return func(w http.ResponseWriter, r *http.Request, call int) {
		if call <= failures {
			failure(w, r, call)
			return
		}
		ok(w, r, call)
	}
}

func hangUp(w http.ResponseWriter, _ *http.Request, _ int) {
	if conn, _, err := http.NewResponseController(w).Hijack(); err == nil {
		conn.Close()
	}
}

func block(_ http.ResponseWriter, r *http.Request, _ int) {
	select {
	case <-r.Context().Done():
	case <-time.After(5 * time.Second):
	}
}

func TestPost(t *testing.T) {
	for _, tc := range []struct {
		name      string
		retries   int
		answer    answer
		edit      func(*Client)
		wantCalls int32
		wantCode  int    // status expected in the error; 0 for none
		wantErr   string // "" for success
	}{
		{"ok", 0, ok, nil, 1, 0, ""},
		{"500 then ok", 2, failThen(1, fail(500, "")), nil, 2, 0, ""},
		{"429 with Retry-After then ok", 2, failThen(2, fail(429, "0")), nil, 3, 0, ""},
		{"hang-ups then ok", 3, failThen(2, hangUp), nil, 3, 0, ""},
		{"503 exhausts retries", 2, fail(503, ""), nil, 3, 503, "gave up after 3 attempts"},
		{"no retries", 0, fail(502, ""), nil, 1, 502, "server answered 502"},
		{"401 not retried, key redacted", 5, fail(401, ""), nil, 1, 401, "rejected Bearer [redacted]"},
		{"404 not retried", 5, fail(404, ""), nil, 1, 404, "404 Not Found"},
		{"501 not retried", 5, fail(501, ""), nil, 1, 501, "501"},
		{"501 retried when Retryable says so", 1, fail(501, ""), func(c *Client) {
			c.Retryable = func(code int) bool { return code >= 500 }
		}, 2, 501, "gave up after 2 attempts"},
		{"hang-ups exhaust retries", 1, hangUp, nil, 2, 0, "gave up after 2 attempts"},
		{"attempt timeouts retried", 1, block, func(c *Client) { c.Timeout = 50 * time.Millisecond }, 2, 0, "no answer within 50ms"},
		{"oversized answer not retried", 3, func(w http.ResponseWriter, _ *http.Request, _ int) {
			fmt.Fprint(w, strings.Repeat(" ", 65))
		}, func(c *Client) { c.MaxResponseBytes = 64 }, 1, 0, "larger than 64 bytes"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := newServer(t, tc.answer)
			c := s.client(tc.retries)
			if tc.edit != nil {
				tc.edit(c)
			}
			got, err := c.Post(context.Background(), []byte(`{"q":1}`))
			if n := s.calls.Load(); n != tc.wantCalls {
				t.Errorf("calls = %d, want %d", n, tc.wantCalls)
			}
			if tc.wantErr == "" {
				if err != nil || string(got) != `{"ok":true}` {
					t.Fatalf("Post = %q, %v", got, err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) || strings.Contains(err.Error(), testKey) {
				t.Fatalf("err = %v, want it to mention %q and not the key", err, tc.wantErr)
			}
			var se *StatusError
			if tc.wantCode != 0 && (!errors.As(err, &se) || se.Code != tc.wantCode) {
				t.Errorf("err = %v, want status %d", err, tc.wantCode)
			}
			if strings.Contains(tc.wantErr, "no answer") && !errors.Is(err, context.DeadlineExceeded) {
				t.Errorf("err = %v, want it to match context.DeadlineExceeded", err)
			}
		})
	}
}

func TestPostRetryAfter(t *testing.T) {
	// A huge backoff shows the header, not the backoff, set the wait.
	for _, tc := range []struct {
		name     string
		header   string
		cap      time.Duration
		min, max time.Duration
	}{
		{"seconds honoured", "1", 0, 950 * time.Millisecond, 3 * time.Second},
		{"zero retries at once", "0", 0, 0, time.Second},
		{"capped", "3600", 20 * time.Millisecond, 15 * time.Millisecond, time.Second},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := newServer(t, failThen(1, fail(429, tc.header)))
			c := s.client(1)
			c.BaseDelay, c.MaxDelay, c.MaxRetryAfter = time.Hour, time.Hour, cmpOr(tc.cap, 5*time.Second)
			start := time.Now()
			if _, err := c.Post(context.Background(), []byte(`{"q":1}`)); err != nil {
				t.Fatal(err)
			}
			if took := time.Since(start); took < tc.min || took > tc.max {
				t.Fatalf("took %s, want within [%s, %s]", took, tc.min, tc.max)
			}
		})
	}
	t.Run("reported", func(t *testing.T) {
		s := newServer(t, fail(429, "7"))
		_, err := s.client(0).Post(context.Background(), []byte(`{"q":1}`))
		var se *StatusError
		if !errors.As(err, &se) || se.RetryAfter != 7*time.Second {
			t.Fatalf("err = %v, want RetryAfter 7s", err)
		}
	})
}

func cmpOr(v, def time.Duration) time.Duration {
	if v == 0 {
		return def
	}
	return v
}

// myError stands for a package's own status error type.
type myError struct{ code int }

func (e *myError) Error() string { return fmt.Sprintf("my %d", e.code) }

func TestPostWrapStatus(t *testing.T) {
	s := newServer(t, fail(503, ""))
	c := s.client(1)
	c.WrapStatus = func(se *StatusError) error { return &myError{se.Code} }
	_, err := c.Post(context.Background(), []byte(`{"q":1}`))
	var me *myError
	if !errors.As(err, &me) || me.code != 503 || err.Error() != "gave up after 2 attempts: my 503" {
		t.Fatalf("err = %v, want the wrapped status", err)
	}
}

func TestPostCancel(t *testing.T) {
	errStop := errors.New("shutting down")
	for _, tc := range []struct {
		name      string
		answer    answer
		backoff   time.Duration
		cancelAt  time.Duration // < 0: before the call
		withCause bool
		wantCalls int32
		wantErr   string
	}{
		{"during request", block, 0, 50 * time.Millisecond, false, 1, ""},
		{"during request, with cause", block, 0, 50 * time.Millisecond, true, 1, ""},
		{"during backoff", fail(503, ""), time.Hour, 50 * time.Millisecond, false, 1, "503"},
		{"during backoff, with cause", fail(503, ""), time.Hour, 50 * time.Millisecond, true, 1, "503"},
		{"during Retry-After", fail(429, "5"), 0, 50 * time.Millisecond, false, 1, "429"},
		{"before the call", ok, 0, -1, false, 0, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := newServer(t, tc.answer)
			c := s.client(3)
			if tc.backoff > 0 {
				c.BaseDelay, c.MaxDelay = tc.backoff, tc.backoff
			}
			c.MaxRetryAfter = 10 * time.Second
			ctx, cancel := context.WithCancelCause(context.Background())
			defer cancel(nil)
			var cause error
			if tc.withCause {
				cause = errStop
			}
			if tc.cancelAt < 0 {
				cancel(cause)
			} else {
				time.AfterFunc(tc.cancelAt, func() { cancel(cause) })
			}
			start := time.Now()
			_, err := c.Post(ctx, []byte(`{"q":1}`))
			if d := time.Since(start); d > 2*time.Second {
				t.Fatalf("took %v after cancel", d)
			}
			if !errors.Is(err, context.Canceled) || (tc.withCause && !errors.Is(err, errStop)) {
				t.Fatalf("err = %v, want cancellation (cause %v)", err, cause)
			}
			if !strings.Contains(err.Error(), tc.wantErr) || strings.Contains(err.Error(), testKey) {
				t.Fatalf("err = %v, want it to mention %q and not the key", err, tc.wantErr)
			}
			var se *StatusError
			if errors.As(err, &se) {
				t.Errorf("err = %v: a cancelled call still reads as a status error", err)
			}
			if n := s.calls.Load(); n != tc.wantCalls {
				t.Errorf("calls = %d, want %d", n, tc.wantCalls)
			}
		})
	}
}
