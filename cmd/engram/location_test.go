package main

import (
	"path/filepath"
	"strings"
	"testing"
)

// TestSQLiteURL: --db and $ENGRAM_DB may name the SQLite file as
// sqlite:///path, as the library's Open reads it: the same file as the plain
// path, and a command that needs an existing store says which file is
// missing.
func TestSQLiteURL(t *testing.T) {
	t.Setenv("ENGRAM_EMBEDDER", "none")
	t.Setenv(DaemonEnv, "off")
	path := filepath.Join(t.TempDir(), "u.db")
	url := "sqlite://" + path
	id := strings.TrimSpace(mustCLI(t, url, "", "add", "the deploy key lives in the vault"))
	if out := mustCLI(t, path, "", "get", id); !strings.Contains(out, "deploy key") {
		t.Fatalf("get through the plain path: %q", out)
	}
	t.Setenv("ENGRAM_DB", url)
	if out, errs, code := runCLI(t, "search", "vault"); code != 0 || !strings.Contains(out, "deploy key") {
		t.Fatalf("search with $ENGRAM_DB=%s: exit %d: %s%s", url, code, out, errs)
	}
	missing := "sqlite://" + filepath.Join(t.TempDir(), "none.db")
	_, errs, code := cli(t, missing, "", "list")
	if code != 2 || !strings.Contains(errs, "no store at "+strings.TrimPrefix(missing, "sqlite://")) {
		t.Fatalf("list of a missing sqlite:// store: exit %d: %s", code, errs)
	}
}
