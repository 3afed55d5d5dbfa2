package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/engram-memory/engram/internal/weaviatetest"
)

func TestMain(m *testing.M) { os.Exit(weaviatetest.Main(m)) }

// weaviateURL is a store URL for a fresh class on the test server.
func weaviateURL(t *testing.T, extra string) string {
	t.Helper()
	base := weaviatetest.URL(t)
	return "weaviate://" + strings.TrimPrefix(base, "http://") + "?class=" + weaviatetest.Class(t, base) + "&grpc=" + strconv.Itoa(weaviatetest.GRPCPort(t, base)) + extra
}

// TestMigrateRoundTrip: a file's memories (scopes, favorites, uses, vectors,
// episodes, supersession) migrated to Weaviate and back export byte for
// byte as the file did, and a second run of the same migration (a resume)
// changes nothing.
func TestMigrateRoundTrip(t *testing.T) {
	t.Setenv("ENGRAM_EMBEDDER", "static")
	t.Setenv("ENGRAM_URL", "")
	dir := t.TempDir()
	src := filepath.Join(dir, "src.db")
	var lines []string
	for i := range 230 {
		scope := []string{`{}`, `{"team":"a"}`, `{"team":"b","user":"u1"}`}[i%3]
		extra := ""
		if i%4 == 1 { // a turn of a conversation, said before it was stored
			extra += fmt.Sprintf(`,"episode":"chat %d","seq":%d,"speaker":"user","occurred_at":"2023-05-0%dT10:00:00.123456789Z"`, i%3, i/4+1, i%9+1)
		}
		if i%17 == 3 { // a newer version of another memory (there or not)
			extra += fmt.Sprintf(`,"supersedes":"m%03d"`, (i+197)%200)
		}
		lines = append(lines, fmt.Sprintf(`{"id":"m%03d","text":"note %d about the deploy of service %d","scope":%s,"tags":["t%d"],"favorite":%t%s}`,
			i%200, i, i%7, scope, i%4, i%5 == 0, extra))
	}
	mustCLI(t, src, strings.Join(lines, "\n")+"\n", "import", "-")
	mustCLI(t, src, "", "touch", "m050")
	want := mustCLI(t, src, "", "export")
	if n := strings.Count(want, "\n"); n != 230 {
		t.Fatalf("source export has %d lines, want 230", n)
	}

	wv := weaviateURL(t, "&tenant=team")
	out := mustCLI(t, src, "", "--json", "migrate", "--from", src, "--to", wv, "--batch", "64", "--sample", "50")
	var rep migrateReport
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatalf("migrate --json: %v: %s", err, out)
	}
	if rep.Copied != 230 || rep.Source != 230 || rep.Target != 230 || rep.Sampled != 50 {
		t.Fatalf("migrate report %+v", rep)
	}
	if got := mustCLI(t, wv, "", "export"); got != want {
		t.Fatalf("export from Weaviate differs from the file's:\n%s", firstDiff(got, want))
	}
	// Resume: the same command again replaces every memory by itself.
	mustCLI(t, src, "", "--json", "migrate", "--from", src, "--to", wv, "--batch", "100")
	if got := mustCLI(t, wv, "", "export"); got != want {
		t.Fatalf("export after a second migration differs:\n%s", firstDiff(got, want))
	}
	// And back into a new file.
	back := filepath.Join(dir, "back.db")
	mustCLI(t, src, "", "migrate", "--from", wv, "--to", back)
	if got := mustCLI(t, back, "", "export"); got != want {
		t.Fatalf("export of the file migrated back differs:\n%s", firstDiff(got, want))
	}
	// Searches on the migrated store find what the file finds.
	for _, db := range []string{src, wv} {
		var resp struct {
			Strategy string            `json:"strategy"`
			Results  []json.RawMessage `json:"results"`
		}
		res := mustCLI(t, db, "", "--json", "search", "deploy of service 3", "--limit", "3")
		if err := json.Unmarshal([]byte(res), &resp); err != nil || resp.Strategy != "hybrid" || len(resp.Results) != 3 {
			t.Fatalf("search on %s: strategy %q, %d results, %v: %s", db, resp.Strategy, len(resp.Results), err, res)
		}
	}
}

// TestMigrateBadInput: one clear line, exit 2, nothing written.
func TestMigrateBadInput(t *testing.T) {
	t.Setenv("ENGRAM_URL", "")
	dir := t.TempDir()
	src := filepath.Join(dir, "src.db")
	t.Setenv("ENGRAM_EMBEDDER", "none")
	mustCLI(t, src, "", "add", "a memory to migrate")
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"migrate", "--to", filepath.Join(dir, "x.db")}, "--from is required"},
		{[]string{"migrate", "--from", filepath.Join(dir, "missing.db"), "--to", filepath.Join(dir, "x.db")}, "--from"},
		{[]string{"migrate", "--from", src, "--to", "weaviate://127.0.0.1:1?class=lower"}, "class"},
		{[]string{"migrate", "--from", src, "--to", "weaviate://127.0.0.1:1?bogus=1"}, "unknown parameter"},
		{[]string{"migrate", "--from", src, "--to", src}, "same store"},
		{[]string{"migrate", "--from", src, "--to", filepath.Join(dir, "x.db"), "--batch", "0"}, "--batch"},
	} {
		_, errs, code := cli(t, src, "", c.args...)
		if code != 2 || !strings.Contains(errs, c.want) || strings.Count(strings.TrimSpace(errs), "\n") > 0 {
			t.Errorf("engram %v: exit %d, stderr %q; want exit 2 and one line with %q", c.args, code, errs, c.want)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "x.db")); err == nil {
		t.Error("a refused migration created its target")
	}
}

// firstDiff shows the first line where two exports differ.
func firstDiff(got, want string) string {
	g, w := strings.Split(got, "\n"), strings.Split(want, "\n")
	for i := 0; i < max(len(g), len(w)); i++ {
		var a, b string
		if i < len(g) {
			a = g[i]
		}
		if i < len(w) {
			b = w[i]
		}
		if a != b {
			return fmt.Sprintf("line %d:\n got %s\nwant %s", i+1, a, b)
		}
	}
	return "(equal)"
}
