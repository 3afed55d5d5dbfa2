package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/engram-memory/engram/internal/eval"
)

func init() { register(newEval) }

// evalFlags are the options of engram eval.
type evalFlags struct {
	dataset, data, split, modes string
	level, anchors              string
	jsonOut, svgOut, tmp        string
	queryPrefix                 string
	date, plain                 bool
	neighbours, limit, workers  int
	batch, conversations, skip  int
	perQuery                    bool
	// Long prompts: questions padded to longPrompt bytes (locomo), and
	// the long-query constants to measure with (longQuery, "T,K,W").
	longPrompt int
	longFirst  bool
	longQuery  string
	// The delivery measure (--dataset delivery).
	bars       string
	target     float64
	floor, bar float64
}

func newEval(e *env) *cobra.Command {
	var f evalFlags
	c := &cobra.Command{
		Use:   "eval --dataset scifact|locomo|delivery",
		Short: "Measure retrieval quality on a public benchmark, mode by mode, or inject's delivery",
		Long: `Measure retrieval quality on a public benchmark. Each corpus is loaded into a
fresh temporary store (the configured embedder, builtin by default), every mode
answers every query without recording uses, and the rankings are scored with
trec_eval semantics. The table goes to stdout with the published anchors
beside it; --json and --svg write the report and a chart; progress goes to stderr.

Data sets (under --data, default $ENGRAM_DATA, else ../shared/data):
  scifact  BEIR layout: scifact/corpus.jsonl[.gz], queries.test.tsv[.gz], qrels.test.txt
  locomo   locomo/locomo-dev.json: each conversation is a store, its questions the queries;
           each session an episode of turns with their speakers and date (--locomo-plain:
           each turn "speaker: text" alone, the published setup); the report breaks the
           headline metric down by category and by whether the question names a date
--data may also name the data set's own directory (or, for locomo, its JSON file).

Modes (--modes, comma-separated): bm25, vector, hybrid; "sweep" for hybrid at
vector weights 0…1; variants such as hybrid:w=0.2, hybrid:fusion=rsf,
hybrid:kg=0.15 (the keyword gate), hybrid+mmr:lambda=0.5,
hybrid:candidates=200; hybrid:long=BYTES/TERMS/WINDOW
(with /ends, /wt) runs with other long-query settings (docs/evaluation.md):
with --long-prompt, each locomo question padded to about that many bytes
with another conversation's turns, question last (--long-prompt-first: first).

--dataset delivery measures inject as shipped (limit 5, the model's relevance
bar) for the configured embedder: the share of answerable LoCoMo questions it
delivers a gold turn for, and the share of questions about absent topics
(LoCoMo questions against SciFact, SciFact questions against each
conversation) it answers with nothing, at each bar of --bars, at the model's
bar, and at the smallest bar that leaves --target of each absent set empty:
the value to give the model in config.go's ModelDefaults. It then asks the
same questions on keywords alone, as inject answers them when the vector leg
is missing (no embedder, or one down or slow), for the keyword-only bar
(KeywordRelevance), and ends with each state's row at its bar. Needs locomo/
and scifact/ under --data.`,
		Example: `  engram eval --dataset scifact --modes bm25,vector,hybrid,sweep --svg scifact.svg
  engram eval --dataset locomo --level session --modes bm25,hybrid --json locomo.json
  ENGRAM_EMBEDDER=builtin engram eval --dataset delivery`,
		Args: args(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, _ []string) error { return e.runEval(cmd, f) },
	}
	fl := c.Flags()
	fl.StringVar(&f.dataset, "dataset", "", "scifact (or any BEIR-layout directory) or locomo")
	fl.StringVar(&f.data, "data", "", "data directory (default $ENGRAM_DATA, else ../shared/data)")
	fl.StringVar(&f.split, "split", "test", "BEIR split whose queries and qrels are used")
	fl.StringVar(&f.modes, "modes", "bm25,vector,hybrid", "comma-separated modes to compare (see above)")
	fl.StringVar(&f.level, "level", eval.LevelTurn, "locomo retrieval unit: turn or session")
	fl.BoolVar(&f.plain, "locomo-plain", false, "locomo: the published setup: each turn \"speaker: text\" alone, no episode, speaker or date fields")
	fl.BoolVar(&f.date, "locomo-date", false, "locomo: put each session's date in its units' description")
	fl.IntVar(&f.neighbours, "locomo-neighbours", 0, "locomo: add this many previous and next turns as context (turn level)")
	fl.IntVar(&f.conversations, "locomo-conversations", 0, "locomo: use only the first N conversations (0: all)")
	fl.IntVar(&f.skip, "locomo-skip", 0, "locomo: leave out the first N conversations (with --locomo-conversations, a held-out part: choose on the first N, check on the rest)")
	fl.IntVar(&f.limit, "limit", eval.DefaultLimit, "results asked of each search (1–1000)")
	fl.IntVar(&f.workers, "workers", 1, "searches in flight at once (1 keeps latencies clean)")
	fl.IntVar(&f.batch, "batch", 5000, "memories added per transaction")
	fl.StringVar(&f.jsonOut, "json", "", "also write the report as JSON to this file (- for stdout instead of the table)")
	fl.StringVar(&f.svgOut, "svg", "", "also write an SVG chart (modes × metrics) to this file")
	fl.StringVar(&f.anchors, "anchors", "builtin", "published rows: builtin, none, or a JSON file of anchors")
	fl.BoolVar(&f.perQuery, "per-query", false, "keep every query's scores and top ids (delivery: every question's candidates) in the JSON report")
	fl.IntVar(&f.longPrompt, "long-prompt", 0, "locomo: pad each question to about this many bytes with another conversation's turns, the question last, as a hook's prompt (0: none)")
	fl.BoolVar(&f.longFirst, "long-prompt-first", false, "locomo: with --long-prompt, put the question first")
	fl.StringVar(&f.queryPrefix, "query-prefix", "", "prefix each query's text for the vector leg, memories as they are (a model's query instruction)")
	fl.StringVar(&f.tmp, "tmp", "", "directory for the temporary stores (default the system's)")
	fl.StringVar(&f.bars, "bars", "", "delivery: relevance bars to tabulate (default 0,.05,.08,.1,.12,.14,.16,.18,.2,.25,.3)")
	fl.Float64Var(&f.target, "target", 0.9, "delivery: the share of each absent-topic set the suggested bar leaves empty")
	fl.Float64Var(&f.floor, "relevance-floor", 0, "delivery: the model's relevance floor to measure with (default the model's)")
	fl.Float64Var(&f.bar, "relevance-bar", 0, "delivery: the model's bar to measure with (default the model's)")
	return c
}

func (e *env) runEval(cmd *cobra.Command, f evalFlags) error {
	if err := f.check(); err != nil {
		return usageError{err}
	}
	if strings.EqualFold(f.dataset, "delivery") {
		return e.runDeliveryEval(cmd, f)
	}
	modes, err := eval.ParseModes(f.modes)
	if err != nil {
		return usagef("eval: --modes: %v", err)
	}
	anchors, err := f.loadAnchors()
	if err != nil {
		return err
	}
	opts, err := optionsFromEnv()
	if err != nil {
		return err
	}
	if f.queryPrefix != "" {
		if opts.Embedder == nil {
			return usagef("eval: --query-prefix needs ENGRAM_EMBEDDER to name a model")
		}
		opts.Embedder = &queryPrefixed{Embedder: opts.Embedder, prefix: f.queryPrefix}
	}
	start := time.Now()
	ds, err := f.load()
	if err != nil {
		return err
	}
	if f.longPrompt != 0 {
		if !strings.EqualFold(f.dataset, "locomo") {
			return usagef("eval: --long-prompt needs --dataset locomo")
		}
		if err := eval.PadQuestions(ds, f.longPrompt, f.longFirst); err != nil {
			return usagef("eval: --long-prompt: %v", err)
		}
	}
	docs, cases := ds.Counts()
	fmt.Fprintf(e.stderr, "eval: %s loaded in %s: %d stores, %d memories, %d queries, %d modes\n",
		ds.Name, time.Since(start).Round(time.Millisecond), len(ds.Corpora), docs, cases, len(modes))
	open, err := evalOpener(opts, f.tmp, e.location(), func(reason string) {
		fmt.Fprintln(e.stderr, "eval: warning: memories stored without vectors: "+reason)
	})
	if err != nil {
		return err
	}
	rep, err := eval.Run(cmd.Context(), ds, open, modes, eval.Options{
		Limit: f.limit, Workers: f.workers, BatchSize: f.batch, KeepQueries: f.perQuery, Progress: e.stderr,
	})
	if err != nil {
		return err
	}
	rep.Anchors = eval.AnchorsFor(anchors, rep.Dataset)
	fmt.Fprintf(e.stderr, "eval: done in %s (ingest %.1fs)\n", time.Since(start).Round(time.Millisecond), rep.IngestSeconds)
	if f.svgOut != "" {
		if err := writeFile(f.svgOut, rep.WriteSVG); err != nil {
			return err
		}
	}
	switch f.jsonOut {
	case "-":
		return rep.WriteJSON(e.stdout)
	case "":
	default:
		if err := writeFile(f.jsonOut, rep.WriteJSON); err != nil {
			return err
		}
	}
	return rep.WriteTable(e.stdout)
}

// check validates the flags that need no files.
func (f *evalFlags) check() error {
	switch {
	case f.dataset == "":
		return fmt.Errorf("eval: --dataset is required (scifact or locomo)")
	case f.limit < 1 || f.limit > 1000:
		return fmt.Errorf("eval: --limit %d: want 1–1000", f.limit)
	case f.workers < 1 || f.workers > 64:
		return fmt.Errorf("eval: --workers %d: want 1–64", f.workers)
	case f.batch < 1:
		return fmt.Errorf("eval: --batch %d: want a positive number", f.batch)
	case f.level != eval.LevelTurn && f.level != eval.LevelSession:
		return fmt.Errorf("eval: --level %q: want turn or session", f.level)
	case f.neighbours < 0 || f.conversations < 0 || f.skip < 0:
		return fmt.Errorf("eval: --locomo-neighbours, --locomo-conversations and --locomo-skip must not be negative")
	}
	return nil
}

// dataDir is --data, else $ENGRAM_DATA, else ../shared/data.
func (f *evalFlags) dataDir() string {
	if f.data != "" {
		return f.data
	}
	if d := os.Getenv("ENGRAM_DATA"); d != "" {
		return d
	}
	return filepath.Join("..", "shared", "data")
}

// skippedAll is the usage error naming --locomo-skip when err says it left
// no conversation of the file, and nil otherwise.
func (f *evalFlags) skippedAll(err error) error {
	if errors.Is(err, eval.ErrSkippedAll) {
		return usagef("eval: --locomo-skip %d: %v", f.skip, err)
	}
	return nil
}

// load finds and loads the data set. A missing or malformed file is the
// caller's to fix: a usage error.
func (f *evalFlags) load() (*eval.Dataset, error) {
	root := f.dataDir()
	if _, err := os.Stat(root); err != nil {
		return nil, usagef("eval: data directory: %v (set --data or $ENGRAM_DATA)", err)
	}
	var ds *eval.Dataset
	var err error
	if strings.EqualFold(f.dataset, "locomo") {
		path := root
		if st, serr := os.Stat(root); serr == nil && st.IsDir() {
			path = filepath.Join(root, "locomo", "locomo-dev.json")
			if p := firstFile(filepath.Join(root, "locomo-dev.json")); p != "" {
				path = p
			}
		}
		ds, err = eval.LoadLoCoMo(path, eval.LoCoMoOptions{
			Level: f.level, WithSpeaker: f.plain, Episodes: !f.plain, WithDate: f.date, Neighbours: f.neighbours, Conversations: f.conversations, Skip: f.skip,
		})
	} else {
		dir := filepath.Join(root, f.dataset)
		if isBEIRDir(root) {
			dir = root
		}
		ds, err = eval.LoadBEIR(dir, f.split)
	}
	if err := f.skippedAll(err); err != nil {
		return nil, err
	}
	if err != nil {
		return nil, usagef("eval: %v", err)
	}
	return ds, nil
}

// isBEIRDir reports whether dir holds a BEIR corpus itself.
func isBEIRDir(dir string) bool {
	return firstFile(filepath.Join(dir, "corpus.jsonl"), filepath.Join(dir, "corpus.jsonl.gz")) != ""
}

// firstFile returns the first path that exists as a regular file, else "".
func firstFile(paths ...string) string {
	for _, p := range paths {
		if st, err := os.Stat(p); err == nil && st.Mode().IsRegular() {
			return p
		}
	}
	return ""
}

// loadAnchors resolves --anchors.
func (f *evalFlags) loadAnchors() ([]eval.Anchor, error) {
	switch f.anchors {
	case "builtin", "":
		return eval.PublishedAnchors(), nil
	case "none":
		return nil, nil
	}
	a, err := eval.LoadAnchors(f.anchors)
	if err != nil {
		return nil, usagef("eval: --anchors: %v", err)
	}
	return a, nil
}

// writeFile creates path and fills it with write, reporting either failure
// with the path.
func writeFile(path string, write func(io.Writer) error) error {
	out, err := os.Create(path)
	if err != nil {
		return usagef("%v", err)
	}
	if err := write(out); err != nil {
		out.Close()
		return fmt.Errorf("%s: %w", path, err)
	}
	if err := out.Close(); err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	return nil
}
