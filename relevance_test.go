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
	raw, err := os.ReadFile(filepath.Join("testdata", "relevance", "queries.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	var cases []relevanceCase
	sc := bufio.NewScanner(bytes.NewReader(raw))
	for sc.Scan() {
		var c relevanceCase
		if err := json.Unmarshal(sc.Bytes(), &c); err != nil {
			t.Fatal(err)
		}
		cases = append(cases, c)
	}

	var rankings, stats bytes.Buffer
	fmt.Fprintf(&stats, "%-7s %9s %9s %6s  (%d queries, embedder %s)\n", "mode", "recall@1", "recall@5", "mrr", len(cases), db.Embedder().Model())
	for _, mode := range []string{"bm25", "vector", "hybrid"} {
		var r1, r5, mrr float64
		fmt.Fprintf(&rankings, "== %s\n", mode)
		for _, c := range cases {
			resp, err := db.Search(ctx, engram.Query{Query: c.Query, Mode: mode, Limit: 5, NoRecord: true})
			if err != nil {
				t.Fatal(err)
			}
			ids := make([]string, len(resp.Results))
			rank := 0
			for i, r := range resp.Results {
				ids[i] = r.ID
				if r.ID == c.Answer && rank == 0 {
					rank = i + 1
				}
			}
			if rank == 1 {
				r1++
			}
			if rank > 0 {
				r5++
				mrr += 1 / float64(rank)
			}
			fmt.Fprintf(&rankings, "%-45q %-12s rank %d: %s\n", c.Query, c.Answer, rank, strings.Join(ids, " "))
		}
		n := float64(len(cases))
		fmt.Fprintf(&stats, "%-7s %9.3f %9.3f %6.3f\n", mode, r1/n, r5/n, mrr/n)
	}
	checkGolden(t, filepath.Join("testdata", "relevance", "rankings.txt"), rankings.String())
	checkGolden(t, filepath.Join("testdata", "relevance", "rank_stats.txt"), stats.String())
}
