package httpapi

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/engram-memory/engram/internal/jsonerr"
)

// readBody reads a whole request body (already bounded by http.MaxBytesReader).
func readBody(r *http.Request) ([]byte, error) {
	data, err := io.ReadAll(r.Body)
	if err != nil {
		var mb *http.MaxBytesError
		if errors.As(err, &mb) {
			return nil, err
		}
		return nil, errorf(http.StatusBadRequest, CodeBadRequest, "reading the request body: %v", err)
	}
	return data, nil
}

// decodeStrict decodes exactly one JSON value into v: valid UTF-8, no unknown
// fields, nothing after the value. An empty body is an error unless
// allowEmpty, when v is left as it is.
func decodeStrict(data []byte, v any, allowEmpty bool) error {
	if len(bytes.TrimSpace(data)) == 0 {
		if allowEmpty {
			return nil
		}
		return errorf(http.StatusBadRequest, CodeInvalidJSON, "the request body is empty; a JSON object is required")
	}
	if !utf8.Valid(data) {
		return errorf(http.StatusBadRequest, CodeInvalidJSON, "the request body is not valid UTF-8")
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return jsonErrorIn(err, data)
	}
	if _, err := dec.Token(); err != io.EOF {
		return errorf(http.StatusBadRequest, CodeInvalidJSON, "the request body holds more than one JSON value")
	}
	return nil
}

// timeFields are the body fields that hold times, named by an error about one.
var timeFields = []string{"created_at", "updated_at", "demand_at", "occurred_at", "since", "until", "as_of", "now"}

// jsonError classifies an encoding/json error as an API error naming the field.
func jsonError(err error) *Error { return jsonErrorIn(err, nil) }

// jsonErrorIn is jsonError for an error decoding data, whose time fields
// name a time that does not parse.
func jsonErrorIn(err error, data []byte) *Error {
	var se *json.SyntaxError
	var te *json.UnmarshalTypeError
	var pe *time.ParseError
	switch {
	case errors.As(err, &se):
		return errorf(http.StatusBadRequest, CodeInvalidJSON, "invalid JSON at byte %d: %v", se.Offset, se)
	case errors.Is(err, io.ErrUnexpectedEOF), errors.Is(err, io.EOF):
		return errorf(http.StatusBadRequest, CodeInvalidJSON, "invalid JSON: the value is incomplete")
	case errors.As(err, &te):
		return errorf(http.StatusBadRequest, CodeBadRequest, "%s", jsonerr.Describe(err, nil))
	case strings.HasPrefix(err.Error(), "json: unknown field "):
		return errorf(http.StatusBadRequest, CodeUnknownField, "unknown field %s", strings.TrimPrefix(err.Error(), "json: unknown field "))
	case errors.As(err, &pe):
		return errorf(http.StatusBadRequest, CodeBadRequest, "%s", jsonerr.Describe(err, data, timeFields...))
	}
	return errorf(http.StatusBadRequest, CodeBadRequest, "%s", strings.TrimPrefix(err.Error(), "json: "))
}
