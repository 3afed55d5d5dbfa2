package jsonerr

import (
	"encoding/json"
	"testing"
	"time"
)

type doc struct {
	Text     string            `json:"text"`
	Tags     []string          `json:"tags"`
	Uses     int64             `json:"uses"`
	Favorite bool              `json:"favorite"`
	Vector   []float32         `json:"vector"`
	Scope    map[string]string `json:"scope"`
	At       time.Time         `json:"created_at"`
	Inner    struct {
		N int `json:"n"`
	} `json:"inner"`
}

// TestDescribe: decoding errors name the field and the kinds of JSON value
// expected and given, never a Go type ("[]string", "Go struct field").
func TestDescribe(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{`{"text": 5}`, `field "text": expected a string, got a number`},
		{`{"tags": "x"}`, `field "tags": expected an array of strings, got a string`},
		{`{"uses": 1.5}`, `field "uses": expected an integer, got the number 1.5`},
		{`{"favorite": "yes"}`, `field "favorite": expected true or false, got a string`},
		{`{"vector": "x"}`, `field "vector": expected an array of numbers, got a string`},
		{`{"scope": {"a": 1}}`, `field "scope": expected a string, got a number`}, // a value of the map
		{`{"inner": {"n": "3"}}`, `field "inner.n": expected an integer, got a string`},
		{`[1]`, `expected an object, got an array`},
		{`{"created_at": "yesterday"}`, `field "created_at": "yesterday" is not an RFC 3339 time (such as 2024-03-01T09:30:00Z)`},
		{`{"text": }`, `invalid JSON at byte 10: invalid character '}' looking for beginning of value`},
	} {
		var d doc
		err := json.Unmarshal([]byte(c.in), &d)
		if err == nil {
			t.Fatalf("%s decoded", c.in)
		}
		if got := Describe(err, []byte(c.in), "created_at").Error(); got != c.want {
			t.Errorf("%s:\n got %s\nwant %s", c.in, got, c.want)
		}
	}
}

// TestDuplicate: a field given twice in one object is named by its path;
// the same name in different objects is not a repeat.
func TestDuplicate(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{`{"keys": [{"key": "a"}, {"key": "b"}]}`, ""},
		{`{"keys": [{"key": "a"}, {"key": "b", "key": "c"}]}`, `field "keys[1].key" appears twice in the same object`},
		{`{"a": {"b": 1}, "b": {"a": [1, {"x": 1, "x": 2}]}}`, `field "b.a[1].x" appears twice in the same object`},
		{`{"a": 1, "a": 1}`, `field "a" appears twice in the same object`},
		{`{"a": `, ""}, // malformed: the decoder says so
		{`[]`, ""},
	} {
		err := Duplicate([]byte(c.in))
		if got := ""; err != nil {
			got = err.Error()
			if got != c.want {
				t.Errorf("%s: %q, want %q", c.in, got, c.want)
			}
		} else if c.want != "" {
			t.Errorf("%s: no error, want %q", c.in, c.want)
		}
	}
}
