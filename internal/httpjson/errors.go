package httpjson

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"time"
	"unicode/utf8"
)

// MaxMessageBytes bounds a server's message kept in an error; a longer one is
// cut on a rune boundary and ends in "…".
const MaxMessageBytes = 300

// StatusError is a non-2xx answer. Message is the server's explanation,
// shortened, on one line, with the API key removed.
type StatusError struct {
	Code    int
	Message string
	// RetryAfter is the wait the server asked for, zero if none.
	RetryAfter time.Duration
}

// Error implements error.
func (e *StatusError) Error() string {
	s := fmt.Sprintf("server answered %d %s", e.Code, http.StatusText(e.Code))
	if e.Message != "" {
		s += ": " + e.Message
	}
	return s
}

// Temporary reports whether the same request may succeed later (429 or 5xx
// other than 501 Not Implemented).
func (e *StatusError) Temporary() bool {
	return e.Code == http.StatusTooManyRequests || (e.Code >= 500 && e.Code != http.StatusNotImplemented)
}

// Endpoint joins an http(s) base URL and a path, checking the base: it must
// have a host and no query or fragment; trailing slashes are dropped.
func Endpoint(base, path string) (string, error) {
	base = strings.TrimRight(strings.TrimSpace(base), "/")
	if base == "" {
		return "", errors.New("no base URL")
	}
	u, err := url.Parse(base)
	if err != nil {
		return "", fmt.Errorf("base URL: %w", err)
	}
	if u.Scheme != "http" && u.Scheme != "https" {
		return "", fmt.Errorf("base URL %q: scheme must be http or https", u.Redacted())
	}
	if u.Host == "" {
		return "", fmt.Errorf("base URL %q: no host", u.Redacted())
	}
	if u.RawQuery != "" || u.Fragment != "" {
		return "", fmt.Errorf("base URL %q: must not have a query or fragment", u.Redacted())
	}
	return base + path, nil
}

// Message is the human part of an error body, cleaned for an error message:
// OpenAI's {"error": {"message"}}, Ollama's and TEI's {"error": "..."}, a bare
// {"message"} or FastAPI's {"detail": "..."}, else the body itself; with
// secret removed, whitespace collapsed and at most MaxMessageBytes long.
func Message(body []byte, secret string) string { return Clean(serverMessage(body), secret) }

// Clean readies a server's message for an error: invalid UTF-8 replaced,
// secret removed, whitespace collapsed, at most MaxMessageBytes long.
func Clean(s, secret string) string {
	s = strings.Join(strings.Fields(Redact(strings.ToValidUTF8(s, "\uFFFD"), secret)), " ")
	if len(s) <= MaxMessageBytes {
		return s
	}
	cut := MaxMessageBytes
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + "…"
}

func serverMessage(body []byte) string {
	var env struct {
		Error   json.RawMessage `json:"error"`
		Message string          `json:"message"`
		Detail  json.RawMessage `json:"detail"`
	}
	if json.Unmarshal(body, &env) != nil {
		return string(body)
	}
	var s string
	var inner struct {
		Message string `json:"message"`
	}
	switch {
	case json.Unmarshal(env.Error, &s) == nil && s != "":
		return s
	case json.Unmarshal(env.Error, &inner) == nil && inner.Message != "":
		return inner.Message
	case env.Message != "":
		return env.Message
	case json.Unmarshal(env.Detail, &s) == nil && s != "":
		return s
	}
	return string(body)
}

// Preview is the start of a body, quoted, for error messages.
func Preview(data []byte) string {
	const n = 120
	s := strings.Join(strings.Fields(string(data)), " ")
	if s == "" {
		return "empty body"
	}
	if len(s) > n {
		s = strings.ToValidUTF8(s[:n], "") + "…"
	}
	return fmt.Sprintf("%q", s)
}

// Redact removes every occurrence of secret from s.
func Redact(s, secret string) string {
	if secret == "" {
		return s
	}
	return strings.ReplaceAll(s, secret, "[redacted]")
}

// RedactError returns err with secret removed from its text. The result does
// not wrap err, so no unwrapping can bring the secret back; it matches, under
// errors.Is, those of kinds that err matched. err is returned as is when its
// text holds no secret.
func RedactError(err error, secret string, kinds ...error) error {
	if secret == "" || !strings.Contains(err.Error(), secret) {
		return err
	}
	r := &redactedError{msg: Redact(err.Error(), secret)}
	for _, k := range kinds {
		if errors.Is(err, k) {
			r.kinds = append(r.kinds, k)
		}
	}
	return r
}

type redactedError struct {
	msg   string
	kinds []error
}

func (e *redactedError) Error() string   { return e.msg }
func (e *redactedError) Unwrap() []error { return e.kinds }
