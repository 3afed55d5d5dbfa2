package mcpserver

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
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
		if r.Method == http.MethodPost {
			// A body that is not JSON gets a JSON-RPC parse error (the SDK
			// answers it with plain text); the rest is the SDK's to judge.
			data, err := io.ReadAll(r.Body)
			if err != nil {
				var mb *http.MaxBytesError
				if errors.As(err, &mb) {
					writeRPCError(w, http.StatusRequestEntityTooLarge, jsonrpc.CodeInvalidRequest, fmt.Sprintf("invalid request: the body is larger than %d bytes", mb.Limit))
					return
				}
				writeRPCError(w, http.StatusBadRequest, jsonrpc.CodeParseError, "parse error: reading the body: "+err.Error())
				return
			}
			if !json.Valid(data) {
				writeRPCError(w, http.StatusBadRequest, jsonrpc.CodeParseError, "parse error: the body is not JSON")
				return
			}
			r.Body = io.NopCloser(bytes.NewReader(data))
		}
		sdk.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), backendKey{}, b)))
	})
}

// Fixed returns a Resolver that gives every request b (no keys).
func Fixed(b Backend) Resolver {
	return func(*http.Request) (Backend, error) { return b, nil }
}

type backendKey struct{}

// writeRPCError answers with a JSON-RPC error (id null: the request's id is
// unknown), as a JSON-RPC client expects of an MCP endpoint.
func writeRPCError(w http.ResponseWriter, status int, code int64, msg string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(struct {
		JSONRPC string        `json:"jsonrpc"`
		ID      any           `json:"id"`
		Error   jsonrpc.Error `json:"error"`
	}{"2.0", nil, jsonrpc.Error{Code: code, Message: msg}})
}

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
