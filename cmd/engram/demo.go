package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/spf13/cobra"

	"github.com/engram-memory/engram"
	"github.com/engram-memory/engram/memory"
)

// demoMemories is what an agent might have learned while working with one user
// on one codebase: identifiers, preferences, incidents and decisions.
var demoMemories = []engram.Memory{
	{Name: "tasks_claim race", Text: "tasks_claim must run inside a transaction, otherwise two workers can claim the same task.", Type: "fact", Tags: []string{"db", "queue"}},
	{Name: "Data directory", Text: "SEAMLESS_DATA_DIR points at the cache folder; when unset the service writes to /tmp and loses state on reboot.", Type: "fact", Tags: []string{"config"}},
	{Name: "Connection resets", Text: "ERR_CONN_RESET from the payments gateway means the keep-alive timeout is shorter than ours; retry once.", Type: "fact", Tags: []string{"payments"}},
	{Name: "Editor theme", Text: "The user prefers dark themes in every editor and terminal.", Type: "preference"},
	{Name: "Tabs", Text: "Indent Go with tabs and YAML with two spaces.", Type: "preference"},
	{Name: "Cold start", Text: "After a deploy the first request is slow because the connection pool and the template cache are empty; warm them in the readiness probe.", Type: "fact", Tags: []string{"performance"}},
	{Name: "Release", Text: "Release v1.2.3 shipped the new search endpoint and removed the legacy XML export.", Type: "event"},
	{Name: "Alice", Text: "Alice owns the billing service and reviews every schema migration.", Type: "person"},
	{Name: "Standup", Text: "The team meets every morning at 9:30 in the small meeting room.", Type: "event"},
	{Name: "Coffee", Text: "The user drinks espresso, no sugar, and dislikes herbal tea.", Type: "preference"},
	{Name: "memory-search.ts", Text: "memory-search.ts ranks results on the client; keep it in step with the server's scoring.", Type: "fact", Tags: []string{"frontend"}},
	{Name: "Vacation", Text: "The user will be travelling in Japan for two weeks in April and wants no pages then.", Type: "event"},
	{Name: "Database", Text: "Production runs PostgreSQL 15 with a read replica used for reports.", Type: "fact", Tags: []string{"db"}},
	{Name: "Reports", Text: "Monthly reports must be generated from the read replica, never from the primary database.", Type: "instruction", Tags: []string{"db"}},
	{Name: "Dog", Text: "The user has a golden retriever called Biscuit who loves the beach.", Type: "person"},
	{Name: "Tests", Text: "Run the integration tests with the race detector before every merge.", Type: "instruction"},
	{Name: "Retry policy", Text: "Outgoing HTTP calls retry three times with exponential backoff and jitter.", Type: "fact"},
	{Name: "Timezone", Text: "The user lives in Lisbon and works on Western European time.", Type: "person"},
	{Name: "Query timeout", Text: "Reports that scan the whole orders table time out after thirty seconds; add an index on created_at.", Type: "fact", Tags: []string{"db", "performance"}},
	{Name: "Logging", Text: "Structured logs go to stdout as JSON; never log tokens or passwords.", Type: "instruction"},
}

// demoCase is one search the demo runs, and the memory that answers it.
type demoCase struct {
	title, query, want, lesson string
}

var demoCases = []demoCase{
	{"1. An exact identifier: keyword search wins", "tasks_claim", "tasks_claim race",
		"An identifier is a rare, exact token: BM25 finds it at once, while embeddings blur it into similar words."},
	{"2. A paraphrase: the vector leg finds what keywords miss", "which colour scheme does the user like", "Editor theme",
		"No word of the query is in the memory (colour scheme ≠ dark themes): only the embedding connects them."},
	{"3. Both legs together: fusion ranks the answer first", "why is the first request slow after a deploy", "Cold start",
		"Each leg has its own near-misses; rank fusion rewards the memory both legs agree on."},
}

func newDemo(e *env) *cobra.Command {
	return &cobra.Command{
		Use:   "demo",
		Short: "Load a small built-in set of memories into a temporary store and show keyword, paraphrase and hybrid wins",
		Args:  args(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, _ []string) error {
			dir, err := os.MkdirTemp("", "engram-demo-")
			if err != nil {
				return err
			}
			defer os.RemoveAll(dir)
			opts, err := optionsFromEnv()
			if err != nil {
				return err
			}
			db, err := engram.Open(cmd.Context(), filepath.Join(dir, "demo.db"), opts)
			if err != nil {
				return err
			}
			defer db.Close()
			return runDemo(cmd.Context(), db, e.stdout)
		},
	}
}

// runDemo loads the demo memories and runs each case in bm25, vector and
// hybrid mode, printing where the answer ranked in each.
func runDemo(ctx context.Context, db *engram.DB, w io.Writer) error {
	mems := make([]*engram.Memory, len(demoMemories))
	for i := range demoMemories {
		m := demoMemories[i]
		mems[i] = &m
	}
	res, err := db.Add(ctx, mems...)
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "Engram demo: %d memories in a temporary store (%s), embedder %s.\n",
		len(res.IDs), db.Path(), describeEmbedder(db))
	if res.Deferred != "" {
		fmt.Fprintf(w, "note: %s\n", res.Deferred)
	}
	for _, c := range demoCases {
		fmt.Fprintf(w, "\n== %s\nquery: %q   answer: %q\n", c.title, c.query, c.want)
		var hybrid *memory.Response
		for _, mode := range []string{memory.ModeBM25, memory.ModeVector, memory.ModeHybrid} {
			resp, err := db.Search(ctx, engram.Query{Query: c.query, Mode: mode, Limit: 5, NoRecord: true})
			if err != nil {
				return err
			}
			fmt.Fprintf(w, "  %-7s %-10s %s\n", mode, "("+resp.Strategy+")", rankLine(resp, c.want))
			for _, d := range resp.Degraded {
				fmt.Fprintf(w, "          degraded: %s: %s\n", d.Stage, d.Reason)
			}
			hybrid = resp
		}
		fmt.Fprintf(w, "  why: %s\n  hybrid top results, explained:\n", c.lesson)
		for i, r := range hybrid.Results[:min(3, len(hybrid.Results))] {
			fmt.Fprintf(w, "    %d. %-18s %s\n", i+1, r.Name, explainShort(r.Explain))
		}
	}
	fmt.Fprintln(w, "\nTry your own: engram add \"...\" then engram search \"...\" (add --json for every score).")
	return nil
}

// rankLine says where the wanted memory ranked in a response.
func rankLine(resp *memory.Response, want string) string {
	for i, r := range resp.Results {
		if r.Name == want {
			return fmt.Sprintf("answer at rank %d of %d", i+1, len(resp.Results))
		}
	}
	return fmt.Sprintf("answer not in the top %d", len(resp.Results))
}

func explainShort(e *memory.Explain) string {
	s := ""
	if e.BM25 != nil {
		s += fmt.Sprintf("bm25 #%d (%.2f)  ", e.BM25.Rank, e.BM25.Score)
	} else {
		s += "bm25 —         "
	}
	if e.Vector != nil {
		s += fmt.Sprintf("vector #%d (cos %.2f)  ", e.Vector.Rank, e.Vector.Cosine)
	} else {
		s += "vector —              "
	}
	return s + fmt.Sprintf("fused %.4f", e.RRF)
}
