// Package httpjson posts JSON to model providers (chat, embedding and rerank
// servers) with per-attempt timeouts and bounded retries, and keeps API keys
// out of every error it returns.
//
// A call is retried on 429, on 5xx other than 501 and on transport errors
// (connection refused or reset, an attempt's timeout), after a capped,
// jittered exponential backoff or the server's Retry-After, itself capped;
// other 4xx answers, oversized bodies and the caller's cancellation end it at once.
package httpjson

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// Defaults for a Client's zero fields.
const (
	DefaultTimeout          = 30 * time.Second
	DefaultBaseDelay        = 250 * time.Millisecond // the first retry waits 125–250ms
	DefaultMaxDelay         = 8 * time.Second
	DefaultMaxResponseBytes = 8 << 20
)

// maxErrorBody bounds how much of a non-2xx answer is read for its message.
const maxErrorBody = 64 << 10

// ErrTooLarge is wrapped by the error for a 2xx answer longer than
// Client.MaxResponseBytes; such an answer is not retried.
var ErrTooLarge = errors.New("response too large")

// Client posts JSON bodies to one endpoint. Zero delays and limits mean the
// defaults above. A Client is safe for concurrent use; do not change its
// fields while calls are in flight.
type Client struct {
	// URL is the endpoint, as Endpoint builds it.
	URL string
	// APIKey, if set, is sent as a bearer token and removed from every
	// server message.
	APIKey string
	// Timeout bounds each attempt separately; 0 or less means DefaultTimeout.
	Timeout time.Duration
	// MaxRetries is how many attempts may follow the first; 0 or less means none.
	MaxRetries int
	// BaseDelay is the first backoff; each retry doubles it, up to MaxDelay.
	BaseDelay, MaxDelay time.Duration
	// MaxRetryAfter caps a wait the server asks for; 0 means MaxDelay.
	MaxRetryAfter time.Duration
	// MaxResponseBytes bounds a 2xx answer's body.
	MaxResponseBytes int64
	// Retryable says whether a non-2xx status may succeed later; nil means
	// (*StatusError).Temporary.
	Retryable func(code int) bool
	// WrapStatus, if set, turns a non-2xx answer into the error Post returns
	// for it, so that a package can keep its own error type.
	WrapStatus func(*StatusError) error
}

// httpClient is shared by every Client: it holds no state but pooled connections.
var httpClient = &http.Client{}

// OrDefault reads a provider config's per-attempt timeout and retry count as
// the configs document them: a timeout of 0 or less means defTimeout, 0
// retries means defRetries and a negative count means none.
func OrDefault(timeout, defTimeout time.Duration, retries, defRetries int) (time.Duration, int) {
	if timeout <= 0 {
		timeout = defTimeout
	}
	switch {
	case retries == 0:
		retries = defRetries
	case retries < 0:
		retries = 0
	}
	return timeout, retries
}

// transportError marks a failure to get any answer (connection refused or
// reset, an attempt's timeout, a broken body); such failures are retried.
type transportError struct{ err error }

func (e *transportError) Error() string { return e.err.Error() }
func (e *transportError) Unwrap() error { return e.err }

// Post sends body and returns the 2xx answer's body, retrying as the package
// comment says. Cancelling ctx stops it at once, mid-request or mid-wait; the
// error then matches both ctx.Err() and context.Cause(ctx).
func (c *Client) Post(ctx context.Context, body []byte) ([]byte, error) {
	for n := 1; ; n++ {
		data, after, err := c.once(ctx, body)
		if err == nil {
			return data, nil
		}
		if ctx.Err() != nil {
			return nil, ended(ctx, fmt.Sprintf("attempt %d", n), err)
		}
		var te *transportError
		retry := errors.As(err, &te)
		if se, ok := err.(*StatusError); ok {
			retry = c.retryable(se.Code)
			if c.WrapStatus != nil {
				err = c.WrapStatus(se)
			}
		}
		if !retry || n > c.MaxRetries {
			if n > 1 {
				return nil, fmt.Errorf("gave up after %d attempts: %w", n, err)
			}
			return nil, err
		}
		if !Sleep(ctx, c.delay(n, after)) {
			return nil, ended(ctx, fmt.Sprintf("stopped waiting to retry after attempt %d", n), err)
		}
	}
}

func (c *Client) retryable(code int) bool {
	if c.Retryable != nil {
		return c.Retryable(code)
	}
	return (&StatusError{Code: code}).Temporary()
}

// once makes a single attempt under its own timeout. after is the server's
// Retry-After, or -1 when it sent none.
func (c *Client) once(ctx context.Context, body []byte) (data []byte, after time.Duration, err error) {
	timeout := c.Timeout
	if timeout <= 0 {
		timeout = DefaultTimeout
	}
	actx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(actx, http.MethodPost, c.URL, bytes.NewReader(body))
	if err != nil {
		return nil, -1, fmt.Errorf("build request: %w", err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json")
	if c.APIKey != "" {
		req.Header.Set("Authorization", "Bearer "+c.APIKey)
	}
	resp, err := httpClient.Do(req)
	if err != nil {
		return nil, -1, transport(ctx, actx, timeout, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		raw, _ := io.ReadAll(io.LimitReader(resp.Body, maxErrorBody))
		after, ok := retryAfter(resp.Header.Get("Retry-After"), time.Now())
		se := &StatusError{Code: resp.StatusCode, Message: Message(raw, c.APIKey)}
		if !ok {
			return nil, -1, se
		}
		se.RetryAfter = after
		return nil, after, se
	}
	limit := c.MaxResponseBytes
	if limit <= 0 {
		limit = DefaultMaxResponseBytes
	}
	data, err = io.ReadAll(io.LimitReader(resp.Body, limit+1))
	if err != nil {
		return nil, -1, transport(ctx, actx, timeout, fmt.Errorf("read response: %w", err))
	}
	if int64(len(data)) > limit {
		return nil, -1, fmt.Errorf("%w: larger than %d bytes", ErrTooLarge, limit)
	}
	return data, -1, nil
}

// transport classifies a failed exchange: the caller's own cancellation is
// returned as is; anything else, an attempt's timeout included, is retryable.
func transport(ctx, actx context.Context, timeout time.Duration, err error) error {
	if ctx.Err() != nil {
		return err
	}
	if errors.Is(actx.Err(), context.DeadlineExceeded) {
		err = fmt.Errorf("no answer within %s: %w", timeout, err)
	}
	return &transportError{err: err}
}

// ended is the error for a call that ctx stopped while doing what, the last
// attempt having failed with err. It matches ctx.Err() and context.Cause(ctx);
// err is named but not wrapped, unless it already says the call was stopped.
func ended(ctx context.Context, what string, err error) error {
	stop, cause := ctx.Err(), context.Cause(ctx)
	switch {
	case errors.Is(err, stop) && errors.Is(err, cause):
		return err
	case errors.Is(cause, stop):
		return fmt.Errorf("%s (%v): %w", what, err, cause)
	default:
		return fmt.Errorf("%s (%v): %w: %w", what, err, stop, cause)
	}
}

// delay is the wait before retry n (from 1): the server's Retry-After when it
// sent one (after >= 0), capped at MaxRetryAfter; else BaseDelay·2^(n-1),
// capped at MaxDelay, drawn uniformly from its upper half ("equal jitter").
func (c *Client) delay(n int, after time.Duration) time.Duration {
	maxDelay := c.MaxDelay
	if maxDelay <= 0 {
		maxDelay = DefaultMaxDelay
	}
	if after >= 0 {
		limit := c.MaxRetryAfter
		if limit <= 0 {
			limit = maxDelay
		}
		return min(after, limit)
	}
	base := c.BaseDelay
	if base <= 0 {
		base = DefaultBaseDelay
	}
	return Backoff(n, base, maxDelay)
}

// Backoff is the wait before retry n (from 1): base·2^(n-1), capped at
// maxDelay, drawn uniformly from its upper half ("equal jitter").
func Backoff(n int, base, maxDelay time.Duration) time.Duration {
	d := maxDelay
	if n-1 < 31 {
		d = min(base<<(n-1), maxDelay)
	}
	half := d / 2
	return half + rand.N(d-half+1)
}

// Sleep waits d and reports whether it did so before ctx ended.
func Sleep(ctx context.Context, d time.Duration) bool {
	if d <= 0 {
		return ctx.Err() == nil
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-ctx.Done():
		return false
	}
}

// retryAfter reads a Retry-After header (RFC 9110 §10.2.3): delay-seconds,
// saturating rather than overflowing, or an HTTP date, a past one meaning now.
// ok is false when the header is absent or unreadable.
func retryAfter(v string, now time.Time) (d time.Duration, ok bool) {
	v = strings.TrimSpace(v)
	if v == "" {
		return 0, false
	}
	if strings.Trim(v, "0123456789") == "" {
		s, err := strconv.ParseUint(v, 10, 64)
		if err != nil || s > uint64(math.MaxInt64/time.Second) { // err: too many digits
			return math.MaxInt64, true
		}
		return time.Duration(s) * time.Second, true
	}
	if t, err := http.ParseTime(v); err == nil {
		return max(t.Sub(now), 0), true
	}
	return 0, false
}
