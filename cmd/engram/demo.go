package main

import (
	"context"
	"fmt"
	"io"
	"math"
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
	{Name: "Editor theme", Text: "Prefers dark themes in every editor and terminal.", Type: "preference"},
	{Name: "Tabs", Text: "Indent Go with tabs and YAML with two spaces.", Type: "preference"},
	{Name: "Cold start", Text: "After a deploy the first request is slow because the connection pool and the template cache are empty; warm them in the readiness probe.", Type: "fact", Tags: []string{"performance"}},
	{Name: "Release", Text: "Release v1.2.3 shipped the new search endpoint and removed the legacy XML export.", Type: "event"},
	// Two more release notes: one names v1.2.3 twice, one asks what another
	// version removed. The first is BM25's pick for what v1.2.3 removed, the
	// second the embedding's: fusion's case.
	{Name: "ARM crash", Text: "Release v1.2.3 crashed on ARM: pin v1.2.2 there until v1.2.3 is fixed.", Type: "event"},
	{Name: "Next version", Text: "What did release v1.2.4 remove? Nothing, it only fixed bugs.", Type: "event"},
	{Name: "Alice", Text: "Alice owns the billing service and reviews every schema migration.", Type: "person"},
	{Name: "Standup", Text: "The team meets every morning at 9:30 in the small meeting room.", Type: "event"},
	{Name: "Coffee", Text: "Drinks espresso, no sugar, and dislikes herbal tea.", Type: "preference"},
	{Name: "memory-search.ts", Text: "memory-search.ts ranks results on the client; keep it in step with the server's scoring.", Type: "fact", Tags: []string{"frontend"}},
	{Name: "Vacation", Text: "Travelling in Japan for two weeks in April; no pages then.", Type: "event"},
	{Name: "Database", Text: "Production runs PostgreSQL 15 with a read replica used for reports.", Type: "fact", Tags: []string{"db"}},
	{Name: "Reports", Text: "Monthly reports must be generated from the read replica, never from the primary database.", Type: "instruction", Tags: []string{"db"}},
	{Name: "Dog", Text: "Has a golden retriever called Biscuit who loves the beach.", Type: "person"},
	{Name: "Tests", Text: "Run the integration tests with the race detector before every merge.", Type: "instruction"},
	{Name: "Retry policy", Text: "Outgoing HTTP calls retry three times with exponential backoff and jitter.", Type: "fact"},
	{Name: "Timezone", Text: "Lives in Lisbon and works on Western European time.", Type: "person"},
	{Name: "Query timeout", Text: "Reports that scan the whole orders table time out after thirty seconds; add an index on created_at.", Type: "fact", Tags: []string{"db", "performance"}},
	{Name: "Logging", Text: "Structured logs go to stdout as JSON; never log tokens or passwords.", Type: "instruction"},
	{Name: "Slow dashboard", Text: "The admin dashboard is slow on the first load of the day because its report query is not cached.", Type: "fact"},
	{Name: "Deploy window", Text: "Deploys happen on Tuesdays and Thursdays; a deploy needs a green build and one approval.", Type: "instruction"},
	// Two notes BM25 cannot tell apart for "ssh key": the embedding can.
	{Name: "Printout", Text: "The ssh key printout sits beside the coffee machine.", Type: "fact"},
	{Name: "Vault", Text: "The ssh key for production servers sits in the vault downstairs.", Type: "fact"},
	{Name: "Credentials", Text: "Production server credentials are kept encrypted in a safe place.", Type: "instruction"},
}

// demoCase is one search the demo runs, and the memory that answers it.
type demoCase struct {
	title, query, want, lesson string
}

var demoCases = []demoCase{
	{"1. An exact identifier", "v1.2.2", "ARM crash",
		"A version string is an exact token: BM25 finds the one note that names v1.2.2, while to the embedding version numbers read alike, and it ranks another release note first."},
	{"2. A paraphrase", "what colour scheme do they like", "Editor theme",
		"No word of the query is in the memory (colour scheme vs dark themes): only the embedding connects them."},
	{"3. Fusion beats both legs", "what did release v1.2.3 remove", "Release",
		"BM25 prefers the crash note, which names v1.2.3 twice, and the embedding the note that asks the same of another version; the answer is second in each leg and first in the fusion, which rewards what both legs rank high."},
}

// fusionCase is the demo case whose answer hybrid ranks above both legs.
const fusionCase = 2

func init() { register(newDemo) }

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
// hybrid mode, printing where the answer ranked in each, then which modes put
// every answer first.
func runDemo(ctx context.Context, db *engram.DB, w io.Writer) error {
	mems := make([]*engram.Memory, len(demoMemories))
	for i := range demoMemories {
		m := demoMemories[i]
		m.ID = fmt.Sprintf("demo-%02d", i+1) // fixed ids: ties break the same way every run
		mems[i] = &m
	}
	res, err := db.Add(ctx, mems...)
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "Engram demo: %d memories in a temporary store, embedder %s.\n", len(res.IDs), describeEmbedder(db))
	if res.Deferred != "" {
		fmt.Fprintf(w, "note: %s\n", res.Deferred)
	}
	modes := []string{memory.ModeBM25, memory.ModeVector, memory.ModeHybrid}
	firsts := map[string]int{}
	ranks := map[string]int{} // the fusion case's, by mode
	for ci, c := range demoCases {
		fmt.Fprintf(w, "\n== %s\nquery: %q   answer: %q\n", c.title, c.query, c.want)
		var hybrid *memory.Response
		for _, mode := range modes {
			resp, err := db.Search(ctx, engram.Query{Query: c.query, Mode: mode, Limit: 5, NoRecord: true})
			if err != nil {
				return err
			}
			rank := rankOf(resp, c.want)
			if rank == 1 && resp.Strategy == mode {
				firsts[mode]++
			}
			if ci == fusionCase && resp.Strategy == mode {
				ranks[mode] = rank
			}
			fmt.Fprintf(w, "  %-7s %s\n", mode, rankLine(resp, rank, mode))
			for _, d := range resp.Degraded {
				fmt.Fprintf(w, "          degraded: %s: %s\n", d.Stage, d.Reason)
			}
			hybrid = resp
		}
		fmt.Fprintf(w, "  why: %s\n", c.lesson)
		if f := hybrid.Fusion; f != nil {
			fmt.Fprintf(w, "  hybrid (%s, weights bm25 %g, vector %g), top results explained:\n", f.Method, f.Weights["bm25"], f.Weights["vector"])
		}
		for i, r := range hybrid.Results[:min(3, len(hybrid.Results))] {
			fmt.Fprintf(w, "    %d. %-18s %s\n", i+1, r.Name, explainShort(r.Explain))
		}
	}
	fmt.Fprintf(w, "\n== Summary\nanswers ranked first, out of %d queries:", len(demoCases))
	for _, mode := range modes {
		fmt.Fprintf(w, "  %s %d", mode, firsts[mode])
	}
	fmt.Fprintln(w)
	n := len(demoCases)
	h, b, v := ranks[memory.ModeHybrid], ranks[memory.ModeBM25], ranks[memory.ModeVector]
	beaten := func(r int) bool { return r == 0 || h < r }
	switch {
	case firsts[memory.ModeHybrid] == n && h > 0 && beaten(b) && beaten(v):
		fmt.Fprintf(w, "  Each leg alone misses one kind of question; hybrid ranks every answer first, and on %q it ranks the answer %d, above BM25 (%s) and the vector leg (%s).\n",
			demoCases[fusionCase].query, h, rankWord(b), rankWord(v))
	default:
		fmt.Fprintf(w, "  (with this embedder, hybrid ranks %d of the %d answers first, and does not beat both legs on the fusion query)\n", firsts[memory.ModeHybrid], n)
	}
	fmt.Fprintln(w, "\nTry your own: engram add \"...\" then engram search \"...\" (add --json for every score).")
	return nil
}

// rankWord says where a leg ranked the answer.
func rankWord(r int) string {
	if r == 0 {
		return "not in its top 5"
	}
	return fmt.Sprintf("rank %d", r)
}

// rankOf is the 1-based rank of the memory named want, or 0.
func rankOf(resp *memory.Response, want string) int {
	for i, r := range resp.Results {
		if r.Name == want {
			return i + 1
		}
	}
	return 0
}

// rankLine says where the wanted memory ranked, and what ran when the mode
// asked for could not (a degraded search).
func rankLine(resp *memory.Response, rank int, mode string) string {
	ran := ""
	if resp.Strategy != mode {
		ran = " (ran " + resp.Strategy + ")"
	}
	switch {
	case len(resp.Results) == 0:
		return "no match" + ran
	case rank == 0:
		return fmt.Sprintf("answer not in the top %d%s", len(resp.Results), ran)
	}
	return fmt.Sprintf("answer at rank %d%s", rank, ran)
}

func explainShort(e *memory.Explain) string {
	s := ""
	if e.BM25 != nil {
		s += fmt.Sprintf("bm25 #%d (%.2f)  ", e.BM25.Rank, e.BM25.Score)
	} else {
		s += "bm25 —         "
	}
	if e.Vector != nil {
		// Rounded first, and +0 turns a rounded -0 into 0: no "-0.00".
		s += fmt.Sprintf("vector #%d (cos %.2f)  ", e.Vector.Rank, math.Round(e.Vector.Cosine*100)/100+0)
	} else {
		s += "vector —              "
	}
	return s + fmt.Sprintf("fused %.4f", e.RRF)
}
