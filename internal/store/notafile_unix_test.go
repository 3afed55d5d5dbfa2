//go:build unix

package store

import (
	"context"
	"errors"
	"path/filepath"
	"syscall"
	"testing"
)

// TestOpenNotAFile: paths that are not regular files are refused at once
// with ErrBadPath, a FIFO included (opening one would block forever).
func TestOpenNotAFile(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "fifo")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{fifo, "/dev/null", dir} {
		s, err := Open(context.Background(), p)
		if err == nil {
			s.Close()
			t.Fatalf("Open(%s) succeeded", p)
		}
		if !errors.Is(err, ErrBadPath) {
			t.Fatalf("Open(%s) = %v, want ErrBadPath", p, err)
		}
	}
}
