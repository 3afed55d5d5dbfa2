// Package jsonerr words encoding/json's decoding errors the way a JSON
// client thinks: the field, the kind of value expected ("an array of
// strings"), the kind given, never a Go type or struct name.
package jsonerr

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"reflect"
	"strings"
	"time"
)

// Kind names a Go type as a JSON value: "a string", "an integer", "an array
// of strings", "an object".
func Kind(t reflect.Type) string {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if t == reflect.TypeOf(time.Time{}) {
		return "an RFC 3339 time string"
	}
	switch t.Kind() {
	case reflect.Struct, reflect.Map:
		return "an object"
	case reflect.Slice, reflect.Array:
		if t.Name() == "RawMessage" {
			return "a JSON value"
		}
		switch e := Kind(t.Elem()); e {
		case "a string":
			return "an array of strings"
		case "a number":
			return "an array of numbers"
		case "an integer":
			return "an array of integers"
		case "an object":
			return "an array of objects"
		}
		return "an array"
	case reflect.String:
		return "a string"
	case reflect.Bool:
		return "true or false"
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return "an integer"
	case reflect.Float32, reflect.Float64:
		return "a number"
	case reflect.Interface:
		return "a JSON value"
	}
	return "a JSON value"
}

// given words UnmarshalTypeError.Value ("string", "number 1.5", "array").
func given(v string) string {
	switch v {
	case "string", "number":
		return "a " + v
	case "bool":
		return "true or false"
	case "array", "object":
		return "an " + v
	}
	if n, ok := strings.CutPrefix(v, "number "); ok {
		return "the number " + n
	}
	return v
}

// Describe words a decoding error of data (one JSON value) as one line:
// `field "tags": expected an array of strings, got a string`. timeFields
// name the fields that hold times, so that a time that does not parse is
// named by its field. An error it does not know is returned as it is,
// without encoding/json's "json: " prefix.
func Describe(err error, data []byte, timeFields ...string) error {
	var te *json.UnmarshalTypeError
	var se *json.SyntaxError
	var pe *time.ParseError
	switch {
	case errors.As(err, &te):
		if te.Field == "" {
			return fmt.Errorf("expected %s, got %s", Kind(te.Type), given(te.Value))
		}
		return fmt.Errorf("field %q: expected %s, got %s", te.Field, Kind(te.Type), given(te.Value))
	case errors.As(err, &se):
		return fmt.Errorf("invalid JSON at byte %d: %s", se.Offset, strings.TrimPrefix(se.Error(), "json: "))
	case errors.As(err, &pe):
		if f := timeField(data, pe.Value, timeFields); f != "" {
			return fmt.Errorf("field %q: %q is not an RFC 3339 time (such as 2024-03-01T09:30:00Z)", f, pe.Value)
		}
		return fmt.Errorf("%q is not an RFC 3339 time (such as 2024-03-01T09:30:00Z)", pe.Value)
	case strings.HasPrefix(err.Error(), "json: unknown field "):
		return fmt.Errorf("unknown field %s", strings.TrimPrefix(err.Error(), "json: unknown field "))
	case errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF):
		return errors.New("incomplete JSON value")
	}
	if msg, ok := strings.CutPrefix(err.Error(), "json: "); ok {
		return errors.New(msg)
	}
	return err
}

// timeField is the first of fields (top-level, in data's object) whose
// string is value.
func timeField(data []byte, value string, fields []string) string {
	var obj map[string]json.RawMessage
	if json.Unmarshal(data, &obj) != nil {
		return ""
	}
	for _, f := range fields {
		var s string
		if raw, ok := obj[f]; ok && json.Unmarshal(raw, &s) == nil && s == value {
			return f
		}
	}
	return ""
}

// Duplicate returns an error naming the first object key that appears twice
// in the same object of data ("keys[1].key"), or nil. encoding/json keeps
// the last of them silently.
func Duplicate(data []byte) error {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	path, err := duplicate(dec, "")
	if err != nil || path == "" {
		return nil // malformed JSON is the decoder's to describe
	}
	return fmt.Errorf("field %q appears twice in the same object", path)
}

// duplicate reads one value and returns the path of a repeated key in it.
func duplicate(dec *json.Decoder, at string) (string, error) {
	tok, err := dec.Token()
	if err != nil {
		return "", err
	}
	d, ok := tok.(json.Delim)
	if !ok {
		return "", nil
	}
	switch d {
	case '{':
		seen := map[string]bool{}
		for dec.More() {
			kt, err := dec.Token()
			if err != nil {
				return "", err
			}
			k, _ := kt.(string)
			p := k
			if at != "" {
				p = at + "." + k
			}
			if seen[k] {
				return p, nil
			}
			seen[k] = true
			if dup, err := duplicate(dec, p); dup != "" || err != nil {
				return dup, err
			}
		}
	case '[':
		for i := 0; dec.More(); i++ {
			if dup, err := duplicate(dec, fmt.Sprintf("%s[%d]", at, i)); dup != "" || err != nil {
				return dup, err
			}
		}
	}
	_, err = dec.Token() // the closing delimiter
	return "", err
}
