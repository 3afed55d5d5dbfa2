package store

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/engram-memory/engram/memory"
)

// readOnlyChildEnv names the store a re-executed test binary checks as an
// unprivileged user (permissions do not apply to root).
const readOnlyChildEnv = "ENGRAM_STORE_READONLY_CHILD"

// TestReadOnly: a store this process may not write (the file 0444, or its
// directory 0555) opens read-only: every memory reads and scans, and a write
// fails with ErrReadOnly, instead of "attempt to write a readonly database"
// on open. As root the check runs in a copy of this test binary as user
// nobody.
func TestReadOnly(t *testing.T) {
	for _, c := range []struct {
		name string
		lock func(dir, path string) error
	}{
		{"file 0444", func(_, path string) error { return os.Chmod(path, 0o444) }},
		{"directory 0555", func(dir, _ string) error { return os.Chmod(dir, 0o555) }},
	} {
		t.Run(c.name, func(t *testing.T) {
			root, err := os.MkdirTemp("", "engram-ro-")
			if err != nil {
				t.Fatal(err)
			}
			dir := filepath.Join(root, "store")
			os.Mkdir(dir, 0o755)
			t.Cleanup(func() { os.Chmod(dir, 0o755); os.RemoveAll(root) })
			path := filepath.Join(dir, "e.db")
			s, err := Open(context.Background(), path)
			if err != nil {
				t.Fatal(err)
			}
			if _, _, err := s.Put(context.Background(), nil, []*memory.Memory{testMemory("a"), testMemory("b")}); err != nil {
				t.Fatal(err)
			}
			s.Close()
			os.Chmod(root, 0o755)
			os.Chmod(path, 0o644)
			if err := c.lock(dir, path); err != nil {
				t.Fatal(err)
			}
			if os.Geteuid() != 0 {
				if err := checkReadOnly(path); err != nil {
					t.Fatal(err)
				}
				return
			}
			setpriv, err := exec.LookPath("setpriv")
			if err != nil {
				t.Skip("running as root without setpriv: permissions cannot be tested")
			}
			bin := filepath.Join(root, "store.test")
			if err := copyFile(os.Args[0], bin, 0o755); err != nil {
				t.Fatal(err)
			}
			cmd := exec.Command(setpriv, "--reuid=65534", "--regid=65534", "--clear-groups", bin, "-test.run=^$")
			cmd.Env = append(os.Environ(), readOnlyChildEnv+"="+path, "HOME="+root)
			out, err := cmd.CombinedOutput()
			if err != nil {
				t.Fatalf("as user nobody: %v\n%s", err, out)
			}
		})
	}
}

// readOnlyChild is the re-executed binary's check.
func readOnlyChild() int {
	if err := checkReadOnly(os.Getenv(readOnlyChildEnv)); err != nil {
		fmt.Println(err)
		return 1
	}
	return 0
}

func checkReadOnly(path string) error {
	ctx := context.Background()
	s, err := Open(ctx, path)
	if err != nil {
		return fmt.Errorf("open: %w", err)
	}
	defer s.Close()
	if !s.ReadOnly() {
		return fmt.Errorf("not opened read-only")
	}
	n := 0
	if err := s.Scan(ctx, func(*memory.Memory) error { n++; return nil }, nil); err != nil || n != 2 {
		return fmt.Errorf("scan: %d memories, %v", n, err)
	}
	if _, _, err := s.Put(ctx, nil, []*memory.Memory{testMemory("c")}); !errors.Is(err, ErrReadOnly) {
		return fmt.Errorf("a write: %v, want ErrReadOnly", err)
	}
	return nil
}

func copyFile(from, to string, perm os.FileMode) error {
	in, err := os.Open(from)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.OpenFile(to, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, perm)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}
