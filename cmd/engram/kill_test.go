package main

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

const importChildEnv = "ENGRAM_TEST_IMPORT_CHILD"

// TestImportChild is the child process of TestKillMidImport: it runs
// "engram import FILE" and is killed by its parent part-way through.
func TestImportChild(t *testing.T) {
	if os.Getenv(importChildEnv) == "" {
		t.Skip("child process of TestKillMidImport")
	}
	code := run(context.Background(), []string{"import", os.Getenv(importChildEnv)}, strings.NewReader(""), io.Discard, os.Stderr)
	os.Exit(code)
}

// TestKillMidImport kills a real engram process in the middle of a large
// import: afterwards the file opens, every memory committed before is intact,
// and the import is either wholly there or wholly absent, never half-written.
func TestKillMidImport(t *testing.T) {
	if testing.Short() {
		t.Skip("writes a large import")
	}
	t.Setenv("ENGRAM_EMBEDDER", "none")
	dir := t.TempDir()
	db := filepath.Join(dir, "a.db")
	kept := strings.TrimSpace(mustCLI(t, db, "", "add", "committed before the import"))

	const n = 60000
	jsonl := filepath.Join(dir, "big.jsonl")
	f, err := os.Create(jsonl)
	if err != nil {
		t.Fatal(err)
	}
	w := bufio.NewWriter(f)
	for i := range n {
		fmt.Fprintf(w, "{\"text\":\"bulk memory %d about deploys, caches and the %d-th report\",\"tags\":[\"bulk\"]}\n", i, i)
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	f.Close()

	walSize := func() int64 {
		fi, err := os.Stat(db + "-wal")
		if err != nil {
			return 0
		}
		return fi.Size()
	}
	// Kill once the write-ahead log has grown by these many bytes: the
	// import's transaction is then under way, its pages spilling to the log
	// (about 2 s in). A child built with -race reads and tokenizes the file
	// some twenty times slower, and its log does not grow for a minute: it
	// is killed after 20 s, still importing, and the log says so.
	for _, grown := range []int64{1 << 20, 4 << 20} {
		before := walSize()
		cmd := exec.Command(os.Args[0], "-test.run=^TestImportChild$")
		cmd.Env = append(os.Environ(), importChildEnv+"="+jsonl, "ENGRAM_DB="+db)
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		exited := make(chan struct{})
		go func() { cmd.Wait(); close(exited) }()
		deadline := time.After(20 * time.Second)
		when := fmt.Sprintf("after the log grew %d bytes", grown)
	wait:
		for walSize() < before+grown {
			select {
			case <-exited:
				when = fmt.Sprintf("after it exited by itself, the log grown %d bytes", walSize()-before)
				break wait
			case <-deadline:
				when = fmt.Sprintf("after 20 s, the log grown %d bytes", walSize()-before)
				break wait
			case <-time.After(2 * time.Millisecond):
			}
		}
		cmd.Process.Kill()
		<-exited

		out := mustCLI(t, db, "", "stats", "--json")
		total := 0
		if _, err := fmt.Sscanf(out[strings.Index(out, `"memories": `)+len(`"memories": `):], "%d", &total); err != nil {
			t.Fatalf("stats after kill: %v\n%s", err, out)
		}
		bulk := total - 1
		if bulk%n != 0 {
			t.Fatalf("killed %s: %d bulk memories stored, want a whole number of imports of %d", when, bulk, n)
		}
		if got := mustCLI(t, db, "", "get", kept); !strings.Contains(got, "committed before the import") {
			t.Fatalf("the memory committed before the kill is damaged: %s", got)
		}
		t.Logf("killed %s (state %v): %d of %d imported memories present", when, cmd.ProcessState, bulk, n)
	}
}
