package eval

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/engram-memory/engram/internal/golden"
	"github.com/engram-memory/engram/memory"
)

// fixtureDataset has two corpora; the fake store's rankings for it are worked
// out by hand in TestRunHandWorked.
func fixtureDataset() *Dataset {
	return &Dataset{
		Name:       "fixture",
		Notes:      []string{"1 query skipped while loading"},
		Skipped:    1,
		Categories: map[int]string{1: "one", 2: "two"},
		Corpora: []Corpus{
			{
				Name: "alpha",
				Docs: []*memory.Memory{
					{ID: "a1", Name: "pets", Text: "the cat sat on the mat"},
					{ID: "a2", Description: "feline friends", Text: "dogs bark loudly"},
					{ID: "a3", Name: "shopping", Text: "cat food and dog food"},
				},
				Cases: []Case{
					{ID: "q1", Text: "cat mat", Gold: map[string]int{"a1": 1}, Category: 1},
					{ID: "q2", Text: "feline", Gold: map[string]int{"a2": 1}, Category: 2},
					{ID: "q3", Text: "food", Gold: map[string]int{"a3": 2, "a1": 1}, Category: 1},
				},
			},
			{
				Name: "beta",
				Docs: []*memory.Memory{
					{ID: "b1", Description: "weather", Text: "rain in spain"},
					{ID: "b2", Text: "sunny weather today"},
				},
				Cases: []Case{
					{ID: "q4", Text: "weather", Gold: map[string]int{"b1": 1}, Category: 2},
					{ID: "q5", Text: "snow", Gold: map[string]int{"b2": 1}, Category: 2},
					{ID: "q6", Text: "rain", Gold: map[string]int{"b1": 0}, Category: 2},
				},
			},
		},
	}
}

var fixtureMetrics = []string{Hit1, Recall5, NDCG10, MRR, Any5}

func mustModes(t testing.TB, spec string) []Mode {
	t.Helper()
	m, err := ParseModes(spec)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func runFixture(t testing.TB, opener *fakeOpener, opt Options) *Report {
	t.Helper()
	if opt.Metrics == nil {
		opt.Metrics = fixtureMetrics
	}
	rep, err := Run(context.Background(), fixtureDataset(), opener.open, mustModes(t, "bm25,vector,hybrid,hybrid:w=0.5"), opt)
	if err != nil {
		t.Fatal(err)
	}
	return rep
}

// TestRunHandWorked checks Run's means against rankings worked out by hand.
// bm25 (query words in text): q1 [a1 a3] hit; q2 []; q3 [a3] (nDCG 2/(2+1/log2 3)
// = 0.760184, recall 1/2); q4 [b2] miss; q5 []. Means over 5 (q6 has no relevant
// judgement): hit@1 2/5, recall@5 1.5/5, nDCG@10 1.760184/5, MRR 2/5.
// vector (words in name+description): q2 [a2] and q4 [b1] hit, rest empty: 2/5.
// hybrid (sum): q1, q2 hit; q3 as bm25; q4 b1 and b2 tie at 1, b1 first by id: hit.
// hybrid:w=0.5: q4 ranks b2 (1) above b1 (0.5): MRR 1/2, nDCG 1/log2 3.
func TestRunHandWorked(t *testing.T) {
	rep := runFixture(t, &fakeOpener{}, Options{})
	q3 := 2 / (2 + 1/1.584962500721156)
	want := map[string]Metrics{
		"bm25":         {Hit1: 0.4, Recall5: 0.3, NDCG10: (1 + q3) / 5, MRR: 0.4, Any5: 0.4},
		"vector":       {Hit1: 0.4, Recall5: 0.4, NDCG10: 0.4, MRR: 0.4, Any5: 0.4},
		"hybrid":       {Hit1: 0.8, Recall5: 0.7, NDCG10: (3 + q3) / 5, MRR: 0.8, Any5: 0.8},
		"hybrid:w=0.5": {Hit1: 0.6, Recall5: 0.7, NDCG10: (2 + q3 + 0.630930) / 5, MRR: 0.7, Any5: 0.8},
	}
	if rep.Queries != 5 || rep.Skipped != 2 || rep.Docs != 5 || rep.Corpora != 2 {
		t.Errorf("counts: queries %d skipped %d docs %d corpora %d, want 5 2 5 2", rep.Queries, rep.Skipped, rep.Docs, rep.Corpora)
	}
	for _, m := range rep.Modes {
		t.Run(m.Name, func(t *testing.T) {
			assertMetrics(t, m.Metrics, want[m.Name], 1e-5)
			if m.Queries != 5 {
				t.Errorf("queries = %d, want 5", m.Queries)
			}
		})
	}
	bm := rep.Modes[0]
	if len(bm.Categories) != 2 || bm.Categories[0].Queries != 2 || bm.Categories[1].Queries != 3 ||
		bm.Categories[0].Metrics[Hit1] != 1 || bm.Categories[1].Metrics[Hit1] != 0 || bm.Categories[0].Name != "one" {
		t.Errorf("bm25 categories = %+v, want one: 2 queries hit@1 1, two: 3 queries hit@1 0", bm.Categories)
	}
}

func TestRunQueriesAndStores(t *testing.T) {
	opener := &fakeOpener{setup: func(s *fakeStore) { s.mutate = true }}
	ds := fixtureDataset()
	rep, err := Run(context.Background(), ds, opener.open, mustModes(t, "bm25,hybrid+mmr:w=0.2"), Options{Limit: 7, BatchSize: 2})
	if err != nil {
		t.Fatal(err)
	}
	if len(opener.stores) != 2 {
		t.Fatalf("opened %d stores, want one per corpus (2)", len(opener.stores))
	}
	for i, s := range opener.stores {
		if s.closed != 1 {
			t.Errorf("store %d closed %d times, want 1", i, s.closed)
		}
		if len(s.queries) != 2*len(ds.Corpora[i].Cases)-2*i { // q6 (corpus 2) is not run
			t.Errorf("store %d got %d queries", i, len(s.queries))
		}
		for _, q := range s.queries {
			if !q.NoRecord || q.Limit != 7 || q.QID == "" {
				t.Errorf("query %+v: want NoRecord, limit 7 and a qid", q)
			}
			if q.Mode == memory.ModeHybrid && (!q.MMR || q.VectorWeight == nil || *q.VectorWeight != 0.2 || *q.BM25Weight != 1) {
				t.Errorf("hybrid query %+v: want mmr, w=0.2, bw=1", q)
			}
		}
	}
	if ds.Corpora[0].Docs[0].Text != "the cat sat on the mat" {
		t.Errorf("the store's changes leaked into the data set: %q", ds.Corpora[0].Docs[0].Text)
	}
	if rep.Limit != 7 || len(rep.Metrics) != len(AllMetrics) {
		t.Errorf("limit %d metrics %v: want 7 and all metrics (data set names none)", rep.Limit, rep.Metrics)
	}
}

func TestRunWorkersMatchSerial(t *testing.T) {
	serial := runFixture(t, &fakeOpener{}, Options{Workers: 1, KeepQueries: true})
	parallel := runFixture(t, &fakeOpener{setup: func(s *fakeStore) { s.delay = time.Millisecond }}, Options{Workers: 4, KeepQueries: true})
	for i := range serial.Modes {
		a, b := serial.Modes[i], parallel.Modes[i]
		assertMetrics(t, b.Metrics, a.Metrics, 1e-12)
		if len(a.PerQuery) != 5 || len(b.PerQuery) != 5 {
			t.Fatalf("%s: per-query %d and %d, want 5", a.Name, len(a.PerQuery), len(b.PerQuery))
		}
		for j := range a.PerQuery {
			if a.PerQuery[j].ID != b.PerQuery[j].ID || strings.Join(a.PerQuery[j].Top, ",") != strings.Join(b.PerQuery[j].Top, ",") {
				t.Errorf("%s query %d: serial %+v, parallel %+v", a.Name, j, a.PerQuery[j], b.PerQuery[j])
			}
		}
	}
	if parallel.Modes[0].LatencyMS.P50 < 0.5 {
		t.Errorf("latency p50 %.3f ms, want at least the injected 1 ms delay", parallel.Modes[0].LatencyMS.P50)
	}
}

func TestRunDegraded(t *testing.T) {
	rep := runFixture(t, &fakeOpener{setup: func(s *fakeStore) { s.noEmbedder = true }}, Options{})
	v := rep.Modes[1]
	if v.Strategies["bm25"] != 5 || v.Degraded["vector: no embedder configured"] != 5 {
		t.Errorf("vector mode: strategies %v degraded %v, want 5 bm25 fallbacks", v.Strategies, v.Degraded)
	}
	var b bytes.Buffer
	if err := rep.WriteTable(&b); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(b.String(), "degraded: vector: 5 of 5 searches: vector: no embedder configured") {
		t.Errorf("table does not report the fallback:\n%s", b.String())
	}
}

func TestRunErrors(t *testing.T) {
	boom := errors.New("boom")
	cancelled, cancel := context.WithCancel(context.Background())
	cancel()
	cases := []struct {
		name    string
		ctx     context.Context
		opener  *fakeOpener
		modes   string
		opt     Options
		ds      *Dataset
		want    string
		closed  bool // every opened store must be closed
		wantErr error
	}{
		{name: "open fails", opener: &fakeOpener{openErr: boom}, want: "open store", wantErr: boom},
		{name: "add fails", opener: &fakeOpener{setup: func(s *fakeStore) { s.addErr = boom }}, want: "add memories 1-3", closed: true, wantErr: boom},
		{name: "search fails", opener: &fakeOpener{setup: func(s *fakeStore) { s.failQuery = "food" }}, want: "mode bm25: query q3", closed: true},
		{name: "search fails in parallel", opt: Options{Workers: 3}, opener: &fakeOpener{setup: func(s *fakeStore) { s.failQuery = "feline" }}, want: "query q2", closed: true},
		{name: "nil response", opener: &fakeOpener{setup: func(s *fakeStore) { s.nilResponse = true }}, want: "no response", closed: true},
		{name: "close fails", opener: &fakeOpener{setup: func(s *fakeStore) { s.closeErr = boom }}, want: "close store", closed: true, wantErr: boom},
		{name: "cancelled", ctx: cancelled, opener: &fakeOpener{}, want: "context canceled", closed: true, wantErr: context.Canceled},
		{name: "duplicate mode", opener: &fakeOpener{}, modes: "dup", want: "unique"},
		{name: "unknown metric", opener: &fakeOpener{}, opt: Options{Metrics: []string{"p@3"}}, want: "unknown metric"},
		{name: "no data set", opener: &fakeOpener{}, ds: &Dataset{}, want: "required"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			ctx := tc.ctx
			if ctx == nil {
				ctx = context.Background()
			}
			modes := mustModes(t, "bm25,vector")
			if tc.modes == "dup" {
				modes = append(modes, modes[0])
			}
			ds := fixtureDataset()
			if tc.ds != nil {
				ds = nil
			}
			_, err := Run(ctx, ds, tc.opener.open, modes, tc.opt)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err = %v, want it to mention %q", err, tc.want)
			}
			if tc.wantErr != nil && !errors.Is(err, tc.wantErr) {
				t.Errorf("err = %v, want it to wrap %v", err, tc.wantErr)
			}
			for i, s := range tc.opener.stores {
				if tc.closed && s.closed != 1 {
					t.Errorf("store %d closed %d times, want 1", i, s.closed)
				}
			}
		})
	}
}

// fixedLatency makes a report's timings deterministic for golden files.
func fixedLatency(rep *Report) {
	for i := range rep.Modes {
		rep.Modes[i].LatencyMS = Latency{P50: 0.25 * float64(i+1), P95: 0.5 * float64(i+1), Max: float64(i + 1), Mean: 0.3}
	}
	rep.IngestSeconds = 0
}

func goldenReport(t testing.TB) *Report {
	t.Helper()
	rep := runFixture(t, &fakeOpener{}, Options{})
	fixedLatency(rep)
	rep.Anchors = []Anchor{
		{Dataset: "fixture", Name: "Published <BM25> & co", Metrics: map[string]float64{Hit1: 0.55, NDCG10: 0.6}, Source: "test"},
	}
	return rep
}

func checkGolden(t *testing.T, name string, got []byte) {
	t.Helper()
	golden.Check(t, filepath.Join("testdata", name), got)
}

func TestWriteTableGolden(t *testing.T) {
	var b bytes.Buffer
	if err := goldenReport(t).WriteTable(&b); err != nil {
		t.Fatal(err)
	}
	checkGolden(t, "report.txt", b.Bytes())
}

func TestWriteSVGGolden(t *testing.T) {
	var b bytes.Buffer
	if err := goldenReport(t).WriteSVG(&b); err != nil {
		t.Fatal(err)
	}
	// Well-formed XML, and the anchor's name escaped.
	dec := xmlDecoder(b.Bytes())
	for {
		_, err := dec.Token()
		if err != nil {
			if err.Error() != "EOF" {
				t.Fatalf("svg is not well-formed XML: %v", err)
			}
			break
		}
	}
	if !strings.Contains(b.String(), "Published &lt;BM25&gt; &amp; co (published)") {
		t.Error("svg legend lacks the escaped anchor name")
	}
	checkGolden(t, "report.svg", b.Bytes())
}

func TestWriteJSONRoundTrip(t *testing.T) {
	rep := goldenReport(t)
	var b bytes.Buffer
	if err := rep.WriteJSON(&b); err != nil {
		t.Fatal(err)
	}
	var back Report
	if err := json.Unmarshal(b.Bytes(), &back); err != nil {
		t.Fatal(err)
	}
	if back.Dataset != rep.Dataset || back.Queries != rep.Queries || len(back.Modes) != len(rep.Modes) ||
		len(back.Anchors) != 1 || back.Categories[2] != "two" || back.Modes[3].Name != "hybrid:w=0.5" {
		t.Fatalf("round trip lost data: %+v", back)
	}
	for i := range rep.Modes {
		assertMetrics(t, back.Modes[i].Metrics, rep.Modes[i].Metrics, 0)
		if back.Modes[i].LatencyMS != rep.Modes[i].LatencyMS || len(back.Modes[i].Categories) != 2 {
			t.Errorf("mode %d: latency or categories lost", i)
		}
	}
}

type failWriter struct{}

func (failWriter) Write([]byte) (int, error) { return 0, errors.New("disk full") }

func TestWritersReturnErrors(t *testing.T) {
	rep := goldenReport(t)
	for name, write := range map[string]func() error{
		"table": func() error { return rep.WriteTable(failWriter{}) },
		"json":  func() error { return rep.WriteJSON(failWriter{}) },
		"svg":   func() error { return rep.WriteSVG(failWriter{}) },
	} {
		if err := write(); err == nil || !strings.Contains(err.Error(), "disk full") {
			t.Errorf("%s: err = %v, want the writer's error", name, err)
		}
	}
}

func TestLatencyNearestRank(t *testing.T) {
	ms := make([]float64, 20)
	for i := range ms {
		ms[i] = float64(20 - i) // 20..1
	}
	got := latency(ms)
	// Nearest rank: p50 = 10th smallest = 10, p95 = 19th smallest = 19.
	if got.P50 != 10 || got.P95 != 19 || got.P99 != 20 || got.Max != 20 || got.Mean != 10.5 {
		t.Errorf("latency = %+v, want p50 10 p95 19 max 20 mean 10.5", got)
	}
	if (latency(nil) != Latency{}) || latency([]float64{3}).P95 != 3 {
		t.Error("empty or single-value latency wrong")
	}
}

func BenchmarkRun(b *testing.B) {
	for _, n := range []int{100, 1000} {
		b.Run("docs="+strconv.Itoa(n), func(b *testing.B) {
			ds := &Dataset{Name: "bench", Corpora: []Corpus{{Name: "c"}}}
			c := &ds.Corpora[0]
			for i := range n {
				c.Docs = append(c.Docs, &memory.Memory{ID: fmt.Sprint("d", i), Text: fmt.Sprintf("word%d word%d common", i, i%17)})
			}
			for i := range 50 {
				c.Cases = append(c.Cases, Case{ID: fmt.Sprint("q", i), Text: fmt.Sprintf("word%d", i%17), Gold: map[string]int{fmt.Sprint("d", i): 1}})
			}
			modes := mustModes(b, "bm25,hybrid")
			open := func(context.Context) (Store, error) { return &fakeStore{}, nil }
			b.ReportAllocs()
			for b.Loop() {
				if _, err := Run(context.Background(), ds, open, modes, Options{}); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
