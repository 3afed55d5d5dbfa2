package eval

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"slices"
	"sort"
	"sync"
	"time"

	"github.com/engram-memory/engram/memory"
)

// Defaults for Options.
const (
	// DefaultLimit is the results asked of each search: enough for recall@100.
	DefaultLimit = 100
	// DefaultBatchSize is the memories handed to each Store.Add call.
	DefaultBatchSize = 1000
)

// Options tunes a Run. The zero value takes the defaults.
type Options struct {
	// Limit is the number of results each search asks for (DefaultLimit).
	Limit int
	// Workers is the number of searches in flight at once (default 1, which keeps
	// the latency figures free of contention).
	Workers int
	// BatchSize is the number of memories per Store.Add (DefaultBatchSize).
	BatchSize int
	// Metrics are the report's columns; default the data set's, else AllMetrics.
	Metrics []string
	// KeepQueries records every query's scores and top ids in the report.
	KeepQueries bool
	// Progress, when set, gets one line per corpus loaded and per mode run.
	Progress io.Writer
}

// Report is the outcome of a Run: per mode, mean metrics over every query of
// every corpus, per-category means and search latency.
type Report struct {
	Dataset    string         `json:"dataset"`
	Corpora    int            `json:"corpora"`
	Docs       int            `json:"docs"`
	Queries    int            `json:"queries"`
	Skipped    int            `json:"skipped"`
	Notes      []string       `json:"notes,omitempty"`
	Limit      int            `json:"limit"`
	Metrics    []string       `json:"metrics"`
	Categories map[int]string `json:"categories,omitempty"`
	// IngestSeconds is the total time spent in Store.Add over all corpora.
	IngestSeconds float64      `json:"ingest_seconds"`
	Modes         []ModeResult `json:"modes"`
	// Anchors are published results shown beside ours; Run leaves it empty.
	Anchors []Anchor `json:"anchors,omitempty"`
}

// ModeResult is one mode's outcome.
type ModeResult struct {
	Name       string           `json:"name"`
	Queries    int              `json:"queries"`
	Metrics    Metrics          `json:"metrics"`
	Categories []CategoryResult `json:"categories,omitempty"`
	// Groups are the means over each group of questions (Case.Groups).
	Groups    []GroupResult `json:"groups,omitempty"`
	LatencyMS Latency       `json:"latency_ms"`
	// Strategies counts the strategy each search reported it ran (a vector mode
	// that fell back to bm25 shows here).
	Strategies map[string]int `json:"strategies,omitempty"`
	// Degraded counts "stage: reason" over searches that skipped or degraded a stage.
	Degraded map[string]int `json:"degraded,omitempty"`
	PerQuery []QueryResult  `json:"per_query,omitempty"`
}

// CategoryResult is a mode's mean metrics over one question category.
type CategoryResult struct {
	Category int     `json:"category"`
	Name     string  `json:"name,omitempty"`
	Queries  int     `json:"queries"`
	Metrics  Metrics `json:"metrics"`
}

// GroupResult is a mode's mean metrics over one group of questions.
type GroupResult struct {
	Name    string  `json:"name"`
	Queries int     `json:"queries"`
	Metrics Metrics `json:"metrics"`
}

// Latency summarises Store.Search wall times in milliseconds (nearest rank).
type Latency struct {
	P50  float64 `json:"p50"`
	P95  float64 `json:"p95"`
	P99  float64 `json:"p99"`
	Max  float64 `json:"max"`
	Mean float64 `json:"mean"`
}

// QueryResult is one query's outcome, kept when Options.KeepQueries is set.
type QueryResult struct {
	Corpus   string   `json:"corpus"`
	ID       string   `json:"id"`
	Category int      `json:"category,omitempty"`
	Groups   []string `json:"groups,omitempty"`
	Metrics  Metrics  `json:"metrics"`
	Top      []string `json:"top"`
}

// Run evaluates every mode on the data set: for each corpus it opens a fresh
// store, adds the corpus's memories, runs every case under every mode
// (recording no uses, so earlier searches cannot boost later ones), closes the
// store and scores the rankings. Cases without a relevant judgement are skipped.
func Run(ctx context.Context, ds *Dataset, open Opener, modes []Mode, opt Options) (*Report, error) {
	if ds == nil || open == nil {
		return nil, errors.New("eval run: data set and opener are required")
	}
	rep, err := newReport(ds, modes, &opt)
	if err != nil {
		return nil, err
	}
	acc := make([]modeAcc, len(modes))
	for ci := range ds.Corpora {
		c := &ds.Corpora[ci]
		if err := runCorpus(ctx, c, ci, rep, open, modes, acc, opt); err != nil {
			return nil, fmt.Errorf("eval %s, corpus %s: %w", ds.Name, c.Name, err)
		}
	}
	for i, m := range modes {
		rep.Modes[i] = acc[i].result(m.Name, rep.Metrics, ds.Categories)
	}
	return rep, nil
}

func newReport(ds *Dataset, modes []Mode, opt *Options) (*Report, error) {
	if len(modes) == 0 {
		return nil, errors.New("eval run: no modes")
	}
	seen := map[string]bool{}
	for _, m := range modes {
		if m.Name == "" || seen[m.Name] {
			return nil, fmt.Errorf("eval run: mode names must be unique and non-empty (%q)", m.Name)
		}
		seen[m.Name] = true
	}
	if opt.Limit <= 0 {
		opt.Limit = DefaultLimit
	}
	opt.Workers = max(opt.Workers, 1)
	if opt.BatchSize <= 0 {
		opt.BatchSize = DefaultBatchSize
	}
	metrics := opt.Metrics
	if len(metrics) == 0 {
		metrics = ds.Metrics
	}
	if len(metrics) == 0 {
		metrics = AllMetrics
	}
	for _, m := range metrics {
		if !slices.Contains(AllMetrics, m) {
			return nil, fmt.Errorf("eval run: unknown metric %q (have %v)", m, AllMetrics)
		}
	}
	rep := &Report{
		Dataset: ds.Name, Corpora: len(ds.Corpora), Skipped: ds.Skipped, Limit: opt.Limit,
		Notes: slices.Clone(ds.Notes), Metrics: slices.Clone(metrics), Categories: ds.Categories,
		Modes: make([]ModeResult, len(modes)),
	}
	unjudged := 0
	for _, c := range ds.Corpora {
		rep.Docs += len(c.Docs)
		for _, cs := range c.Cases {
			if relevantCount(cs.Gold) == 0 {
				unjudged++
			} else {
				rep.Queries++
			}
		}
	}
	if unjudged > 0 {
		rep.Skipped += unjudged
		rep.Notes = append(rep.Notes, fmt.Sprintf("%d cases without a relevant judgement not run", unjudged))
	}
	return rep, nil
}

func runCorpus(ctx context.Context, c *Corpus, ci int, rep *Report, open Opener, modes []Mode, acc []modeAcc, opt Options) (err error) {
	store, err := open(ctx)
	if err != nil {
		return fmt.Errorf("open store: %w", err)
	}
	defer func() {
		if cerr := store.Close(); cerr != nil {
			err = errors.Join(err, fmt.Errorf("close store: %w", cerr))
		}
	}()
	start := time.Now()
	for lo := 0; lo < len(c.Docs); lo += opt.BatchSize {
		if err := ctx.Err(); err != nil {
			return err
		}
		batch := make([]*memory.Memory, 0, min(opt.BatchSize, len(c.Docs)-lo))
		for _, d := range c.Docs[lo:min(lo+opt.BatchSize, len(c.Docs))] {
			cp := *d // the store may fill fields in; the data set stays as loaded
			batch = append(batch, &cp)
		}
		if err := store.Add(ctx, batch); err != nil {
			return fmt.Errorf("add memories %d-%d: %w", lo+1, lo+len(batch), err)
		}
	}
	ingest := time.Since(start)
	rep.IngestSeconds += ingest.Seconds()
	progressf(opt.Progress, "%s [%d/%d]: %d memories added in %s\n", c.Name, ci+1, rep.Corpora, len(c.Docs), ingest.Round(time.Millisecond))
	cases := make([]Case, 0, len(c.Cases))
	for _, cs := range c.Cases {
		if relevantCount(cs.Gold) > 0 {
			cases = append(cases, cs)
		}
	}
	defer DefaultLongQuery.set()
	for mi, m := range modes {
		start := time.Now()
		m.Long.set() // no search is in flight between modes
		outs, err := searchAll(ctx, store, cases, m, opt)
		if err != nil {
			return fmt.Errorf("mode %s: %w", m.Name, err)
		}
		for i, o := range outs {
			acc[mi].add(c.Name, cases[i], o, opt.KeepQueries)
		}
		progressf(opt.Progress, "%s [%d/%d]: %-16s %d queries in %s\n", c.Name, ci+1, rep.Corpora, m.Name, len(cases), time.Since(start).Round(time.Millisecond))
	}
	return nil
}

// searchOut is one search's ranking and bookkeeping.
type searchOut struct {
	ranked   []string
	took     time.Duration
	strategy string
	degraded []memory.Degraded
}

// searchAll runs every case under one mode with opt.Workers searches in flight,
// returning outputs in case order; the first error stops the rest.
func searchAll(ctx context.Context, store Store, cases []Case, m Mode, opt Options) ([]searchOut, error) {
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	outs := make([]searchOut, len(cases))
	next := make(chan int)
	var wg sync.WaitGroup
	for range min(opt.Workers, max(len(cases), 1)) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				if ctx.Err() != nil {
					continue // drain: an earlier query failed
				}
				o, err := searchOne(ctx, store, cases[i], m, opt.Limit)
				if err != nil {
					cancel(fmt.Errorf("query %s: %w", cases[i].ID, err))
					continue
				}
				outs[i] = o
			}
		}()
	}
feed:
	for i := range cases {
		select {
		case next <- i:
		case <-ctx.Done():
			break feed
		}
	}
	close(next)
	wg.Wait()
	if err := context.Cause(ctx); err != nil {
		return nil, err
	}
	return outs, nil
}

func searchOne(ctx context.Context, store Store, cs Case, m Mode, limit int) (searchOut, error) {
	q := memory.Query{QID: cs.ID, Query: cs.Text, Limit: limit}
	if m.Apply != nil {
		m.Apply(&q)
	}
	q.NoRecord = true
	start := time.Now()
	resp, err := store.Search(ctx, q)
	took := time.Since(start)
	if err != nil {
		return searchOut{}, err
	}
	if resp == nil {
		return searchOut{}, errors.New("store returned no response")
	}
	o := searchOut{took: took, strategy: resp.Strategy, degraded: resp.Degraded, ranked: make([]string, len(resp.Results))}
	for i, r := range resp.Results {
		o.ranked[i] = r.ID
	}
	return o, nil
}

// modeAcc sums one mode's scores over all corpora.
type modeAcc struct {
	n          int
	sum        Metrics
	catN       map[int]int
	catSum     map[int]Metrics
	groupN     map[string]int
	groupSum   map[string]Metrics
	groups     []string // in the order first seen
	took       []float64
	strategies map[string]int
	degraded   map[string]int
	perQuery   []QueryResult
}

func (a *modeAcc) add(corpus string, cs Case, o searchOut, keep bool) {
	s := Score(o.ranked, cs.Gold)
	if a.sum == nil {
		a.sum, a.catN, a.catSum = Metrics{}, map[int]int{}, map[int]Metrics{}
		a.groupN, a.groupSum = map[string]int{}, map[string]Metrics{}
		a.strategies, a.degraded = map[string]int{}, map[string]int{}
	}
	for _, g := range cs.Groups {
		if a.groupSum[g] == nil {
			a.groupSum[g] = Metrics{}
			a.groups = append(a.groups, g)
		}
		a.groupN[g]++
		addInto(a.groupSum[g], s)
	}
	a.n++
	addInto(a.sum, s)
	if cs.Category != 0 {
		a.catN[cs.Category]++
		if a.catSum[cs.Category] == nil {
			a.catSum[cs.Category] = Metrics{}
		}
		addInto(a.catSum[cs.Category], s)
	}
	a.took = append(a.took, float64(o.took)/float64(time.Millisecond))
	if o.strategy != "" {
		a.strategies[o.strategy]++
	}
	for _, d := range o.degraded {
		a.degraded[d.Stage+": "+d.Reason]++
	}
	if keep {
		a.perQuery = append(a.perQuery, QueryResult{Corpus: corpus, ID: cs.ID, Category: cs.Category, Groups: cs.Groups, Metrics: s, Top: o.ranked[:min(10, len(o.ranked))]})
	}
}

func (a *modeAcc) result(name string, metrics []string, catNames map[int]string) ModeResult {
	r := ModeResult{Name: name, Queries: a.n, Metrics: mean(a.sum, a.n, metrics), LatencyMS: latency(a.took), PerQuery: a.perQuery}
	if len(a.strategies) > 0 {
		r.Strategies = a.strategies
	}
	if len(a.degraded) > 0 {
		r.Degraded = a.degraded
	}
	cats := make([]int, 0, len(a.catN))
	for c := range a.catN {
		cats = append(cats, c)
	}
	sort.Ints(cats)
	for _, c := range cats {
		r.Categories = append(r.Categories, CategoryResult{Category: c, Name: catNames[c], Queries: a.catN[c], Metrics: mean(a.catSum[c], a.catN[c], metrics)})
	}
	groups := slices.Clone(a.groups)
	sort.Strings(groups)
	for _, g := range groups {
		r.Groups = append(r.Groups, GroupResult{Name: g, Queries: a.groupN[g], Metrics: mean(a.groupSum[g], a.groupN[g], metrics)})
	}
	return r
}

func addInto(dst, src Metrics) {
	for k, v := range src {
		dst[k] += v
	}
}

// mean divides the sums by n, keeping only the named metrics.
func mean(sum Metrics, n int, metrics []string) Metrics {
	out := make(Metrics, len(metrics))
	for _, m := range metrics {
		out[m] = safeDiv(sum[m], float64(n))
	}
	return out
}

// latency summarises durations (ms) by nearest rank: the p-th percentile is the
// smallest value with at least p% of the values at or below it.
func latency(ms []float64) Latency {
	if len(ms) == 0 {
		return Latency{}
	}
	s := slices.Clone(ms)
	sort.Float64s(s)
	rank := func(p float64) float64 {
		i := int(math.Ceil(p*float64(len(s)))) - 1
		return s[min(max(i, 0), len(s)-1)]
	}
	var total float64
	for _, v := range s {
		total += v
	}
	return Latency{P50: rank(0.50), P95: rank(0.95), P99: rank(0.99), Max: s[len(s)-1], Mean: total / float64(len(s))}
}

func relevantCount(gold map[string]int) int {
	n := 0
	for _, g := range gold {
		if g > 0 {
			n++
		}
	}
	return n
}

func progressf(w io.Writer, format string, args ...any) {
	if w != nil {
		fmt.Fprintf(w, format, args...)
	}
}
