package memory

import (
	"errors"
	"math"
	"reflect"
	"strings"
	"testing"
	"time"
)

func TestParseScope(t *testing.T) {
	cases := []struct {
		name  string
		parts []string
		want  map[string]string
		err   bool
	}{
		{"none", nil, nil, false},
		{"one", []string{"team=t1"}, map[string]string{"team": "t1"}, false},
		{"joined and repeated", []string{"team=t1,user=u7", "project=p"}, map[string]string{"team": "t1", "user": "u7", "project": "p"}, false},
		{"spaces refused, not trimmed", []string{" team = t1 "}, nil, true},
		{"empty parts skipped", []string{"team=t1,,", ""}, map[string]string{"team": "t1"}, false},
		{"same value twice", []string{"team=t1", "team=t1"}, map[string]string{"team": "t1"}, false},
		{"conflict", []string{"team=t1", "team=t2"}, nil, true},
		{"no equals", []string{"team"}, nil, true},
		{"empty key", []string{"=t1"}, nil, true},
		{"empty value", []string{"team="}, nil, true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, err := ParseScope(c.parts...)
			if (err != nil) != c.err {
				t.Fatalf("err = %v, want error %v", err, c.err)
			}
			if err != nil && !errors.Is(err, ErrInvalid) {
				t.Fatalf("err %v is not ErrInvalid", err)
			}
			if !c.err && !reflect.DeepEqual(got, c.want) {
				t.Fatalf("got %v, want %v", got, c.want)
			}
		})
	}
	if s := FormatScope(map[string]string{"user": "u7", "team": "t1"}); s != "team=t1,user=u7" {
		t.Fatalf("FormatScope = %q", s)
	}
}

// TestScopeWhitespace: one rule on every path: a scope key or value with
// surrounding whitespace, a control character or invalid UTF-8 is refused,
// by ParseScope (query strings, flags) and ValidateScope (JSON, imports, key
// files, MCP, the Go API) alike, with one line naming the key and value; a
// row stored before the rule still reads (CheckStoredScope).
func TestScopeWhitespace(t *testing.T) {
	for _, c := range []struct {
		name   string
		scope  map[string]string
		parsed string // the same scope as ParseScope's input
		says   string // what the error names; "" for valid
	}{
		{"plain", map[string]string{"team": "a"}, "team=a", ""},
		{"inner space", map[string]string{"team": "a b"}, "team=a b", ""},
		{"trailing space in a value", map[string]string{"team": "a "}, "team=a ", `team="a "`},
		{"leading space in a value", map[string]string{"team": " a"}, "team= a", `team=" a"`},
		{"tab in a value", map[string]string{"team": "a\t"}, "team=a\t", `team="a\t"`},
		{"newline inside a value", map[string]string{"team": "a\nb"}, "team=a\nb", `team="a\nb"`},
		{"NUL in a value", map[string]string{"team": "a\x00"}, "team=a\x00", `team="a\x00"`},
		{"no-break space around a value", map[string]string{"team": "a\u00a0"}, "team=a\u00a0", `team="a\u00a0"`},
		{"invalid UTF-8", map[string]string{"team": "a\xff"}, "team=a\xff", `team="a\xff"`},
		{"space around a key", map[string]string{"team ": "a"}, "team =a", `"team "`},
		{"control in a key", map[string]string{"te\x01am": "a"}, "te\x01am=a", `"te\x01am"`},
		{"space after a comma", map[string]string{"team": "a", " user": "u"}, "team=a, user=u", `" user"`},
	} {
		t.Run(c.name, func(t *testing.T) {
			for _, err := range []error{ValidateScope(c.scope), func() error { _, err := ParseScope(c.parsed); return err }()} {
				switch {
				case c.says == "" && err != nil:
					t.Fatalf("valid scope %q refused: %v", c.scope, err)
				case c.says != "" && (err == nil || !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), c.says) || strings.Contains(err.Error(), "\n")):
					t.Fatalf("scope %q: err %v, want one line naming %s", c.scope, err, c.says)
				}
			}
		})
	}
	// Rows written before the rule still read, so they can be listed,
	// moved and deleted; what was refused then still is.
	for _, sc := range []map[string]string{{"team": "a "}, {"team": " a"}, {"team": "a\tb"}} {
		if err := CheckStoredScope(sc); err != nil {
			t.Errorf("stored scope %q no longer reads: %v", sc, err)
		}
	}
	if err := CheckStoredScope(map[string]string{"a,b": "c"}); !errors.Is(err, ErrInvalid) {
		t.Errorf("stored scope key with a comma: %v", err)
	}
}

func TestNormalize(t *testing.T) {
	cases := []struct {
		name string
		m    Memory
		err  bool
		want Memory
	}{
		{"defaults", Memory{Text: "x", Tags: []string{" b", "a", "b", ""}}, false, Memory{Text: "x", Type: DefaultType, Tags: []string{"a", "b"}}},
		{"empty text", Memory{Text: "  "}, true, Memory{}},
		{"metadata array", Memory{Text: "x", Metadata: []byte(`[1]`)}, true, Memory{}},
		{"metadata object", Memory{Text: "x", Metadata: []byte(`{"a":1}`)}, false, Memory{Text: "x", Type: DefaultType, Metadata: []byte(`{"a":1}`)}},
		{"bad scope", Memory{Text: "x", Scope: map[string]string{"a,b": "c"}}, true, Memory{}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			m := c.m
			err := m.Normalize()
			if (err != nil) != c.err {
				t.Fatalf("err = %v, want error %v", err, c.err)
			}
			if !c.err && !reflect.DeepEqual(m, c.want) {
				t.Fatalf("got %+v, want %+v", m, c.want)
			}
		})
	}
}

func TestDemandDecay(t *testing.T) {
	at := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	m := Memory{Demand: 4, DemandAt: &at}
	cases := []struct {
		after time.Duration
		want  float64
	}{{0, 4}, {DemandHalfLife, 2}, {2 * DemandHalfLife, 1}, {-time.Hour, 4}}
	for _, c := range cases {
		if got := m.DemandNow(at.Add(c.after)); math.Abs(got-c.want) > 1e-12 {
			t.Errorf("after %v: demand %v, want %v", c.after, got, c.want)
		}
	}
	if (&Memory{}).DemandNow(at) != 0 {
		t.Error("a memory never used has demand")
	}
}

func TestEmbedTextAndHash(t *testing.T) {
	a := Memory{Name: "n", Text: "t"}
	b := Memory{Name: "n", Description: " ", Text: "t"}
	if a.EmbedText() != "n\nt" || a.ComputeHash() != b.ComputeHash() {
		t.Fatalf("EmbedText %q, hashes %s %s", a.EmbedText(), a.ComputeHash(), b.ComputeHash())
	}
	if a.ComputeHash() == (&Memory{Text: "n t"}).ComputeHash() {
		t.Fatal("different texts share a hash")
	}
}

// TestResultOf: every field a result shows comes from the memory, and the
// search evidence is left empty.
func TestResultOf(t *testing.T) {
	at := time.Date(2026, 11, 30, 8, 0, 0, 0, time.UTC)
	m := &Memory{ID: "01A", Name: "n", Description: "d", Text: "t", Type: "fact", Scene: "s",
		Scope: map[string]string{"team": "t1"}, Tags: []string{"a"}, Source: "src", Favorite: true, CreatedAt: at,
		UpdatedAt: at.Add(time.Hour), Uses: 3, Metadata: []byte(`{"k":1}`)}
	want := Result{ID: "01A", Name: "n", Description: "d", Text: "t", Type: "fact", Scene: "s",
		Scope: map[string]string{"team": "t1"}, Tags: []string{"a"}, Source: "src", Favorite: true, CreatedAt: at}
	if got := ResultOf(m); !reflect.DeepEqual(got, want) {
		t.Fatalf("ResultOf = %+v, want %+v", got, want)
	}
}
