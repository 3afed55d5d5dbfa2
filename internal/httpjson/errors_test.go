package httpjson

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"unicode/utf8"
)

func TestStatusError(t *testing.T) {
	for _, tc := range []struct {
		name      string
		err       StatusError
		want      string
		temporary bool
	}{
		{"429", StatusError{Code: 429, Message: "slow down"}, "server answered 429 Too Many Requests: slow down", true},
		{"500 no message", StatusError{Code: 500}, "server answered 500 Internal Server Error", true},
		{"501", StatusError{Code: 501}, "server answered 501 Not Implemented", false},
		{"503", StatusError{Code: 503}, "server answered 503 Service Unavailable", true},
		{"400", StatusError{Code: 400, Message: "bad"}, "server answered 400 Bad Request: bad", false},
		{"404", StatusError{Code: 404}, "server answered 404 Not Found", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := tc.err.Error(); got != tc.want {
				t.Fatalf("Error() = %q, want %q", got, tc.want)
			}
			if tc.err.Temporary() != tc.temporary {
				t.Fatalf("Temporary() = %v", !tc.temporary)
			}
		})
	}
}

func TestEndpoint(t *testing.T) {
	for _, tc := range []struct {
		name, base, want, wantErr string
	}{
		{"plain", "http://127.0.0.1:8080/v1", "http://127.0.0.1:8080/v1/x", ""},
		{"trailing slashes and spaces", " https://h/v1// ", "https://h/v1/x", ""},
		{"empty", "  ", "", "no base URL"},
		{"bad scheme", "ftp://h", "", "scheme"},
		{"unix", "unix:///tmp/sock", "", "scheme"},
		{"no host", "http:///v1", "", "no host"},
		{"query", "http://h/v1?x=1", "", "query"},
		{"fragment", "http://h/v1#x", "", "fragment"},
		{"unparsable", "http://h:port/v1", "", "base URL"},
		{"password hidden", "ftp://u:hunter2@h", "", "xxxxx"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := Endpoint(tc.base, "/x")
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) || strings.Contains(err.Error(), "hunter2") {
					t.Fatalf("Endpoint(%q) = %q, %v; want an error naming %q", tc.base, got, err, tc.wantErr)
				}
				return
			}
			if err != nil || got != tc.want {
				t.Fatalf("Endpoint(%q) = %q, %v; want %q", tc.base, got, err, tc.want)
			}
		})
	}
}

func TestMessage(t *testing.T) {
	for _, tc := range []struct {
		name, body, want string
	}{
		{"openai object", `{"error":{"message":"Invalid API key","type":"invalid_request_error","code":"invalid_api_key"}}`, "Invalid API key"},
		{"ollama string", `{"error":"model not found"}`, "model not found"},
		{"bare message", `{"message":"overloaded"}`, "overloaded"},
		{"fastapi detail", `{"detail":"Not Found"}`, "Not Found"},
		{"tei style", `{"error":"Input validation error","error_type":"Validation"}`, "Input validation error"},
		{"object without message", `{"error":{"code":5}}`, `{"error":{"code":5}}`},
		{"html", `<html><body>502 Bad Gateway</body></html>`, `<html><body>502 Bad Gateway</body></html>`},
		{"empty", ``, ``},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := Message([]byte(tc.body), ""); got != tc.want {
				t.Fatalf("got %q, want %q", got, tc.want)
			}
		})
	}
}

func TestMessageCleaned(t *testing.T) {
	for _, tc := range []struct {
		name, in, secret string
		check            func(string) bool
	}{
		{"collapses whitespace", "a\n\n b\t c", "", func(s string) bool { return s == "a b c" }},
		{"redacts secret", "key sk-1 is bad", "sk-1", func(s string) bool { return s == "key [redacted] is bad" }},
		{"redacts an escaped secret", `{"error":"key sk-\u0031 is bad"}`, "sk-1", func(s string) bool { return s == "key [redacted] is bad" }},
		{"short kept", "fine", "", func(s string) bool { return s == "fine" }},
		{"truncates on a rune boundary", strings.Repeat("日", 500), "", func(s string) bool {
			return utf8.ValidString(s) && len(s) <= MaxMessageBytes+len("…") && strings.HasSuffix(s, "…")
		}},
		{"invalid utf8 repaired", "a\xffb", "", func(s string) bool { return utf8.ValidString(s) }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := Message([]byte(tc.in), tc.secret); !tc.check(got) {
				t.Fatalf("Message(%q) = %q", tc.in, got)
			}
		})
	}
}

func TestPreview(t *testing.T) {
	for _, tc := range []struct {
		name, in, want string
	}{
		{"empty", " \n", "empty body"},
		{"short", "a\n b", `"a b"`},
		{"long cut", strings.Repeat("x", 200), `"` + strings.Repeat("x", 120) + `…"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := Preview([]byte(tc.in)); got != tc.want {
				t.Fatalf("Preview = %s, want %s", got, tc.want)
			}
		})
	}
}

func TestRedactError(t *testing.T) {
	kind := errors.New("kind")
	other := errors.New("other")
	err := fmt.Errorf("%w: server said sk-9", kind)
	for _, tc := range []struct {
		name     string
		err      error
		secret   string
		kinds    []error
		want     string
		wantKind bool
		same     bool
	}{
		{"no secret configured", err, "", []error{kind}, "kind: server said sk-9", true, true},
		{"secret absent", err, "sk-1", []error{kind}, "kind: server said sk-9", true, true},
		{"redacted, kind kept", err, "sk-9", []error{kind, other}, "kind: server said [redacted]", true, false},
		{"redacted, nothing kept", err, "sk-9", nil, "kind: server said [redacted]", false, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := RedactError(tc.err, tc.secret, tc.kinds...)
			if got.Error() != tc.want || errors.Is(got, kind) != tc.wantKind || errors.Is(got, other) || (got == tc.err) != tc.same {
				t.Fatalf("RedactError = %q (is kind %v)", got, errors.Is(got, kind))
			}
		})
	}
}

// The server's message, whatever it is, ends up short, valid UTF-8, on one
// line and without the key.
func FuzzMessage(f *testing.F) {
	f.Add([]byte(`{"error":{"message":"Incorrect API key provided: sk-abc"}}`))
	f.Add([]byte(`{"error":"sk-abc"}`))
	f.Add([]byte(`{"detail":"sk-\u0061bc"}`))
	f.Add([]byte("<html>\n\xff</html>"))
	const secret = "sk-abc"
	f.Fuzz(func(t *testing.T, body []byte) {
		m := Message(body, secret)
		if len(m) > MaxMessageBytes+len("…") || !utf8.ValidString(m) || strings.ContainsAny(m, "\n\r\t") {
			t.Fatalf("bad message %q", m)
		}
		if strings.Contains(m, secret) {
			t.Fatalf("secret in %q", m)
		}
	})
}

func TestDescribeHidesKey(t *testing.T) {
	for _, tc := range []struct {
		name, key, want string
	}{
		{"with key", testKey, "x.Config{url=http://h model=m key=[redacted]}"},
		{"without key", "", "x.Config{url=http://h model=m}"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := Describe("x.Config", "http://h", "m", tc.key); got != tc.want {
				t.Fatalf("Describe = %q, want %q", got, tc.want)
			}
			v := LogValue("http://h", "m", tc.key)
			if s := v.String(); strings.Contains(s, testKey) || !strings.Contains(s, fmt.Sprintf("api_key_set=%v", tc.key != "")) {
				t.Fatalf("LogValue = %s", s)
			}
		})
	}
}
