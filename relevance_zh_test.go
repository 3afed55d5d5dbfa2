package engram_test

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"unicode"

	"github.com/engram-memory/engram"
	"github.com/engram-memory/engram/embed/builtin"
	_ "github.com/engram-memory/engram/embed/builtin/minilm"       // zhModels measures it
	_ "github.com/engram-memory/engram/embed/builtin/multilingual" // zhModels measures it
	"github.com/engram-memory/engram/internal/tokenize"
)

// The Chinese relevance set (testdata/relevance/zh, issue 28): paraphrased
// queries that share no CJK bigram with their memory, distractors, and
// questions about topics no memory covers. TestRelevanceChinese measures it
// per model and mode into golden files; rewrite them with
// go test -run RelevanceChinese -update.

// zhModels are the built-in models (embed/builtin names) the set is measured
// with, each with the R@5 its vector leg must reach (issue 28 asks .8 of a
// multilingual model; 0 for one that does not read Chinese and so skips the
// leg) and the R@5 its hybrid must reach: a new model is one more line here.
// Every model's hybrid must also reach BM25's R@5.
var zhModels = []struct {
	name               string
	vectorR5, hybridR5 float64
}{
	{builtin.MiniLM, 0, 0},
	{builtin.Static, 0, 0},
	{builtin.GloVe, 0, 0},
	{builtin.BGESmall, 0, 0},
	// multilingual-e5-small reads Chinese: .784 when added, under the .8
	// asked of it; the floor guards what it reaches. Its hybrid was .577
	// before the keyword gate (BM25's incidental bigram matches outranked
	// what the vector leg found) and .748 with it (config.go).
	{builtin.Multilingual, 0.75, 0.72},
}

// The regression guard: BM25's R@5 on the set when it was written (no query
// shares a bigram with its answer, so BM25 finds only the few that keep an
// identifier), and how far it may fall before the guard fails.
const (
	zhBM25Recall5 = 0.054
	zhMargin      = 0.02
)

var zhDir = filepath.Join("testdata", "relevance", "zh")

type zhMemory struct{ ID, Text string }

// zhSet is the set as files hold it.
type zhSet struct {
	memories []zhMemory
	cases    []relevanceCase
	absent   []string
}

func loadZH(tb testing.TB) zhSet {
	tb.Helper()
	s := zhSet{memories: readJSONL[zhMemory](tb, zhDir, "memories.jsonl"), cases: readJSONL[relevanceCase](tb, zhDir, "queries.jsonl")}
	for _, a := range readJSONL[relevanceCase](tb, zhDir, "absent.jsonl") {
		s.absent = append(s.absent, a.Query)
	}
	return s
}

// openZH opens a store with the named built-in model ("" for none: keyword
// search only) and imports the set's memories.
func openZH(t *testing.T, model string) *engram.DB {
	t.Helper()
	opts := engram.Options{NoEmbedder: model == ""}
	if model != "" {
		e, err := builtin.New(model)
		if err != nil {
			t.Fatal(err)
		}
		opts.Embedder = e
	}
	db := openTest(t, opts)
	f, err := os.Open(filepath.Join(zhDir, "memories.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := db.Import(context.Background(), f, engram.ImportOptions{}); err != nil {
		t.Fatal(err)
	}
	return db
}

// TestRelevanceChineseSet holds the set to what its README says: at least 100
// pairs, every answer a memory, ids unique, no query sharing a CJK bigram
// (BM25's term) with its memory, and few shared Han characters.
func TestRelevanceChineseSet(t *testing.T) {
	s := loadZH(t)
	if len(s.cases) < 100 || len(s.absent) < 20 {
		t.Fatalf("%d pairs and %d absent-topic queries, want ≥ 100 and ≥ 20", len(s.cases), len(s.absent))
	}
	text := map[string]string{}
	for _, m := range s.memories {
		if _, dup := text[m.ID]; dup || m.ID == "" || m.Text == "" {
			t.Fatalf("memory %q: empty or repeated id, or no text", m.ID)
		}
		text[m.ID] = m.Text
	}
	tok := tokenize.New(tokenize.DefaultOptions())
	cjkTerms := func(s string) map[string]bool {
		out := map[string]bool{}
		for _, term := range tok.Tokens(s) {
			if strings.IndexFunc(term, func(r rune) bool { return unicode.Is(unicode.Han, r) }) >= 0 {
				out[term] = true
			}
		}
		return out
	}
	han := func(s string) map[rune]bool {
		out := map[rune]bool{}
		for _, r := range s {
			if unicode.Is(unicode.Han, r) {
				out[r] = true
			}
		}
		return out
	}
	var share float64
	for _, c := range s.cases {
		mem, ok := text[c.Answer]
		if !ok {
			t.Fatalf("query %q: answer %q is no memory", c.Query, c.Answer)
		}
		mt := cjkTerms(mem)
		for term := range cjkTerms(c.Query) {
			if mt[term] {
				t.Errorf("query %q shares the term %q with its memory %s", c.Query, term, c.Answer)
			}
		}
		qh, mh := han(c.Query), han(mem)
		n := 0
		for r := range qh {
			if mh[r] {
				n++
			}
		}
		if len(qh) > 0 {
			share += float64(n) / float64(len(qh))
		}
	}
	if share /= float64(len(s.cases)); share > 0.15 {
		t.Errorf("a query's Han characters appear in its memory %.3f of the time on average, want ≤ .15", share)
	}
}

// zhDelivery runs inject at the model's bar for every answerable and every
// absent-topic query: how many answers it delivers, how many absent queries
// get nothing, and the bars it applied.
func zhDelivery(t *testing.T, db *engram.DB, s zhSet) (answers, empty int, bars []float64) {
	t.Helper()
	inject := func(q string) *engram.Injection {
		inj, err := db.Inject(context.Background(), q, engram.InjectOptions{NoRecord: true})
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Contains(bars, inj.MinRelevance) {
			bars = append(bars, inj.MinRelevance)
		}
		return inj
	}
	for _, c := range s.cases {
		for _, r := range inject(c.Query).Results {
			if r.ID == c.Answer {
				answers++
			}
		}
	}
	for _, q := range s.absent {
		if len(inject(q).Results) == 0 {
			empty++
		}
	}
	slices.Sort(bars)
	return answers, empty, bars
}

// TestRelevanceChinese measures the Chinese set: BM25 once (it does not
// depend on the model), the vector leg and the hybrid per model, and what
// inject delivers at each model's bar. Where a model does not read a query
// the vector leg is skipped, and the hybrid must then rank as BM25 does.
func TestRelevanceChinese(t *testing.T) {
	s := loadZH(t)
	var rankings, stats, delivery bytes.Buffer
	fmt.Fprintf(&stats, "%-24s %-7s %9s %9s %6s  %s  (%d queries, %d memories)\n", "model", "mode", "recall@1", "recall@5", "mrr", "vector leg skipped", len(s.cases), len(s.memories))
	fmt.Fprintf(&delivery, "\ninject at the model's bar: answers delivered, absent-topic queries (%d) given nothing\n", len(s.absent))
	fmt.Fprintf(&delivery, "%-24s %-12s %8s %13s\n", "model", "bar", "answers", "absent empty")
	row := func(model, mode string, runs []rankRun) {
		r1, r5, mrr, skipped := recallOf(runs)
		fmt.Fprintf(&stats, "%-24s %-7s %9.3f %9.3f %6.3f  %d/%d\n", model, mode, r1, r5, mrr, skipped, len(runs))
		fmt.Fprintf(&rankings, "== %s %s\n", model, mode)
		for i, r := range runs {
			fmt.Fprintf(&rankings, "%-40q %-20s rank %d: %s\n", s.cases[i].Query, s.cases[i].Answer, r.rank, strings.Join(r.ids, " "))
		}
	}
	deliver := func(model string, db *engram.DB) {
		answers, empty, bars := zhDelivery(t, db, s)
		// Issue 28: a Chinese query never gets irrelevant memories injected,
		// whichever model reads it (multilingual by its non-Latin bar).
		if empty != len(s.absent) {
			t.Errorf("%s: inject delivered memories for %d of the %d absent-topic questions", model, len(s.absent)-empty, len(s.absent))
		}
		b := make([]string, len(bars))
		for i, x := range bars {
			b[i] = fmt.Sprintf("%.3g", x)
		}
		fmt.Fprintf(&delivery, "%-24s %-12s %4d/%-3d %9d/%d\n", model, strings.Join(b, ","), answers, len(s.cases), empty, len(s.absent))
	}

	kw := openZH(t, "")
	bm25 := searchAll(t, kw, s.cases, "bm25")
	row("(keyword-only)", "bm25", bm25)
	deliver("(keyword-only)", kw)
	_, bm25R5, _, _ := recallOf(bm25)
	if bm25R5 < zhBM25Recall5-zhMargin {
		t.Errorf("BM25 R@5 on the Chinese set fell to %.3f, below the %.3f measured when the guard was written (margin %.2f)", bm25R5, zhBM25Recall5, zhMargin)
	}

	for _, m := range zhModels {
		db := openZH(t, m.name)
		model := db.Embedder().Model()
		vector := searchAll(t, db, s.cases, "vector")
		row(model, "vector", vector)
		hybrid := searchAll(t, db, s.cases, "hybrid")
		row(model, "hybrid", hybrid)
		if _, r5, _, _ := recallOf(vector); r5 < m.vectorR5 {
			t.Errorf("%s: vector R@5 %.3f on the Chinese set, want ≥ %.2f", model, r5, m.vectorR5)
		}
		if _, r5, _, _ := recallOf(hybrid); r5 < bm25R5 || r5 < m.hybridR5 {
			t.Errorf("%s: hybrid R@5 %.3f on the Chinese set, want ≥ %.2f and ≥ BM25's %.3f", model, r5, m.hybridR5, bm25R5)
		}
		for i, r := range hybrid {
			if r.skipped && !slices.Equal(r.ids, bm25[i].ids) {
				t.Errorf("%s: %q skipped the vector leg, yet its hybrid ranking %v is not BM25's %v", model, s.cases[i].Query, r.ids, bm25[i].ids)
			}
		}
		deliver(model, db)
	}
	checkGolden(t, filepath.Join(zhDir, "rankings.txt"), rankings.String())
	checkGolden(t, filepath.Join(zhDir, "rank_stats.txt"), stats.String()+delivery.String())
}
