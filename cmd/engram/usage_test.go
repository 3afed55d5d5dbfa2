package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/spf13/cobra"
)

// TestMissingStore: a command that reads or changes stored memories exits 2
// with one line naming the path and creates nothing; only writes create a
// store (issue 13: engram --db typo.db export wrote a 0-byte backup and
// exit 0).
func TestMissingStore(t *testing.T) {
	t.Setenv("ENGRAM_EMBEDDER", "none")
	t.Setenv("ENGRAM_URL", "")
	for _, c := range []struct {
		name  string
		args  []string
		stdin string
	}{
		{"export", []string{"export"}, ""},
		{"search", []string{"search", "deploy"}, ""},
		{"get", []string{"get", "01ABC"}, ""},
		{"stats", []string{"stats"}, ""},
		{"brief", []string{"brief"}, ""},
		{"inject", []string{"inject", "how do we deploy"}, ""},
		{"list", []string{"list"}, ""},
		{"delete", []string{"delete", "01ABC"}, ""},
		{"delete by scope", []string{"delete", "--scope", "user=u7"}, ""},
		{"touch", []string{"touch", "01ABC"}, ""},
		{"update", []string{"update", "01ABC", "--text", "x"}, ""},
		{"favorite", []string{"favorite", "01ABC"}, ""},
		{"reindex", []string{"reindex"}, ""},
		{"search batch", []string{"search", "--batch", "-"}, `{"query": "x"}`},
	} {
		t.Run(c.name, func(t *testing.T) {
			db := filepath.Join(t.TempDir(), "typo.db")
			out, errs, code := cli(t, db, c.stdin, c.args...)
			if code != 2 || out != "" || strings.Count(errs, "\n") != 1 || !strings.Contains(errs, "no store at "+db) {
				t.Fatalf("exit %d, stdout %q, stderr %q; want exit 2 and one line naming %s", code, out, errs, db)
			}
			if _, err := os.Stat(db); !os.IsNotExist(err) {
				t.Fatalf("%s created the store (%v)", c.name, err)
			}
		})
	}
	t.Run("hooks say so on stderr and exit 0", func(t *testing.T) {
		db := filepath.Join(t.TempDir(), "typo.db")
		out, errs, code := cli(t, db, `{"hook_event_name":"SessionStart"}`, "hook", "claude-code", "session-start")
		if code != 0 || out != "" || !strings.Contains(errs, "no store at") {
			t.Fatalf("exit %d, stdout %q, stderr %q", code, out, errs)
		}
	})
	for _, w := range [][]string{{"add", "a first memory"}, {"import", "-"}} {
		t.Run(w[0]+" creates the store", func(t *testing.T) {
			db := filepath.Join(t.TempDir(), "new.db")
			if _, errs, code := cli(t, db, `{"text": "imported"}`+"\n", w...); code != 0 {
				t.Fatalf("exit %d: %s", code, errs)
			}
			if _, err := os.Stat(db); err != nil {
				t.Fatal(err)
			}
		})
	}
}

// TestCLIUsage: add - reads standard input, search and inject join their
// words, delete and touch act on every id that exists and name the missing
// ones (exit 2), and an unknown command is one line without a doubled
// prefix.
func TestCLIUsage(t *testing.T) {
	t.Setenv("ENGRAM_EMBEDDER", "none")
	t.Setenv("ENGRAM_URL", "")
	db := filepath.Join(t.TempDir(), "u.db")
	good := strings.TrimSpace(mustCLI(t, db, "", "add", "The deploy key lives in the vault"))
	long := strings.Repeat("a long memory line. ", 800) // 16,000 characters, more than an argument should carry
	cases := []struct {
		name       string
		stdin      string
		args       []string
		code       int
		stdout     string // a part of stdout
		stderr     string // a part of stderr ("" for none)
		afterCheck func(t *testing.T)
	}{
		{name: "add - reads stdin", stdin: "text from a pipe\n", args: []string{"add", "-", "--name", "piped"}, stdout: "01",
			afterCheck: func(t *testing.T) {
				if out := mustCLI(t, db, "", "search", "pipe", "--json", "--no-record"); !strings.Contains(out, `"text": "text from a pipe"`) {
					t.Fatalf("stored text: %s", out)
				}
			}},
		{name: "add - takes long text", stdin: long, args: []string{"add", "-"}, stdout: "01"},
		{name: "add - of nothing", stdin: "\n", args: []string{"add", "-"}, code: 2, stderr: "standard input is empty"},
		{name: "add of two words unquoted", args: []string{"add", "two", "words"}, code: 2, stderr: "quote it, or give -"},
		{name: "add the same text again", args: []string{"add", "The deploy key lives in the vault"}, stdout: good, stderr: "not stored again: memory " + good},
		{name: "search joins its words", args: []string{"search", "deploy", "key", "--no-record"}, stdout: good},
		{name: "inject joins its words", args: []string{"inject", "where", "is", "the", "deploy", "key", "--no-record"}, stdout: "deploy key"},
		{name: "delete good and missing", args: []string{"delete", good, "01MISSING"}, code: 2, stdout: "deleted 1",
			stderr: "not found: 01MISSING (the others were deleted)",
			afterCheck: func(t *testing.T) {
				if _, _, code := cli(t, db, "", "get", good); code != 2 {
					t.Fatalf("the good id was not deleted")
				}
			}},
		{name: "touch good and missing", args: []string{"touch", "01MISSING", "T1"}, code: 2, stdout: "touched T1",
			stderr: "not found: 01MISSING (the others were touched)",
			afterCheck: func(t *testing.T) {
				var m struct{ Uses int }
				if out := mustCLI(t, db, "", "get", "T1"); json.Unmarshal([]byte(out), &m) != nil || m.Uses != 1 {
					t.Fatalf("the good id was not touched: %s", out)
				}
			}},
		{name: "touch missing only", args: []string{"touch", "01MISSING"}, code: 2, stderr: "not found: 01MISSING"},
		{name: "unknown command", args: []string{"serch", "x"}, code: 2, stderr: `engram: unknown command "serch" (did you mean`},
		{name: "version", args: []string{"--version"}, stdout: "engram "},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if c.name == "touch good and missing" {
				mustCLI(t, db, `{"id": "T1", "text": "touch me"}`+"\n", "import", "-")
			}
			out, errs, code := cli(t, db, c.stdin, c.args...)
			if code != c.code {
				t.Fatalf("exit %d, want %d (stdout %q, stderr %q)", code, c.code, out, errs)
			}
			if !strings.Contains(out, c.stdout) {
				t.Fatalf("stdout %q lacks %q", out, c.stdout)
			}
			if c.stderr == "" && errs != "" || !strings.Contains(errs, c.stderr) {
				t.Fatalf("stderr %q, want %q", errs, c.stderr)
			}
			if strings.Contains(errs, "engram: engram:") || (c.code == 2 && strings.Count(errs, "\n") != 1) {
				t.Fatalf("stderr is not one clean line: %q", errs)
			}
			if c.afterCheck != nil {
				c.afterCheck(t)
			}
		})
	}
}

// TestGetShowsModelNotVector: get names the embedding's model and dimension;
// --vector prints the vector too.
func TestGetShowsModelNotVector(t *testing.T) {
	t.Setenv("ENGRAM_EMBEDDER", "")
	t.Setenv("ENGRAM_URL", "")
	db := filepath.Join(t.TempDir(), "g.db")
	id := strings.TrimSpace(mustCLI(t, db, "", "add", "The deploy key lives in the vault"))
	var m struct{ Embedding map[string]any }
	out := mustCLI(t, db, "", "get", id)
	if err := json.Unmarshal([]byte(out), &m); err != nil {
		t.Fatal(err)
	}
	if m.Embedding["model"] != "bge-small-en-v1.5.2-v2" || m.Embedding["dim"] != float64(384) || m.Embedding["vector"] != nil {
		t.Fatalf("get: embedding %v", m.Embedding)
	}
	if strings.Count(out, "\n") > 20 {
		t.Fatalf("get prints %d lines", strings.Count(out, "\n"))
	}
	if err := json.Unmarshal([]byte(mustCLI(t, db, "", "get", id, "--vector")), &m); err != nil || len(m.Embedding["vector"].([]any)) != 384 {
		t.Fatalf("get --vector: %v %v", err, m.Embedding)
	}
}

// TestBatchRecordsNothing: a batch of searches is a measurement, not a
// delivery: it counts no use unless --record asks for it.
func TestBatchRecordsNothing(t *testing.T) {
	t.Setenv("ENGRAM_EMBEDDER", "none")
	t.Setenv("ENGRAM_URL", "")
	db := filepath.Join(t.TempDir(), "b.db")
	id := strings.TrimSpace(mustCLI(t, db, "", "add", "The deploy key lives in the vault"))
	uses := func() int {
		var m struct{ Uses int }
		if err := json.Unmarshal([]byte(mustCLI(t, db, "", "get", id)), &m); err != nil {
			t.Fatal(err)
		}
		return m.Uses
	}
	batch := `{"qid": "1", "query": "deploy key vault"}` + "\n" + `{"qid": "2", "query": "where is the deploy key"}` + "\n"
	mustCLI(t, db, batch, "search", "--batch", "-", "--json")
	if n := uses(); n != 0 {
		t.Fatalf("a batch recorded %d uses", n)
	}
	mustCLI(t, db, batch, "search", "--batch", "-", "--json", "--record")
	if n := uses(); n != 2 {
		t.Fatalf("a batch with --record recorded %d uses, want 2", n)
	}
}

// TestHelpCitesNothingMissing: no help text names a section of a document
// the repository does not hold ("DESIGN §6"), and the search help names the
// fusion the built-in model uses.
func TestHelpCitesNothingMissing(t *testing.T) {
	root := newRoot(&env{})
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		text := c.Short + c.Long + c.Example + c.Flags().FlagUsages()
		if strings.Contains(text, "DESIGN") || strings.Contains(text, "§") {
			t.Errorf("engram %s: help cites a section: %q", c.CommandPath(), text)
		}
		for _, sub := range c.Commands() {
			walk(sub)
		}
	}
	walk(root)
	search, _, _ := root.Find([]string{"search"})
	if usage := search.Flags().Lookup("fusion").Usage; strings.Contains(usage, "rrf (default)") || !strings.Contains(usage, "rsf for the built-in") {
		t.Errorf("search --fusion: %q", usage)
	}
}
