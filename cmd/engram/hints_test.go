package main

import (
	"path/filepath"
	"strings"
	"testing"
)

// TestCLIHints: what the library reports without naming a flag (a missing
// provider, memories without vectors, invalid import lines, an embedder that
// failed on add) gets the CLI's hint on stderr; --json output gets none.
func TestCLIHints(t *testing.T) {
	db := filepath.Join(t.TempDir(), "a.db")
	t.Setenv("ENGRAM_EMBEDDER", "ollama")
	t.Setenv("ENGRAM_EMBED_URL", "http://127.0.0.1:9") // discard port: nothing answers
	t.Setenv("ENGRAM_EMBED_MODEL", "x")
	_, stderr, code := cli(t, db, "", "add", "the deploy checklist lives in the wiki")
	if code != 0 || !strings.Contains(stderr, "stored without vectors") || !strings.Contains(stderr, "hint: run engram reindex") {
		t.Fatalf("add with a failing embedder: exit %d, stderr %q", code, stderr)
	}

	t.Setenv("ENGRAM_EMBEDDER", "") // the built-in model, which no memory has a vector from
	for _, c := range []struct {
		name string
		args []string
		want []string
	}{
		{"no vectors", []string{"search", "deploy"}, []string{"hint: run engram reindex"}},
		{"mmr without vectors", []string{"search", "deploy", "--mmr"}, []string{"hint: run engram reindex"}},
		{"no reranker", []string{"search", "deploy", "--rerank", "--context"}, []string{"ENGRAM_RERANK_URL"}},
		{"json has none", []string{"search", "deploy", "--rerank", "--json"}, nil},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, stderr, code := cli(t, db, "", c.args...)
			if code != 0 {
				t.Fatalf("exit %d, stderr %q", code, stderr)
			}
			if c.want == nil && stderr != "" {
				t.Fatalf("stderr %q, want none", stderr)
			}
			for _, w := range c.want {
				if !strings.Contains(stderr, w) {
					t.Fatalf("stderr %q lacks %q", stderr, w)
				}
			}
			if n := strings.Count(stderr, "hint: run engram reindex"); n > 1 {
				t.Fatalf("the reindex hint %d times: %q", n, stderr)
			}
		})
	}
	_, stderr, code = cli(t, db, "{\"text\":\"ok\"}\n{\"text\": 5}\n", "import", "-")
	if code != 2 || strings.Count(stderr, "\n") != 1 || !strings.Contains(stderr, "line 2") || !strings.Contains(stderr, "--skip-invalid") {
		t.Fatalf("invalid import: exit %d, stderr %q", code, stderr)
	}
}

// TestHydeHint: a search asked for HyDE with no LLM configured says which
// variables configure one.
func TestHydeHint(t *testing.T) {
	t.Setenv("ENGRAM_EMBEDDER", "")
	t.Setenv("ENGRAM_LLM_URL", "")
	db := filepath.Join(t.TempDir(), "a.db")
	mustCLI(t, db, "", "add", "the deploy checklist lives in the wiki")
	_, stderr, code := cli(t, db, "", "search", "deploy", "--hyde")
	if code != 0 || !strings.Contains(stderr, "ENGRAM_LLM_URL") {
		t.Fatalf("exit %d, stderr %q", code, stderr)
	}
}
