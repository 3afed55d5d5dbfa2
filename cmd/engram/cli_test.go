package main

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/engram-memory/engram"
	"github.com/engram-memory/engram/internal/linalg"
)

// cli runs one command line against db and returns stdout, stderr and the exit code.
func cli(t testing.TB, db string, stdin string, args ...string) (string, string, int) {
	t.Helper()
	var out, errb bytes.Buffer
	full := append([]string{"--db", db}, args...)
	code := run(context.Background(), full, strings.NewReader(stdin), &out, &errb)
	return out.String(), errb.String(), code
}

func mustCLI(t testing.TB, db string, stdin string, args ...string) string {
	t.Helper()
	out, errs, code := cli(t, db, stdin, args...)
	if code != 0 {
		t.Fatalf("engram %v: exit %d: %s", args, code, errs)
	}
	return out
}

func TestCLIRoundTrip(t *testing.T) {
	t.Setenv("ENGRAM_EMBEDDER", "")
	dir := t.TempDir()
	db := filepath.Join(dir, "a.db")
	id := strings.TrimSpace(mustCLI(t, db, "", "add", "tasks_claim must run inside a transaction",
		"--name", "claim", "--type", "fact", "--scope", "team=t1", "--tag", "db"))
	if id == "" {
		t.Fatal("add printed no id")
	}
	mustCLI(t, db, "", "add", "The user prefers dark themes", "--scope", "team=t1,user=u7", "--favorite")

	var resp struct {
		Strategy string
		Results  []struct {
			ID      string
			Explain struct{ BM25 *struct{ Rank int } }
		}
	}
	out := mustCLI(t, db, "", "search", "tasks_claim", "--json", "--scope", "team=t1")
	if err := json.Unmarshal([]byte(out), &resp); err != nil {
		t.Fatal(err)
	}
	if resp.Strategy != "hybrid" || len(resp.Results) == 0 || resp.Results[0].ID != id || resp.Results[0].Explain.BM25.Rank != 1 {
		t.Fatalf("search: %s", out)
	}
	if out := mustCLI(t, db, "", "search", "dark themes", "--context", "--budget", "200"); !strings.Contains(out, "dark themes") {
		t.Fatalf("context output: %q", out)
	}
	// --context holds results to the model's bar, as inject does: a query on
	// a topic the store lacks gets nothing unless --min-relevance says so.
	for _, c := range []struct {
		args []string
		want bool
	}{
		{[]string{"--context"}, false},
		{[]string{"--context", "--min-relevance", "0"}, true},
	} {
		out := mustCLI(t, db, "", append([]string{"search", "how do I bake sourdough bread", "--no-record"}, c.args...)...)
		if got := strings.Contains(out, "transaction") || strings.Contains(out, "dark themes"); got != c.want {
			t.Errorf("search %v on an absent topic: %q", c.args, out)
		}
	}
	mustCLI(t, db, "", "update", id, "--text", "tasks_claim needs a transaction", "--favorite", "true")
	if out := mustCLI(t, db, "", "get", id); !strings.Contains(out, "needs a transaction") || !strings.Contains(out, `"favorite": true`) {
		t.Fatalf("get after update: %s", out)
	}
	mustCLI(t, db, "", "touch", id)
	mustCLI(t, db, "", "favorite", id, "--off")

	// Batch: one JSON object a line in, one response a line out, qid echoed.
	batch := `{"qid":"q1","query":"transaction"}` + "\n" + `{"qid":"q2","query":"themes","limit":1}` + "\n"
	out = mustCLI(t, db, batch, "search", "--batch", "-", "--json")
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if len(lines) != 2 || !strings.Contains(lines[0], `"qid":"q1"`) || !strings.Contains(lines[1], `"qid":"q2"`) {
		t.Fatalf("batch output: %s", out)
	}

	// export → import into an empty file → export: identical.
	exported := mustCLI(t, db, "", "export")
	db2 := filepath.Join(dir, "b.db")
	mustCLI(t, db2, exported, "import", "-")
	if again := mustCLI(t, db2, "", "export"); again != exported {
		t.Fatalf("export after import differs:\n%s\n---\n%s", exported, again)
	}
	mustCLI(t, db, "", "delete", id)
	if _, _, code := cli(t, db, "", "get", id); code != 2 {
		t.Fatalf("get of a deleted id: exit %d, want 2", code)
	}
	if out := mustCLI(t, db, "", "stats", "--json"); !strings.Contains(out, `"memories": 1`) {
		t.Fatalf("stats: %s", out)
	}
}

// TestCLIBadInput: each mistake gets one line on stderr, exit 2, no stack
// trace, and the store is unchanged.
func TestCLIBadInput(t *testing.T) {
	t.Setenv("ENGRAM_EMBEDDER", "none")
	dir := t.TempDir()
	db := filepath.Join(dir, "a.db")
	mustCLI(t, db, "", "add", "kept memory")
	before := mustCLI(t, db, "", "export")
	notSQLite := filepath.Join(dir, "text.db")
	if err := os.WriteFile(notSQLite, []byte("just some text, definitely not SQLite"), 0o644); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name  string
		db    string
		stdin string
		args  []string
		want  string
	}{
		{"unknown flag", db, "", []string{"search", "x", "--frobnicate"}, "unknown flag"},
		{"unknown command", db, "", []string{"frobnicate"}, "unknown command"},
		{"empty query", db, "", []string{"search", "  "}, "query text is empty"},
		{"zero limit", db, "", []string{"search", "x", "--limit", "0"}, "--limit 0"},
		{"huge limit", db, "", []string{"search", "x", "--limit", "100000000"}, "above the maximum"},
		{"bad mode", db, "", []string{"search", "x", "--mode", "fuzzy"}, "mode \"fuzzy\""},
		{"bad scope", db, "", []string{"search", "x", "--scope", "team"}, "want key=value"},
		{"bad since", db, "", []string{"search", "x", "--since", "yesterday-ish"}, "--since"},
		{"unknown id", db, "", []string{"get", "01NOPE"}, "not found"},
		{"update unknown id", db, "", []string{"update", "01NOPE", "--text", "x"}, "not found"},
		{"update no field", db, "", []string{"update", "01NOPE"}, "no field to change"},
		{"seq without episode", db, "", []string{"add", "x", "--seq", "2"}, "--seq 2 needs --episode"},
		{"bad at", db, "", []string{"add", "x", "--at", "someday"}, "--at"},
		{"supersedes nothing", db, "", []string{"add", "x", "--supersedes", "01NOPE"}, "supersedes"},
		{"bad as-of", db, "", []string{"search", "x", "--as-of", "someday"}, "--as-of"},
		{"neighbours too many", db, "", []string{"search", "x", "--neighbours", "21"}, "neighbours 21"},
		{"delete unknown id", db, "", []string{"delete", "01NOPE"}, "not found"},
		{"missing text", db, "", []string{"add"}, "add: missing TEXT|- (usage: engram add TEXT|- [flags])"},
		{"empty text", db, "", []string{"add", " "}, "text"},
		{"bad metadata", db, "", []string{"add", "x", "--metadata", "[1]"}, "metadata"},
		{"malformed jsonl", db, "{\"text\":\"ok\"}\n{\"text\": 5}\n", []string{"import", "-"}, "line 2"},
		{"unknown jsonl field", db, "{\"txt\":\"ok\"}\n", []string{"import", "-"}, "line 1: unknown field \"txt\""},
		{"missing import file", db, "", []string{"import", filepath.Join(dir, "nope.jsonl")}, "no such file"},
		{"bad batch line", db, "{\"query\": 3}\n", []string{"search", "--batch", "-"}, "invalid"},
		{"not sqlite", notSQLite, "", []string{"stats"}, "not an Engram database"},
		{"missing directory", filepath.Join(dir, "no", "such", "e.db"), "", []string{"add", "x"}, "does not exist"},
		{"bad embedder", db, "", []string{"search", "x", "--mode", "bm25"}, ""},
		{"bad precision", db, "", []string{"search", "x"}, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if c.name == "bad embedder" {
				t.Setenv("ENGRAM_EMBEDDER", "frobnicator")
				c.want = "ENGRAM_EMBEDDER"
			}
			if c.name == "bad precision" {
				t.Setenv("ENGRAM_EMBEDDER", "multilingual")
				t.Setenv("ENGRAM_BERT_PRECISION", "fp16")
				c.want = `ENGRAM_BERT_PRECISION="fp16"`
			}
			_, stderr, code := cli(t, c.db, c.stdin, c.args...)
			if code != 2 {
				t.Fatalf("exit %d, want 2 (stderr %q)", code, stderr)
			}
			if strings.Count(stderr, "\n") != 1 || !strings.HasPrefix(stderr, "engram: ") {
				t.Fatalf("stderr is not one line: %q", stderr)
			}
			if !strings.Contains(stderr, c.want) {
				t.Fatalf("stderr %q does not mention %q", stderr, c.want)
			}
			if strings.Contains(stderr, "goroutine") || strings.Contains(stderr, "panic") {
				t.Fatalf("stack trace on stderr: %q", stderr)
			}
		})
	}
	if after := mustCLI(t, db, "", "export"); after != before {
		t.Fatalf("bad input changed the store:\n%s\n---\n%s", before, after)
	}
}

func TestNewerSchemaRefused(t *testing.T) {
	t.Setenv("ENGRAM_EMBEDDER", "none")
	db := filepath.Join(t.TempDir(), "a.db")
	mustCLI(t, db, "", "add", "x")
	// Bump the schema version as a future engram would.
	out, errs, code := cli(t, db, "", "stats")
	if code != 0 {
		t.Fatalf("stats: %d %s %s", code, out, errs)
	}
	if err := setUserVersion(db, 99); err != nil {
		t.Fatal(err)
	}
	_, stderr, code := cli(t, db, "", "search", "x")
	if code != 2 || !strings.Contains(stderr, "newer") {
		t.Fatalf("exit %d, stderr %q", code, stderr)
	}
}

func TestDemo(t *testing.T) {
	t.Setenv("ENGRAM_EMBEDDER", "")
	var out, errb bytes.Buffer
	if code := run(context.Background(), []string{"demo"}, strings.NewReader(""), &out, &errb); code != 0 {
		t.Fatalf("demo: exit %d: %s", code, errb.String())
	}
	// With the default model each leg misses one case and hybrid none; on the
	// fusion case hybrid is strictly better than each leg.
	emb, err := engram.BuiltinEmbedder()
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"embedder " + emb.Model(), `query: "v1.2.2"`, "what colour scheme", "bm25 1  vector 1  hybrid 3",
		`Each leg alone misses one kind of question; hybrid ranks every answer first, and on "what did release v1.2.3 remove" it ranks the answer 1, above BM25 (rank 2) and the vector leg (rank 2).`} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("demo output lacks %q", want)
		}
	}
}

// TestCLISinceOverflow: an age one day longer than a duration holds is
// refused, not wrapped around into a date centuries ahead; the longest one
// that fits is taken.
func TestCLISinceOverflow(t *testing.T) {
	t.Setenv("ENGRAM_EMBEDDER", "none")
	db := filepath.Join(t.TempDir(), "a.db")
	mustCLI(t, db, "", "add", "an old memory")
	_, stderr, code := cli(t, db, "", "search", "memory", "--since", "106752d")
	if code != 2 || !strings.Contains(stderr, "--since") || !strings.Contains(stderr, "106751 days") {
		t.Fatalf("--since 106752d: exit %d, stderr %q; want exit 2 naming --since and the limit", code, stderr)
	}
	if out := mustCLI(t, db, "", "search", "memory", "--since", "106751d", "--until", "106750d"); !strings.Contains(out, "no results") {
		t.Fatalf("--since 106751d --until 106750d: %q", out)
	}
}

// TestImportInterrupted: an import whose context ends (Ctrl-C) says that
// nothing was imported, and nothing was.
func TestImportInterrupted(t *testing.T) {
	t.Setenv("ENGRAM_EMBEDDER", "static")
	db := filepath.Join(t.TempDir(), "i.db")
	mustCLI(t, db, "", "add", "already here")
	// Interrupted once the input is read: after the store opened, before the write.
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	in := cancelAtEOF{strings.NewReader(`{"text":"one"}` + "\n" + `{"text":"two"}` + "\n"), cancel}
	var out, errb bytes.Buffer
	code := run(ctx, []string{"--db", db, "import", "-"}, in, &out, &errb)
	if code == 0 || !strings.Contains(errb.String(), "import interrupted") || !strings.Contains(errb.String(), "nothing imported") {
		t.Fatalf("exit %d, stderr %q", code, errb.String())
	}
	if s := mustCLI(t, db, "", "stats"); !strings.Contains(s, ": 1 memories") {
		t.Fatalf("after the interrupted import: %s", s)
	}
}

// cancelAtEOF is a reader that cancels a context when it is read to the end.
type cancelAtEOF struct {
	r      *strings.Reader
	cancel context.CancelFunc
}

func (c cancelAtEOF) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	if err == io.EOF {
		c.cancel()
	}
	return n, err
}

// embedChildEnv makes TestEmbedChild run engram embed with its value.
const embedChildEnv = "ENGRAM_TEST_EMBED_CHILD"

// TestEmbedChild is TestEmbedPrecision's engram process: the built-in
// embedders read $ENGRAM_BERT_PRECISION once a process.
func TestEmbedChild(t *testing.T) {
	if os.Getenv(embedChildEnv) == "" {
		t.Skip("child process of TestEmbedPrecision")
	}
	os.Exit(run(context.Background(), []string{"embed", os.Getenv(embedChildEnv)}, strings.NewReader(""), os.Stdout, os.Stderr))
}

// embed names the model on stderr, and the precision when it is not fp32
// or was asked for and cannot be used here; each case in its own process.
func TestEmbedPrecision(t *testing.T) {
	int8Line := "precision int8\n"
	if !linalg.HasInt8Activations() {
		int8Line = "precision fp32 (int8 asked: this CPU has no AVX-512 VNNI)\n"
	}
	for _, c := range []struct{ embedder, precision, want string }{
		{"minilm", "", "all-minilm-l6-v2-v2\n"},
		{"minilm", "int8", "all-minilm-l6-v2-v2\nprecision fp32 (int8 asked: this model's float16 weights have no int8 path)\n"},
		{"bge-small", "int8", "bge-small-en-v1.5.2-v2\n" + int8Line},
		{"multilingual", "INT8", "multilingual-e5-small-q4-v2\n" + int8Line},
		{"multilingual", "bf16", "multilingual-e5-small-q4-v2\nprecision fp32 (bf16 asked: this model has no bf16 path)\n"},
	} {
		cmd := exec.Command(os.Args[0], "-test.run=^TestEmbedChild$")
		cmd.Env = append(os.Environ(), embedChildEnv+"=which port does staging use",
			"ENGRAM_EMBEDDER="+c.embedder, "ENGRAM_BERT_PRECISION="+c.precision, "ENGRAM_DAEMON=off")
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		out, err := cmd.Output()
		if err != nil || !bytes.HasPrefix(out, []byte("[")) {
			t.Fatalf("%s at %q: %v, stdout %.40q, stderr %q", c.embedder, c.precision, err, out, stderr.String())
		}
		if stderr.String() != c.want {
			t.Errorf("%s at %q: stderr %q, want %q", c.embedder, c.precision, stderr.String(), c.want)
		}
	}
}
