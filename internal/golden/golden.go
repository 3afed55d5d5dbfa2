// Package golden compares test output with checked-in files and, when the
// tests run with -update, rewrites those files instead. Only tests import it.
package golden

import (
	"flag"
	"os"
	"path/filepath"
	"testing"
)

var update = flag.Bool("update", false, "rewrite the golden files instead of comparing with them")

// CheckBytes is Check for a binary file: a difference is reported by size
// and first differing offset, not printed.
func CheckBytes(tb testing.TB, path string, got []byte) {
	tb.Helper()
	if *update {
		Check(tb, path, got)
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		tb.Fatalf("read golden file: %v (go test -update creates it)", err)
	}
	if string(got) != string(want) {
		at := 0
		for at < min(len(got), len(want)) && got[at] == want[at] {
			at++
		}
		tb.Errorf("%s differs from what the test computes (%d bytes, want %d; first difference at byte %d): go test -update rewrites it", path, len(got), len(want), at)
	}
}

// Check compares got with the file at path (relative to the test's package
// directory). With -update it writes got there first, creating directories.
func Check(tb testing.TB, path string, got []byte) {
	tb.Helper()
	if *update {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			tb.Fatal(err)
		}
		if err := os.WriteFile(path, got, 0o644); err != nil {
			tb.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		tb.Fatalf("read golden file: %v (go test -update creates it)", err)
	}
	if string(got) != string(want) {
		tb.Errorf("%s differs (go test -update rewrites it after you have checked the change):\n--- got\n%s\n--- want\n%s", path, got, want)
	}
}
