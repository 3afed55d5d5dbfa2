// Posting JSON to a rerank provider with bounded retries: each attempt has its
// own timeout; 429, 5xx (but 501) and transport errors are retried with
// capped, jittered exponential backoff (or the server's Retry-After); other
// 4xx answers, oversized bodies and a cancelled context end the call at once.
// This mirrors llm/retry.go; both belong in one internal package.

package rerank

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// Retry and size defaults.
const (
	DefaultTimeout    = 30 * time.Second // per attempt
	DefaultMaxRetries = 2                // attempts after the first
	defaultBaseDelay  = 250 * time.Millisecond
	defaultMaxDelay   = 8 * time.Second
	maxResponseBytes  = 8 << 20 // scores for thousands of documents fit in far less
	maxErrorBody      = 4 << 10
	maxErrorMessage   = 300
)

// StatusError is a non-2xx answer from the provider. Message is the server's
// explanation, shortened, with the API key removed.
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

// poster sends one JSON body to one URL, retrying as the file comment says.
type poster struct {
	client    *http.Client
	url       string
	apiKey    string
	timeout   time.Duration
	retries   int
	baseDelay time.Duration
	maxDelay  time.Duration
}

func newPoster(url, apiKey string, timeout time.Duration, maxRetries int) poster {
	if timeout <= 0 {
		timeout = DefaultTimeout
	}
	switch {
	case maxRetries == 0:
		maxRetries = DefaultMaxRetries
	case maxRetries < 0:
		maxRetries = 0
	}
	return poster{
		client:    &http.Client{},
		url:       url,
		apiKey:    apiKey,
		timeout:   timeout,
		retries:   maxRetries,
		baseDelay: defaultBaseDelay,
		maxDelay:  defaultMaxDelay,
	}
}

// transportError marks a failure to get any answer (connection refused,
// reset, attempt timeout); such failures are retried.
type transportError struct{ err error }

func (e *transportError) Error() string { return e.err.Error() }
func (e *transportError) Unwrap() error { return e.err }

// post sends body and returns the 2xx response body.
func (p *poster) post(ctx context.Context, body []byte) ([]byte, error) {
	for attempt := 0; ; attempt++ {
		data, err := p.once(ctx, body)
		if err == nil {
			return data, nil
		}
		if ctx.Err() != nil {
			return nil, fmt.Errorf("attempt %d: %w", attempt+1, context.Cause(ctx))
		}
		var se *StatusError
		var te *transportError
		retryable := errors.As(err, &te) || (errors.As(err, &se) && se.Temporary())
		if !retryable || attempt >= p.retries {
			if attempt > 0 {
				return nil, fmt.Errorf("after %d attempts: %w", attempt+1, err)
			}
			return nil, err
		}
		var wait time.Duration
		if se != nil {
			wait = se.RetryAfter
		}
		if !sleep(ctx, p.delay(attempt, wait)) {
			return nil, fmt.Errorf("stopped waiting to retry (attempt %d: %v): %w", attempt+1, err, context.Cause(ctx))
		}
	}
}

// delay is the pause before retry attempt+1: the server's wish if it stated
// one, else base·2^attempt with full jitter in its upper half; capped either way.
func (p *poster) delay(attempt int, retryAfter time.Duration) time.Duration {
	if retryAfter > 0 {
		return min(retryAfter, p.maxDelay)
	}
	d := p.baseDelay << min(attempt, 20)
	if d <= 0 || d > p.maxDelay {
		d = p.maxDelay
	}
	return d/2 + rand.N(d/2+1)
}

// sleep waits d and reports whether it did so before ctx ended.
func sleep(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-ctx.Done():
		return false
	}
}

// once makes a single attempt under its own timeout.
func (p *poster) once(ctx context.Context, body []byte) ([]byte, error) {
	actx, cancel := context.WithTimeout(ctx, p.timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(actx, http.MethodPost, p.url, bytes.NewReader(body))
	if err != nil {
		return nil, fmt.Errorf("build request: %w", err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json")
	if p.apiKey != "" {
		req.Header.Set("Authorization", "Bearer "+p.apiKey)
	}
	resp, err := p.client.Do(req)
	if err != nil {
		return nil, p.transport(ctx, actx, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		snippet, _ := io.ReadAll(io.LimitReader(resp.Body, maxErrorBody))
		return nil, &StatusError{
			Code:       resp.StatusCode,
			Message:    errorMessage(redact(string(snippet), p.apiKey)),
			RetryAfter: retryAfter(resp.Header.Get("Retry-After")),
		}
	}
	data, err := io.ReadAll(io.LimitReader(resp.Body, maxResponseBytes+1))
	if err != nil {
		return nil, p.transport(ctx, actx, fmt.Errorf("read response: %w", err))
	}
	if len(data) > maxResponseBytes {
		return nil, fmt.Errorf("response larger than %d bytes", maxResponseBytes)
	}
	return data, nil
}

// transport classifies a failed exchange: the caller's own cancellation is
// returned as is; anything else, an attempt timeout included, is retryable.
func (p *poster) transport(ctx, actx context.Context, err error) error {
	if ctx.Err() != nil {
		return err
	}
	if errors.Is(actx.Err(), context.DeadlineExceeded) {
		err = fmt.Errorf("no answer within %s: %w", p.timeout, err)
	}
	return &transportError{err: err}
}

// retryAfter parses a Retry-After header: delay-seconds or an HTTP date.
func retryAfter(v string) time.Duration {
	v = strings.TrimSpace(v)
	if v == "" {
		return 0
	}
	if s, err := strconv.Atoi(v); err == nil && s > 0 {
		return time.Duration(s) * time.Second
	}
	if t, err := http.ParseTime(v); err == nil {
		return max(time.Until(t), 0)
	}
	return 0
}

// errorMessage pulls the human part out of an error body: OpenAI-style
// {"error":{"message"}}, {"error":"..."}, {"message"} or {"detail"}, else the
// trimmed text; shortened to maxErrorMessage bytes.
func errorMessage(body string) string {
	var v struct {
		Error   json.RawMessage `json:"error"`
		Message string          `json:"message"`
		Detail  json.RawMessage `json:"detail"`
	}
	msg := strings.TrimSpace(body)
	if json.Unmarshal([]byte(body), &v) == nil {
		var inner struct {
			Message string `json:"message"`
		}
		var s string
		switch {
		case json.Unmarshal(v.Error, &inner) == nil && inner.Message != "":
			msg = inner.Message
		case json.Unmarshal(v.Error, &s) == nil && s != "":
			msg = s
		case v.Message != "":
			msg = v.Message
		case json.Unmarshal(v.Detail, &s) == nil && s != "":
			msg = s
		}
	}
	msg = strings.Join(strings.Fields(msg), " ")
	if len(msg) > maxErrorMessage {
		msg = strings.ToValidUTF8(msg[:maxErrorMessage], "") + "…"
	}
	return msg
}

// redact removes every occurrence of key from s.
func redact(s, key string) string {
	if key == "" {
		return s
	}
	return strings.ReplaceAll(s, key, "[redacted]")
}
