package engram_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/engram-memory/engram"
)

// The relevance suite: fixed memories, fixed queries with their answers,
// golden rankings per query and a stats file per mode, so that every ranking
// change shows up as a diff in review. Rewrite with go test -run Relevance -update.

type relevanceCase struct {
	Query  string `json:"query"`
	Answer string `json:"answer"`
}

func TestRelevanceSuite(t *testing.T) {
	ctx := context.Background()
	db := openTest(t, engram.Options{})
	f, err := os.Open(filepath.Join("testdata", "relevance", "memories.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := db.Import(ctx, f, engram.ImportOptions{}); err != nil {
		t.Fatal(err)
	}
	cases := readJSONL[relevanceCase](t, filepath.Join("testdata", "relevance"), "queries.jsonl")

	var rankings, stats bytes.Buffer
	fmt.Fprintf(&stats, "%-7s %9s %9s %6s  (%d queries, embedder %s)\n", "mode", "recall@1", "recall@5", "mrr", len(cases), db.Embedder().Model())
	for _, mode := range []string{"bm25", "vector", "hybrid"} {
		fmt.Fprintf(&rankings, "== %s\n", mode)
		runs := searchAll(t, db, cases, mode)
		for i, r := range runs {
			fmt.Fprintf(&rankings, "%-45q %-12s rank %d: %s\n", cases[i].Query, cases[i].Answer, r.rank, strings.Join(r.ids, " "))
		}
		r1, r5, mrr, _ := recallOf(runs)
		fmt.Fprintf(&stats, "%-7s %9.3f %9.3f %6.3f\n", mode, r1, r5, mrr)
	}
	checkGolden(t, filepath.Join("testdata", "relevance", "rankings.txt"), rankings.String())
	checkGolden(t, filepath.Join("testdata", "relevance", "rank_stats.txt"), stats.String())
}

// readJSONL decodes every line of a file under dir into a T.
func readJSONL[T any](tb testing.TB, dir, name string) []T {
	tb.Helper()
	raw, err := os.ReadFile(filepath.Join(dir, name))
	if err != nil {
		tb.Fatal(err)
	}
	var out []T
	sc := bufio.NewScanner(bytes.NewReader(raw))
	for line := 1; sc.Scan(); line++ {
		var v T
		if err := json.Unmarshal(sc.Bytes(), &v); err != nil {
			tb.Fatalf("%s line %d: %v", name, line, err)
		}
		out = append(out, v)
	}
	return out
}

// rankRun is one query's top 5 in one mode.
type rankRun struct {
	ids     []string
	rank    int  // of the answer, 0 if not in the top 5
	skipped bool // the vector leg was skipped: the model does not read the query
}

// searchAll runs every query of a set in one mode.
func searchAll(t *testing.T, db *engram.DB, cases []relevanceCase, mode string) []rankRun {
	t.Helper()
	runs := make([]rankRun, len(cases))
	for i, c := range cases {
		resp, err := db.Search(context.Background(), engram.Query{Query: c.Query, Mode: mode, Limit: 5, NoRecord: true})
		if err != nil {
			t.Fatal(err)
		}
		r := &runs[i]
		for j, res := range resp.Results {
			r.ids = append(r.ids, res.ID)
			if res.ID == c.Answer && r.rank == 0 {
				r.rank = j + 1
			}
		}
		for _, d := range resp.Degraded {
			r.skipped = r.skipped || (d.Stage == "vector" && strings.Contains(d.Reason, "the vector leg was skipped"))
		}
	}
	return runs
}

// recallOf returns R@1, R@5 and MRR of runs, and how many skipped the
// vector leg.
func recallOf(runs []rankRun) (r1, r5, mrr float64, skipped int) {
	for _, r := range runs {
		if r.rank == 1 {
			r1++
		}
		if r.rank > 0 {
			r5++
			mrr += 1 / float64(r.rank)
		}
		if r.skipped {
			skipped++
		}
	}
	n := float64(len(runs))
	return r1 / n, r5 / n, mrr / n, skipped
}
