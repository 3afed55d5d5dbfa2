package embed

// This file holds what the remote providers share on top of internal/httpjson:
// their defaults, their error types and one JSON POST whose oversized answers
// count as bad responses.

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"time"

	"github.com/engram-memory/engram/internal/httpjson"
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
	backoffMax       = 4 * time.Second
	maxResponseBytes = 64 << 20 // 64 texts × 4096 dims as JSON is about 6 MB
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

// remote posts JSON bodies to one endpoint.
type remote struct{ httpjson.Client }

func newRemote(endpoint, apiKey string, timeout time.Duration, maxRetries int) *remote {
	timeout, maxRetries = httpjson.OrDefault(timeout, DefaultTimeout, maxRetries, DefaultMaxRetries)
	return &remote{httpjson.Client{
		URL:              endpoint,
		APIKey:           apiKey,
		Timeout:          timeout,
		MaxRetries:       maxRetries,
		MaxDelay:         backoffMax,
		MaxRetryAfter:    MaxRetryAfter,
		MaxResponseBytes: maxResponseBytes,
		Retryable:        func(code int) bool { return (&HTTPError{StatusCode: code}).Retryable() },
		WrapStatus: func(se *httpjson.StatusError) error {
			return &HTTPError{StatusCode: se.Code, Message: se.Message}
		},
	}}
}

// post sends body and returns the 2xx response body, retrying as httpjson
// does; an oversized answer wraps ErrBadResponse.
func (r *remote) post(ctx context.Context, body []byte) ([]byte, error) {
	out, err := r.Post(ctx, body)
	if errors.Is(err, httpjson.ErrTooLarge) {
		return nil, fmt.Errorf("%w: %w", ErrBadResponse, err)
	}
	return out, err
}
