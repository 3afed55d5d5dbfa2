package embed

// This file holds the HTTP machinery the remote providers share: one JSON POST
// with a per-attempt timeout, retried on 429, 5xx and transport errors with
// exponential backoff and jitter (or the server's Retry-After, capped), and
// errors that carry the status and the server's message but never the API key.

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"
)

// Defaults of the remote providers' configurations.
const (
	// DefaultBatchSize is how many texts one request carries.
	DefaultBatchSize = 64
	// DefaultTimeout bounds one request (each attempt separately).
	DefaultTimeout = 30 * time.Second
	// DefaultMaxRetries is how many times a failed request is retried.
	DefaultMaxRetries = 3
	// MaxRetryAfter caps how long a server's Retry-After can make us wait.
	MaxRetryAfter = 5 * time.Second
)

const (
	backoffBase      = 250 * time.Millisecond // first retry waits 125–250ms
	backoffMax       = 4 * time.Second
	maxResponseBytes = 64 << 20 // 64 texts × 4096 dims as JSON is about 6 MB
	maxErrorBody     = 64 << 10
	maxErrorMessage  = 300 // bytes of the server's message kept in an error
)

// ErrBadResponse is wrapped by every error about a response that arrived but
// cannot be used: malformed JSON, a wrong number of vectors, ragged dimensions.
var ErrBadResponse = errors.New("bad embedding response")

// HTTPError is a non-2xx answer from an embedding server.
type HTTPError struct {
	StatusCode int
	// Message is the server's error text, whitespace-collapsed and truncated.
	Message string
}

// Error renders the status and the server's message.
func (e *HTTPError) Error() string {
	s := fmt.Sprintf("HTTP %d %s", e.StatusCode, http.StatusText(e.StatusCode))
	if e.Message != "" {
		s += ": " + e.Message
	}
	return s
}

// Retryable reports whether the same request may succeed later (429 or 5xx).
func (e *HTTPError) Retryable() bool {
	return e.StatusCode == http.StatusTooManyRequests || e.StatusCode >= 500
}

// retryPolicy says how often and how long to wait between attempts.
type retryPolicy struct {
	maxRetries    int
	base, max     time.Duration
	maxRetryAfter time.Duration
}

// delay is the wait before retry number attempt (1-based): the server's
// Retry-After when it gave one (after >= 0), capped, else exponential backoff
// with equal jitter, a uniform draw from [d/2, d] where d = base·2^(attempt-1).
func (p retryPolicy) delay(attempt int, after time.Duration) time.Duration {
	if after >= 0 {
		return min(after, p.maxRetryAfter)
	}
	d := p.max
	if attempt-1 < 31 {
		d = min(p.base<<(attempt-1), p.max)
	}
	if d <= 0 {
		return 0
	}
	half := d / 2
	return half + rand.N(d-half+1)
}

// remote posts JSON bodies to one endpoint.
type remote struct {
	url     string
	apiKey  string
	timeout time.Duration
	retry   retryPolicy
	client  *http.Client
}

func newRemote(endpoint, apiKey string, timeout time.Duration, maxRetries int) *remote {
	if timeout == 0 {
		timeout = DefaultTimeout
	}
	switch {
	case maxRetries == 0:
		maxRetries = DefaultMaxRetries
	case maxRetries < 0:
		maxRetries = 0
	}
	return &remote{
		url:     endpoint,
		apiKey:  apiKey,
		timeout: timeout,
		retry:   retryPolicy{maxRetries: maxRetries, base: backoffBase, max: backoffMax, maxRetryAfter: MaxRetryAfter},
		client:  &http.Client{},
	}
}

// endpoint validates an http(s) base URL and appends path to it.
func endpoint(base, path string) (string, error) {
	base = strings.TrimRight(strings.TrimSpace(base), "/")
	if base == "" {
		return "", errors.New("base URL is required")
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

// post sends body and returns the 2xx response body, retrying as the policy says.
// Cancelling ctx stops at once, mid-request or mid-wait.
func (r *remote) post(ctx context.Context, body []byte) ([]byte, error) {
	for attempt := 1; ; attempt++ {
		out, retry, after, err := r.attempt(ctx, body)
		if err == nil {
			return out, nil
		}
		if ctxErr := ctx.Err(); ctxErr != nil {
			return nil, withCause(ctxErr, err)
		}
		if !retry || attempt > r.retry.maxRetries {
			if attempt > 1 {
				err = fmt.Errorf("%w (gave up after %d attempts)", err, attempt)
			}
			return nil, err
		}
		if werr := sleep(ctx, r.retry.delay(attempt, after)); werr != nil {
			return nil, withCause(werr, fmt.Errorf("waiting to retry after: %w", err))
		}
	}
}

// attempt makes one request. retry says whether a failure is worth retrying;
// after is the server's Retry-After, or -1 when it gave none.
func (r *remote) attempt(ctx context.Context, body []byte) (out []byte, retry bool, after time.Duration, err error) {
	actx, cancel := context.WithTimeout(ctx, r.timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(actx, http.MethodPost, r.url, bytes.NewReader(body))
	if err != nil {
		return nil, false, -1, fmt.Errorf("build request: %w", err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json")
	if r.apiKey != "" {
		req.Header.Set("Authorization", "Bearer "+r.apiKey)
	}
	resp, err := r.client.Do(req)
	if err != nil {
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err // drop the "Post URL" prefix; the caller names the URL
		}
		return nil, true, -1, r.transportErr(actx, ctx, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		raw, _ := io.ReadAll(io.LimitReader(resp.Body, maxErrorBody))
		he := &HTTPError{StatusCode: resp.StatusCode, Message: cleanMessage(serverMessage(raw), r.apiKey)}
		after := time.Duration(-1)
		if d, ok := parseRetryAfter(resp.Header.Get("Retry-After"), time.Now()); ok {
			after = d
		}
		return nil, he.Retryable(), after, he
	}
	out, err = io.ReadAll(io.LimitReader(resp.Body, maxResponseBytes+1))
	if err != nil {
		return nil, true, -1, r.transportErr(actx, ctx, fmt.Errorf("read response: %w", err))
	}
	if len(out) > maxResponseBytes {
		return nil, false, -1, fmt.Errorf("%w: response larger than %d bytes", ErrBadResponse, maxResponseBytes)
	}
	return out, false, 0, nil
}

// transportErr names a per-attempt timeout as such.
func (r *remote) transportErr(actx, ctx context.Context, err error) error {
	if errors.Is(actx.Err(), context.DeadlineExceeded) && ctx.Err() == nil {
		return fmt.Errorf("request timed out after %s: %w", r.timeout, err)
	}
	return err
}

// withCause returns an error that is ctxErr, mentioning cause unless it already wraps ctxErr.
func withCause(ctxErr, cause error) error {
	if errors.Is(cause, ctxErr) {
		return cause
	}
	return fmt.Errorf("%w (%v)", ctxErr, cause)
}

func sleep(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		return ctx.Err()
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

// parseRetryAfter reads a Retry-After header: delay-seconds or an HTTP date.
func parseRetryAfter(v string, now time.Time) (time.Duration, bool) {
	v = strings.TrimSpace(v)
	if v == "" {
		return 0, false
	}
	if strings.Trim(v, "0123456789") == "" {
		n, err := strconv.ParseUint(v, 10, 64)
		if err != nil || n > uint64(MaxRetryAfter/time.Second) { // err: too many digits
			return MaxRetryAfter, true
		}
		return time.Duration(n) * time.Second, true
	}
	if t, err := http.ParseTime(v); err == nil {
		return max(t.Sub(now), 0), true
	}
	return 0, false
}

// serverMessage pulls the human text out of an error body: OpenAI's
// {"error": {"message"}}, Ollama's {"error": "..."}, a bare {"message"}, or
// failing those the raw body.
func serverMessage(raw []byte) string {
	var env struct {
		Error   json.RawMessage `json:"error"`
		Message string          `json:"message"`
	}
	if err := json.Unmarshal(raw, &env); err == nil {
		if len(env.Error) > 0 {
			var s string
			if json.Unmarshal(env.Error, &s) == nil && s != "" {
				return s
			}
			var obj struct {
				Message string `json:"message"`
			}
			if json.Unmarshal(env.Error, &obj) == nil && obj.Message != "" {
				return obj.Message
			}
		}
		if env.Message != "" {
			return env.Message
		}
	}
	return string(raw)
}

// cleanMessage removes the API key, collapses whitespace, and truncates to
// maxErrorMessage bytes of valid UTF-8.
func cleanMessage(s, secret string) string {
	s = strings.ToValidUTF8(s, "\uFFFD")
	if secret != "" {
		s = strings.ReplaceAll(s, secret, "[redacted]")
	}
	s = strings.Join(strings.Fields(s), " ")
	if len(s) <= maxErrorMessage {
		return s
	}
	cut := maxErrorMessage
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + "…"
}
