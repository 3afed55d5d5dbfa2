package main

import (
	"bytes"
	"context"
	"flag"
	"os"
	"path/filepath"
	"testing"
)

// The golden-file flag may also be defined by another test file of this
// package; package-level variables initialise before init, so look it up.
func init() {
	if flag.Lookup("update") == nil {
		flag.Bool("update", false, "rewrite golden files")
	}
}

func updatingGolden() bool {
	f := flag.Lookup("update")
	return f != nil && f.Value.String() == "true"
}

// checkGolden compares got with testdata/path, rewriting it under -update.
func checkGolden(tb testing.TB, path, got string) {
	tb.Helper()
	path = filepath.Join("testdata", path)
	if updatingGolden() {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			tb.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			tb.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		tb.Fatalf("read golden (run with -update to create): %v", err)
	}
	if got != string(want) {
		tb.Errorf("%s differs from golden:\n--- got ---\n%s\n--- want ---\n%s", path, got, want)
	}
}

// engramRun runs one command line and returns stdout, stderr and the exit code.
func engramRun(tb testing.TB, stdin string, args ...string) (string, string, int) {
	tb.Helper()
	var out, errb bytes.Buffer
	code := run(context.Background(), args, bytes.NewBufferString(stdin), &out, &errb)
	return out.String(), errb.String(), code
}

// deliveryStore is a fresh store holding testdata/delivery/memories.jsonl
// (fixed ids and times), with the environment pinned for stable output.
func deliveryStore(tb testing.TB) string {
	tb.Helper()
	tb.Setenv("ENGRAM_EMBEDDER", "")
	tb.Setenv("ENGRAM_SCOPE", "")
	tb.Setenv("ENGRAM_URL", "")
	db := filepath.Join(tb.TempDir(), "delivery.db")
	data, err := os.ReadFile(filepath.Join("testdata", "delivery", "memories.jsonl"))
	if err != nil {
		tb.Fatal(err)
	}
	if _, errs, code := engramRun(tb, string(data), "--db", db, "import", "-"); code != 0 {
		tb.Fatalf("import: exit %d: %s", code, errs)
	}
	return db
}
