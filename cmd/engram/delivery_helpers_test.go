package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/engram-memory/engram/internal/golden"
)

// checkGolden compares got with testdata/path (go test -update rewrites it).
func checkGolden(tb testing.TB, path, got string) {
	tb.Helper()
	golden.Check(tb, filepath.Join("testdata", path), []byte(got))
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
	return storeOf(tb, "memories.jsonl")
}

// longStore is deliveryStore for testdata/delivery/long.jsonl: memories of
// 750 to 1,850 characters, as long as the budgets that deliver them.
func longStore(tb testing.TB) string {
	tb.Helper()
	return storeOf(tb, "long.jsonl")
}

func storeOf(tb testing.TB, file string) string {
	tb.Helper()
	tb.Setenv("ENGRAM_EMBEDDER", "")
	tb.Setenv("ENGRAM_SCOPE", "")
	tb.Setenv("ENGRAM_URL", "")
	db := filepath.Join(tb.TempDir(), "delivery.db")
	data, err := os.ReadFile(filepath.Join("testdata", "delivery", file))
	if err != nil {
		tb.Fatal(err)
	}
	if _, errs, code := engramRun(tb, string(data), "--db", db, "import", "-"); code != 0 {
		tb.Fatalf("import: exit %d: %s", code, errs)
	}
	return db
}
