package eval

import (
	"context"
	"math"
	"sort"
	"strings"

	"github.com/engram-memory/engram/memory"
	"os"
	"path/filepath"
	"testing"
)

// dataDir returns $ENGRAM_DATA, skipping the test when it is unset: unit tests
// never depend on the benchmark files.
func dataDir(t *testing.T) string {
	t.Helper()
	dir := os.Getenv("ENGRAM_DATA")
	if dir == "" {
		t.Skip("ENGRAM_DATA not set; skipping the real-data check")
	}
	return dir
}

// TestRealDataCounts checks the loaders against the counts in the data README.
func TestRealDataCounts(t *testing.T) {
	dir := dataDir(t)
	t.Run("scifact", func(t *testing.T) {
		ds, err := LoadBEIR(filepath.Join(dir, "scifact"), "test")
		if err != nil {
			t.Fatal(err)
		}
		docs, cases := ds.Counts()
		qrels := 0
		for _, c := range ds.Corpora[0].Cases {
			qrels += len(c.Gold)
		}
		if docs != 5183 || cases != 300 || qrels != 339 || ds.Skipped != 0 {
			t.Errorf("docs %d queries %d qrels %d skipped %d, want 5183 300 339 0 (notes %v)", docs, cases, qrels, ds.Skipped, ds.Notes)
		}
	})
	t.Run("locomo", func(t *testing.T) {
		path := filepath.Join(dir, "locomo", "locomo-dev.json")
		for _, level := range []string{LevelTurn, LevelSession} {
			ds, err := LoadLoCoMo(path, LoCoMoOptions{Level: level, WithSpeaker: true})
			if err != nil {
				t.Fatal(err)
			}
			docs, cases := ds.Counts()
			t.Logf("%s: %d units, %d questions, %d skipped; notes %q", level, docs, cases, ds.Skipped, ds.Notes)
			if len(ds.Corpora) != 5 || cases+ds.Skipped != 999 {
				t.Errorf("%s: %d conversations, %d questions + %d skipped, want 5 and 999", level, len(ds.Corpora), cases, ds.Skipped)
			}
			// Two questions have empty evidence; the other faults are repaired or dropped.
			if ds.Skipped != 2 {
				t.Errorf("%s: skipped %d, want 2", level, ds.Skipped)
			}
			if level == LevelTurn && docs != 2760 {
				t.Errorf("turns = %d, want 2760", docs)
			}
		}
	})
}

// bm25Store is a plain Okapi BM25 over lowercased alphanumeric tokens (no
// stemming, no stopwords) of name, description and text: enough to check the
// harness end to end against the published BM25 anchors.
type bm25Store struct {
	k1, b    float64
	ids      []string
	length   []float64
	postings map[string][]posting
}

type posting struct {
	doc int
	tf  float64
}

func (s *bm25Store) Add(_ context.Context, mems []*memory.Memory) error {
	if s.postings == nil {
		s.postings = map[string][]posting{}
	}
	for _, m := range mems {
		tf := map[string]int{}
		toks := words(m.Name + " " + m.Description + " " + m.Text)
		for _, w := range toks {
			tf[w]++
		}
		for w, n := range tf {
			s.postings[w] = append(s.postings[w], posting{len(s.ids), float64(n)})
		}
		s.ids, s.length = append(s.ids, m.ID), append(s.length, float64(len(toks)))
	}
	return nil
}

func (s *bm25Store) Search(_ context.Context, q memory.Query) (*memory.Response, error) {
	var avg float64
	for _, l := range s.length {
		avg += l
	}
	avg /= float64(max(len(s.length), 1))
	n := float64(len(s.ids))
	scores := make([]float64, len(s.ids))
	for _, w := range words(q.Query) {
		ps := s.postings[w]
		df := float64(len(ps))
		idf := math.Log(1 + (n-df+0.5)/(df+0.5))
		for _, p := range ps {
			scores[p.doc] += idf * p.tf * (s.k1 + 1) / (p.tf + s.k1*(1-s.b+s.b*s.length[p.doc]/avg))
		}
	}
	order := make([]int, 0, len(scores))
	for i, sc := range scores {
		if sc > 0 {
			order = append(order, i)
		}
	}
	sort.Slice(order, func(a, b int) bool {
		if scores[order[a]] != scores[order[b]] {
			return scores[order[a]] > scores[order[b]]
		}
		return s.ids[order[a]] < s.ids[order[b]]
	})
	resp := &memory.Response{Strategy: memory.StrategyBM25}
	for _, i := range order[:min(len(order), q.Limit)] {
		resp.Results = append(resp.Results, memory.Result{ID: s.ids[i], Score: scores[i]})
	}
	return resp, nil
}

func (s *bm25Store) Close() error { return nil }

// TestRealDataBM25 runs the harness with the plain BM25 above on both data sets
// and checks the results land near the published BM25 anchors.
func TestRealDataBM25(t *testing.T) {
	dir := dataDir(t)
	if testing.Short() {
		t.Skip("slow: skipped in -short")
	}
	modes := mustModes(t, "bm25")
	cases := []struct {
		name   string
		load   func() (*Dataset, error)
		k1, b  float64
		metric string
		lo, hi float64
	}{
		{"scifact", func() (*Dataset, error) { return LoadBEIR(filepath.Join(dir, "scifact"), "test") }, 0.9, 0.4, NDCG10, 0.60, 0.72},
		{"locomo-session", func() (*Dataset, error) {
			return LoadLoCoMo(filepath.Join(dir, "locomo", "locomo-dev.json"), LoCoMoOptions{Level: LevelSession, WithSpeaker: true})
		}, 1.5, 0.75, Any5, 0.70, 0.95},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			ds, err := tc.load()
			if err != nil {
				t.Fatal(err)
			}
			open := func(context.Context) (Store, error) { return &bm25Store{k1: tc.k1, b: tc.b}, nil }
			rep, err := Run(context.Background(), ds, open, modes, Options{Workers: 2})
			if err != nil {
				t.Fatal(err)
			}
			rep.Anchors = AnchorsFor(PublishedAnchors(), ds.Name)
			var b strings.Builder
			if err := rep.WriteTable(&b); err != nil {
				t.Fatal(err)
			}
			t.Logf("\n%s", b.String())
			if v := rep.Modes[0].Metrics[tc.metric]; v < tc.lo || v > tc.hi {
				t.Errorf("%s = %.4f, want within [%.2f, %.2f]", tc.metric, v, tc.lo, tc.hi)
			}
		})
	}
}
