package mcpserver

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Resolver gives the backend an HTTP request may use: typically it checks the
// request's bearer key and returns the key's scoped view of the store. An
// error refuses the request (see HTTPHandler).
type Resolver func(r *http.Request) (Backend, error)

// HTTPOptions configure HTTPHandler.
type HTTPOptions struct {
	Options
	// MaxBodyBytes bounds a request body; 0 means the SDK's default (4 MiB).
	MaxBodyBytes int64
}

// StatusError lets a Resolver choose the refusal's HTTP status and code.
type StatusError struct {
	Status int    // HTTP status, such as 401 or 403
	Code   string // stable machine code, such as "unauthorized"
	Err    error
}

// Error is the message the refusal carries.
func (e *StatusError) Error() string { return e.Err.Error() }

// Unwrap gives the underlying error to errors.Is and errors.As.
func (e *StatusError) Unwrap() error { return e.Err }

// HTTPHandler serves MCP over streamable HTTP, to be mounted at /mcp. Each
// request is resolved to its own backend first, so a key's scope holds for
// every tool call made with it, and a session id gives no access to another
// caller's view: the handler is stateless (one short-lived server per
// request, tool schemas shared). A resolver error answers
// {"error": {"code", "message"}} with the StatusError's status, else 401.
func HTTPHandler(resolve Resolver, opts HTTPOptions) http.Handler {
	if opts.SchemaCache == nil {
		opts.SchemaCache = mcp.NewSchemaCache()
	}
	sdk := mcp.NewStreamableHTTPHandler(func(r *http.Request) *mcp.Server {
		b, ok := r.Context().Value(backendKey{}).(Backend)
		if !ok {
			return nil // not reached: ServeHTTP always sets it
		}
		return New(b, opts.Options)
	}, &mcp.StreamableHTTPOptions{
		Stateless:           true,
		JSONResponse:        true,
		Logger:              opts.Logger,
		MaxRequestBodyBytes: opts.MaxBodyBytes,
	})
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		defer func() {
			if p := recover(); p != nil {
				if p == http.ErrAbortHandler {
					panic(p)
				}
				writeError(w, http.StatusInternalServerError, "internal", fmt.Sprintf("internal error: %v", p))
			}
		}()
		b, err := resolve(r)
		if err != nil {
			status, code := http.StatusUnauthorized, "unauthorized"
			var se *StatusError
			if errors.As(err, &se) {
				status, code = se.Status, se.Code
			}
			writeError(w, status, code, err.Error())
			return
		}
		if b == nil {
			writeError(w, http.StatusInternalServerError, "internal", "no backend for this request")
			return
		}
		sdk.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), backendKey{}, b)))
	})
}

// Fixed returns a Resolver that gives every request b (no keys).
func Fixed(b Backend) Resolver {
	return func(*http.Request) (Backend, error) { return b, nil }
}

type backendKey struct{}

// writeError answers with the API's JSON error shape.
func writeError(w http.ResponseWriter, status int, code, msg string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	type body struct {
		Code    string `json:"code"`
		Message string `json:"message"`
	}
	_ = json.NewEncoder(w).Encode(map[string]body{"error": {Code: code, Message: msg}})
}
