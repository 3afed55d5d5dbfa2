//go:build unix

package main

import (
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
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
