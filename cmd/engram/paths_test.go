package main

import (
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/engram-memory/engram/memory"
)

// TestDBNotAFile: --db naming a FIFO, /dev/null or a directory exits 2 at
// once with one line naming the path (before: a FIFO hung, the others exited
// 1).
func TestDBNotAFile(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "fifo")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{fifo, "/dev/null", dir} {
		done := make(chan struct{})
		var errs string
		var code int
		go func() {
			defer close(done)
			_, errs, code = cli(t, p, "", "stats")
		}()
		select {
		case <-done:
		case <-time.After(30 * time.Second):
			t.Fatalf("--db %s: still running after 30s", p)
		}
		if code != 2 || !strings.Contains(errs, p) || strings.Count(strings.TrimSpace(errs), "\n") != 0 {
			t.Errorf("--db %s: exit %d, stderr %q; want exit 2 and one line naming it", p, code, errs)
		}
	}
}

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
