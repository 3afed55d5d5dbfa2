package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// episodeStore is a fresh keyword-only store (fast, and its scores the same
// on every machine) holding testdata/episodes/versions.jsonl: where the user
// lived, three versions, each superseding the one before.
func episodeStore(t *testing.T) string {
	t.Helper()
	t.Setenv("ENGRAM_EMBEDDER", "none")
	t.Setenv("ENGRAM_SCOPE", "")
	t.Setenv("ENGRAM_URL", "")
	t.Setenv("ENGRAM_API_KEYS", "")
	db := filepath.Join(t.TempDir(), "episodes.db")
	data, err := os.ReadFile(filepath.Join("testdata", "episodes", "versions.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	if _, errs, code := engramRun(t, string(data), "--db", db, "import", "-"); code != 0 {
		t.Fatalf("import: exit %d: %s", code, errs)
	}
	return db
}

// versionCommands are the command lines whose output the goldens hold, the
// same locally and through a server.
var versionCommands = []struct {
	golden string
	args   []string
}{
	{"search_current.golden", []string{"search", "where does the user live", "--no-record"}},
	{"search_as_of.golden", []string{"search", "where does the user live", "--no-record", "--as-of", "2024-01-01"}},
	{"search_every_version.golden", []string{"search", "where does the user live", "--no-record", "--include-superseded"}},
	{"history.golden", []string{"history", "paris"}},
	{"history_json.golden", []string{"history", "berlin", "--json"}},
	{"list_current.golden", []string{"list", "--current"}},
}

// TestVersionsGolden: supersession and --as-of through the CLI on the file,
// and the same command lines through a real engram serve (the HTTP API's
// search with as_of and include_superseded, and its history route) give the
// same output.
func TestVersionsGolden(t *testing.T) {
	db := episodeStore(t)
	for _, c := range versionCommands {
		out := mustCLI(t, db, "", c.args...)
		checkGolden(t, filepath.Join("episodes", c.golden), out)
	}
	srv := startServe(t, db)
	for _, c := range versionCommands {
		if out := mustClient(t, srv.url, "", "", c.args...); out != string(readGolden(t, c.golden)) {
			t.Errorf("%v through the server differs from the file's:\n%s", c.args, out)
		}
	}
	// Bad input: one line, exit 2.
	for _, args := range [][]string{
		{"add", "x", "--supersedes", "nowhere"},
		{"add", "x", "--seq", "3"},
		{"add", "x", "--episode", " spaced"},
		{"search", "x", "--as-of", "someday"},
		{"history", "nope"},
	} {
		if _, errs, code := cli(t, db, "", args...); code != 2 || strings.Count(strings.TrimSpace(errs), "\n") != 0 {
			t.Errorf("%v: exit %d, stderr %q; want exit 2 and one line", args, code, errs)
		}
	}
}

func readGolden(t *testing.T, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", "episodes", name))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestVersionsMCPGolden: the same over MCP: memory_search with as_of and
// memory_history.
func TestVersionsMCPGolden(t *testing.T) {
	cs, stop := mcpStdio(t, "--db", episodeStore(t), "mcp")
	var b strings.Builder
	for _, call := range []struct {
		tool string
		args map[string]any
	}{
		{"memory_search", map[string]any{"query": "where does the user live", "min_relevance": 0}},
		{"memory_search", map[string]any{"query": "where does the user live", "min_relevance": 0, "as_of": "2024-01-01"}},
		{"memory_history", map[string]any{"id": "lisbon"}},
	} {
		args, _ := json.Marshal(call.args)
		b.WriteString("== " + call.tool + " " + string(args) + "\n")
		b.WriteString(mcpCall(t, cs, call.tool, call.args, nil) + "\n")
	}
	checkGolden(t, filepath.Join("episodes", "mcp.golden"), b.String())
	stop()
}

// TestConversationCLI: turns added one command each are an episode: listed in
// order, and inject delivers the answer turn with the question before it.
func TestConversationCLI(t *testing.T) {
	t.Setenv("ENGRAM_EMBEDDER", "none")
	t.Setenv("ENGRAM_SCOPE", "")
	t.Setenv("ENGRAM_URL", "")
	db := filepath.Join(t.TempDir(), "chat.db")
	for _, turn := range [][]string{
		{"Which flowers did you plant by the porch?", "--seq", "1", "--speaker", "Melanie"},
		{"They're called Peruvian Lilies.", "--seq", "2", "--speaker", "Caroline"},
		{"Lovely, they last for weeks.", "--seq", "3", "--speaker", "Melanie"},
	} {
		mustCLI(t, db, "", append([]string{"add", turn[0], "--episode", "garden", "--at", "2023-05-08T13:56:00Z"}, turn[1:]...)...)
	}
	mustCLI(t, db, "", "add", "The garden hose leaks at the tap.")
	checkGolden(t, filepath.Join("episodes", "list_episode.golden"), mustCLI(t, db, "", "list", "--episode", "garden", "--order", "seq"))
	// The question turn matches two of the prompt's three words (relevance
	// .25), its neighbours only through their context (.10): a bar between.
	checkGolden(t, filepath.Join("episodes", "inject_turn.golden"), mustCLI(t, db, "", "inject", "what flowers grow by the porch", "--min-relevance", "0.2", "--no-record"))
	checkGolden(t, filepath.Join("episodes", "inject_turn_alone.golden"), mustCLI(t, db, "", "inject", "what flowers grow by the porch", "--min-relevance", "0.2", "--no-record", "--neighbours", "0"))
	// Adding a turn again replaces it.
	mustCLI(t, db, "", "add", "They are Peruvian Lilies, orange ones.", "--episode", "garden", "--seq", "2", "--speaker", "Caroline")
	if out := mustCLI(t, db, "", "list", "--episode", "garden", "--order", "seq"); strings.Count(out, "\n") != 3 || !strings.Contains(out, "orange ones") {
		t.Fatalf("the turn added again:\n%s", out)
	}
}
