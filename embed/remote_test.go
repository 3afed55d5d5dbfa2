package embed

import (
	"net/http"
	"strings"
	"testing"
	"time"
	"unicode/utf8"
)

func TestParseRetryAfter(t *testing.T) {
	now := time.Date(2025, 6, 1, 12, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		name   string
		in     string
		want   time.Duration
		wantOK bool
	}{
		{"empty", "", 0, false},
		{"seconds", "2", 2 * time.Second, true},
		{"spaces", " 1 ", time.Second, true},
		{"zero", "0", 0, true},
		{"huge capped", "99999999999999999999", MaxRetryAfter, true},
		{"over cap", "3600", MaxRetryAfter, true},
		{"negative", "-1", 0, false},
		{"fraction", "1.5", 0, false},
		{"http date", now.Add(3 * time.Second).Format(http.TimeFormat), 3 * time.Second, true},
		{"past date", now.Add(-time.Hour).Format(http.TimeFormat), 0, true},
		{"garbage", "soon", 0, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, ok := parseRetryAfter(tc.in, now)
			if got != tc.want || ok != tc.wantOK {
				t.Fatalf("parseRetryAfter(%q) = %s, %v; want %s, %v", tc.in, got, ok, tc.want, tc.wantOK)
			}
		})
	}
}

func TestRetryDelay(t *testing.T) {
	p := retryPolicy{base: 100 * time.Millisecond, max: time.Second, maxRetryAfter: 2 * time.Second}
	for _, tc := range []struct {
		name     string
		attempt  int
		after    time.Duration
		min, max time.Duration
	}{
		{"first", 1, -1, 50 * time.Millisecond, 100 * time.Millisecond},
		{"second doubles", 2, -1, 100 * time.Millisecond, 200 * time.Millisecond},
		{"third", 3, -1, 200 * time.Millisecond, 400 * time.Millisecond},
		{"capped", 10, -1, 500 * time.Millisecond, time.Second},
		{"no overflow", 200, -1, 500 * time.Millisecond, time.Second},
		{"retry-after wins", 1, 1500 * time.Millisecond, 1500 * time.Millisecond, 1500 * time.Millisecond},
		{"retry-after capped", 1, time.Hour, 2 * time.Second, 2 * time.Second},
		{"retry-after zero", 3, 0, 0, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			seen := map[time.Duration]bool{}
			for range 200 {
				d := p.delay(tc.attempt, tc.after)
				if d < tc.min || d > tc.max {
					t.Fatalf("delay %s outside [%s, %s]", d, tc.min, tc.max)
				}
				seen[d] = true
			}
			if tc.after < 0 && len(seen) < 10 {
				t.Fatalf("only %d distinct delays: no jitter", len(seen))
			}
		})
	}
}

func TestServerMessage(t *testing.T) {
	for _, tc := range []struct {
		name, body, want string
	}{
		{"openai object", `{"error":{"message":"Invalid API key","type":"invalid_request_error","code":"invalid_api_key"}}`, "Invalid API key"},
		{"ollama string", `{"error":"model not found"}`, "model not found"},
		{"bare message", `{"message":"overloaded"}`, "overloaded"},
		{"tei style", `{"error":"Input validation error","error_type":"Validation"}`, "Input validation error"},
		{"object without message", `{"error":{"code":5}}`, `{"error":{"code":5}}`},
		{"html", `<html><body>502 Bad Gateway</body></html>`, `<html><body>502 Bad Gateway</body></html>`},
		{"empty", ``, ``},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := serverMessage([]byte(tc.body)); got != tc.want {
				t.Fatalf("got %q, want %q", got, tc.want)
			}
		})
	}
}

func TestCleanMessage(t *testing.T) {
	for _, tc := range []struct {
		name, in, secret string
		check            func(string) bool
	}{
		{"collapses whitespace", "a\n\n b\t c", "", func(s string) bool { return s == "a b c" }},
		{"redacts secret", "key sk-1 is bad", "sk-1", func(s string) bool { return s == "key [redacted] is bad" }},
		{"short kept", "fine", "", func(s string) bool { return s == "fine" }},
		{"truncates on a rune boundary", strings.Repeat("日", 500), "", func(s string) bool {
			return utf8.ValidString(s) && len(s) <= maxErrorMessage+len("…") && strings.HasSuffix(s, "…")
		}},
		{"invalid utf8 repaired", "a\xffb", "", func(s string) bool { return utf8.ValidString(s) }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := cleanMessage(tc.in, tc.secret); !tc.check(got) {
				t.Fatalf("cleanMessage(%q) = %q", tc.in, got)
			}
		})
	}
}

func TestHTTPError(t *testing.T) {
	for _, tc := range []struct {
		name      string
		err       HTTPError
		want      string
		retryable bool
	}{
		{"429", HTTPError{429, "slow down"}, "HTTP 429 Too Many Requests: slow down", true},
		{"500 no message", HTTPError{500, ""}, "HTTP 500 Internal Server Error", true},
		{"400", HTTPError{400, "bad"}, "HTTP 400 Bad Request: bad", false},
		{"404", HTTPError{404, ""}, "HTTP 404 Not Found", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := tc.err.Error(); got != tc.want {
				t.Fatalf("Error() = %q, want %q", got, tc.want)
			}
			if tc.err.Retryable() != tc.retryable {
				t.Fatalf("Retryable() = %v", !tc.retryable)
			}
		})
	}
}
