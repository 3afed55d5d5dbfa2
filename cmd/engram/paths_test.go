package main

import (
	"strings"
	"testing"

	"github.com/engram-memory/engram/memory"
)

// TestCwdScopeOneValue: --cwd-scope takes the working directory's name as
// one value: a directory named "a=b" is project=a=b, and one named "b,c=d"
// (which no scope value may hold) is refused, never split into two keys.
func TestCwdScopeOneValue(t *testing.T) {
	t.Setenv("ENGRAM_SCOPE", "")
	for _, c := range []struct {
		cwd  string
		want map[string]string
		err  string
	}{
		{"/work/engram", map[string]string{"team": "t1", "project": "engram"}, ""},
		{"/work/a=b", map[string]string{"team": "t1", "project": "a=b"}, ""},
		{"/work/b,c=d", nil, "must be non-empty without ','"},
	} {
		f := &hookFlags{scope: []string{"team=t1"}, cwdScope: "project"}
		got, err := f.filter(c.cwd)
		if c.err != "" {
			if err == nil || !strings.Contains(err.Error(), c.err) {
				t.Errorf("cwd %s: %v, %v; want an error saying %q", c.cwd, got.Scope, err, c.err)
			}
			continue
		}
		if err != nil || memory.ScopeJSON(got.Scope) != memory.ScopeJSON(c.want) {
			t.Errorf("cwd %s: %v, %v; want %v", c.cwd, got.Scope, err, c.want)
		}
	}
}
