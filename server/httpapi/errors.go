package httpapi

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"github.com/engram-memory/engram/backend/sqlite"
	"net/http"
	"syscall"

	"github.com/engram-memory/engram"
	"github.com/engram-memory/engram/backend"
	"github.com/engram-memory/engram/memory"
)

// Error codes: stable, part of the API contract.
const (
	CodeBadRequest       = "bad_request"
	CodeInvalidJSON      = "invalid_json"
	CodeUnknownField     = "unknown_field"
	CodeNotFound         = "not_found"
	CodeUnauthorized     = "unauthorized"
	CodeForbidden        = "forbidden"
	CodeTooLarge         = "too_large"
	CodeMethodNotAllowed = "method_not_allowed"
	CodeTimeout          = "timeout"
	CodeUnavailable      = "unavailable"
	CodeInternal         = "internal"
	// CodeAmbiguous: the id names several memories in scopes below the
	// caller's and none in its own; the request names one with ?scope=.
	CodeAmbiguous = "ambiguous"
	// CodeUnsupportedMediaType: a body sent as text/plain or a form, which a
	// browser may send cross-site without asking; JSON is application/json.
	CodeUnsupportedMediaType = "unsupported_media_type"
	// CodeInsufficientStorage: a write the store's disk cannot hold (507);
	// nothing of it was stored, and it succeeds once there is room.
	CodeInsufficientStorage = "insufficient_storage"
)

// Error is an API error as it travels: {"error": {"code", "message"}}.
type Error struct {
	Status  int    `json:"-"`
	Code    string `json:"code"`
	Message string `json:"message"`
}

func (e *Error) Error() string { return e.Message }

// ErrorBody is the JSON body of every error response.
type ErrorBody struct {
	Error *Error `json:"error"`
}

func errorf(status int, code, format string, a ...any) *Error {
	return &Error{Status: status, Code: code, Message: fmt.Sprintf(format, a...)}
}

// toError maps an error from the store or a decoder to its API error. ok is
// false for errors that are the server's fault, whose detail is only logged.
func toError(err error) (e *Error, ok bool) {
	var ae *Error
	var mb *http.MaxBytesError
	switch {
	case errors.As(err, &ae):
		return ae, true
	case errors.As(err, &mb):
		return errorf(http.StatusRequestEntityTooLarge, CodeTooLarge, "request body is larger than %d bytes", mb.Limit), true
	case errors.Is(err, engram.ErrScope):
		return errorf(http.StatusForbidden, CodeForbidden, "%s", err.Error()), true
	case errors.Is(err, engram.ErrNotFound):
		return errorf(http.StatusNotFound, CodeNotFound, "%s", err.Error()), true
	case errors.Is(err, memory.ErrAmbiguous):
		return errorf(http.StatusConflict, CodeAmbiguous, "%s", err.Error()), true
	case errors.Is(err, engram.ErrLineTooLong):
		return errorf(http.StatusRequestEntityTooLarge, CodeTooLarge, "%s", err.Error()), true
	case errors.Is(err, engram.ErrInvalid), errors.Is(err, engram.ErrInvalidQuery):
		return errorf(http.StatusBadRequest, CodeBadRequest, "%s", err.Error()), true
	case errors.Is(err, sqlite.ErrFull), errors.Is(err, syscall.ENOSPC):
		// Logged with its detail (the file's path); the client learns why
		// and that the same write is safe to retry once there is room.
		return errorf(http.StatusInsufficientStorage, CodeInsufficientStorage,
			"the store's disk is full: nothing of this write was stored; retry once the server has room"), false
	case errors.Is(err, backend.ErrUnavailable):
		// Logged with its detail (which names the backend's address); the
		// client learns what happened and that a retry is safe.
		return errorf(http.StatusServiceUnavailable, CodeUnavailable, "the store's backend does not answer; nothing was half-written, retry later"), false
	case errors.Is(err, context.DeadlineExceeded):
		return errorf(http.StatusServiceUnavailable, CodeTimeout, "the request took longer than the server allows"), true
	}
	return errorf(http.StatusInternalServerError, CodeInternal, "internal error (details are in the server log)"), false
}

// writeJSON writes v with status. v is encoded first, so a value that cannot
// be encoded (a non-finite number) is answered 500 with an error body, never
// a success status with an empty or cut body.
func writeJSON(w http.ResponseWriter, status int, v any) error {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return fmt.Errorf("encode the answer: %w", err)
	}
	h := w.Header()
	h.Set("Content-Type", "application/json; charset=utf-8")
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	_, _ = w.Write(buf.Bytes()) // the client may be gone; nothing left to tell it
	return nil
}

func writeError(w http.ResponseWriter, e *Error) {
	if e.Status == http.StatusUnauthorized {
		w.Header().Set("WWW-Authenticate", `Bearer realm="engram"`)
	}
	if err := writeJSON(w, e.Status, ErrorBody{Error: e}); err != nil {
		w.WriteHeader(http.StatusInternalServerError)
	}
}
