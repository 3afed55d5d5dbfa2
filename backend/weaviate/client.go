package weaviate

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/engram-memory/engram/backend"
	"github.com/engram-memory/engram/internal/httpjson"
)

// ErrUnavailable wraps every failure to get an answer from the server in
// time: connection refused or reset, an attempt's timeout, a 429 or 5xx that
// outlived the retries. Every request this package makes is idempotent, so
// the caller may simply try again later.
// It matches backend.ErrUnavailable too.
var ErrUnavailable error = unavailable{}

type unavailable struct{}

func (unavailable) Error() string { return "weaviate unavailable" }

func (unavailable) Is(target error) bool { return target == backend.ErrUnavailable }

// Retry pacing: the first retry waits 50–100ms, each further one twice as
// long, at most maxDelay.
const (
	baseDelay = 100 * time.Millisecond
	maxDelay  = 2 * time.Second
	// maxBody bounds an answer (a page of 1000 memories with 1024-d vectors is
	// about 12 MB of JSON).
	maxBody = 256 << 20
)

// StatusError is an answer other than 2xx, or a GraphQL error.
type StatusError struct {
	Method, Path string
	Code         int    // HTTP status; 200 for a GraphQL error
	Message      string // the server's message, on one line, key removed
}

func (e *StatusError) Error() string {
	return fmt.Sprintf("weaviate %s %s: %d %s: %s", e.Method, e.Path, e.Code, http.StatusText(e.Code), e.Message)
}

// temporary reports whether the same request may succeed later.
func (e *StatusError) temporary() bool {
	return e.Code == http.StatusTooManyRequests || (e.Code >= 500 && e.Code != http.StatusNotImplemented)
}

// client speaks JSON (schema, admin and the reads that are not searches) and
// gRPC (searches and batch writes, grpc.go) to one Weaviate server with
// per-attempt timeouts and bounded retries. All requests it makes are idempotent (reads, upserts by
// deterministic id, deletes), so retrying any of them is safe.
type client struct {
	base    string
	apiKey  string
	timeout time.Duration
	retries int
	hc      *http.Client
	rpc     *rpc // searches and batch writes
}

func newClient(c Config) *client {
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.MaxIdleConnsPerHost = 32 // searches run legs concurrently; the default 2 churns connections
	cl := &client{base: c.Endpoint, apiKey: c.APIKey, timeout: c.Timeout, retries: c.Retries, hc: &http.Client{Transport: tr}}
	cl.rpc = newRPC(c, cl)
	return cl
}

func (c *client) close() {
	c.hc.CloseIdleConnections()
	c.rpc.close()
}

// do sends in (nil: no body) as JSON and decodes a 2xx answer into out (nil:
// discard). A 404 is returned as a *StatusError with Code 404.
func (c *client) do(ctx context.Context, method, path string, query url.Values, in, out any) error {
	var body []byte
	if in != nil {
		var err error
		if body, err = json.Marshal(in); err != nil {
			return fmt.Errorf("weaviate %s %s: encode request: %w", method, path, err)
		}
	}
	target := c.base + path
	if len(query) > 0 {
		target += "?" + query.Encode()
	}
	for n := 1; ; n++ {
		data, err := c.once(ctx, method, path, target, body)
		if err == nil {
			if out == nil || len(data) == 0 {
				return nil
			}
			if err := json.Unmarshal(data, out); err != nil {
				return fmt.Errorf("weaviate %s %s: decode answer %s: %w", method, path, httpjson.Preview(data), err)
			}
			return nil
		}
		if ctx.Err() != nil {
			return fmt.Errorf("weaviate %s %s: %w (last attempt: %v)", method, path, ctx.Err(), err)
		}
		var se *StatusError
		retry := errors.Is(err, ErrUnavailable)
		if errors.As(err, &se) {
			retry = se.temporary()
		}
		if !retry || n > c.retries {
			if n > 1 {
				err = fmt.Errorf("gave up after %d attempts: %w", n, err)
			}
			if se != nil && se.temporary() {
				err = fmt.Errorf("%w: %w", ErrUnavailable, err)
			}
			return err
		}
		if !httpjson.Sleep(ctx, backoff(n)) {
			return fmt.Errorf("weaviate %s %s: %w (while waiting to retry: %v)", method, path, ctx.Err(), err)
		}
	}
}

// once makes one attempt under the per-attempt timeout.
func (c *client) once(ctx context.Context, method, path, target string, body []byte) ([]byte, error) {
	actx, cancel := context.WithTimeout(ctx, c.timeout)
	defer cancel()
	var rd io.Reader
	if body != nil {
		rd = bytes.NewReader(body)
	}
	req, err := http.NewRequestWithContext(actx, method, target, rd)
	if err != nil {
		return nil, fmt.Errorf("weaviate %s %s: build request: %w", method, path, err)
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	req.Header.Set("Accept", "application/json")
	if c.apiKey != "" {
		req.Header.Set("Authorization", "Bearer "+c.apiKey)
	}
	resp, err := c.hc.Do(req)
	if err != nil {
		return nil, c.transport(ctx, actx, method, path, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		raw, _ := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
		return nil, &StatusError{Method: method, Path: path, Code: resp.StatusCode, Message: c.message(raw)}
	}
	data, err := io.ReadAll(io.LimitReader(resp.Body, maxBody+1))
	if err != nil {
		return nil, c.transport(ctx, actx, method, path, fmt.Errorf("read answer: %w", err))
	}
	if len(data) > maxBody {
		return nil, fmt.Errorf("weaviate %s %s: answer larger than %d bytes", method, path, maxBody)
	}
	return data, nil
}

// transport names a failed exchange; anything but the caller's own
// cancellation is ErrUnavailable.
func (c *client) transport(ctx, actx context.Context, method, path string, err error) error {
	err = errors.New(httpjson.Redact(err.Error(), c.apiKey))
	if ctx.Err() != nil {
		return fmt.Errorf("weaviate %s %s: %w", method, path, err)
	}
	if errors.Is(actx.Err(), context.DeadlineExceeded) {
		return fmt.Errorf("%w: %s %s%s: no answer within %s", ErrUnavailable, method, c.base, path, c.timeout)
	}
	return fmt.Errorf("%w: %s %s%s: %v", ErrUnavailable, method, c.base, path, err)
}

// message is the human part of a Weaviate error body: {"error":[{"message"}]},
// {"message"} or {"code","message"}, else the body itself.
func (c *client) message(body []byte) string {
	var env struct {
		Error []struct {
			Message string `json:"message"`
		} `json:"error"`
		Message string `json:"message"`
	}
	s := string(body)
	if json.Unmarshal(body, &env) == nil {
		var parts []string
		for _, e := range env.Error {
			parts = append(parts, e.Message)
		}
		if env.Message != "" {
			parts = append(parts, env.Message)
		}
		if len(parts) > 0 {
			s = strings.Join(parts, "; ")
		}
	}
	return c.clean(s)
}

// clean readies a server message for an error (httpjson.Clean with the key).
func (c *client) clean(s string) string { return httpjson.Clean(s, c.apiKey) }

// backoff is the wait before retry n (from 1), with equal jitter.
func backoff(n int) time.Duration { return httpjson.Backoff(n, baseDelay, maxDelay) }

// graphQLError is one entry of a GraphQL answer's errors.
type graphQLError struct {
	Message string `json:"message"`
}

// errTenantNotFound marks a read from a tenant that was never written: for a
// reader that is the same as an empty tenant (reads never create tenants).
var errTenantNotFound = errors.New("tenant not found")

// tenantNotFoundText is how Weaviate 1.38 says a tenant does not exist, in
// REST and GraphQL errors alike; TestMissingTenantIsEmpty pins it.
const tenantNotFoundText = "tenant not found"

// graphql runs one GraphQL query and decodes its data into out. A query that
// hit a missing tenant returns errTenantNotFound.
func (c *client) graphql(ctx context.Context, query string, out any) error {
	var resp struct {
		Data   json.RawMessage `json:"data"`
		Errors []graphQLError  `json:"errors"`
	}
	if err := c.do(ctx, http.MethodPost, "/v1/graphql", nil, map[string]string{"query": query}, &resp); err != nil {
		return err
	}
	if len(resp.Errors) > 0 {
		msgs := make([]string, len(resp.Errors))
		for i, e := range resp.Errors {
			msgs[i] = e.Message
			if strings.Contains(e.Message, tenantNotFoundText) {
				return errTenantNotFound
			}
		}
		return &StatusError{Method: http.MethodPost, Path: "/v1/graphql", Code: http.StatusOK,
			Message: c.clean(strings.Join(msgs, "; "))}
	}
	if out == nil {
		return nil
	}
	if err := json.Unmarshal(resp.Data, out); err != nil {
		return fmt.Errorf("weaviate graphql: decode answer %s: %w", httpjson.Preview(resp.Data), err)
	}
	return nil
}
