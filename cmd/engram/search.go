package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/engram-memory/engram"
	"github.com/engram-memory/engram/internal/excerpt"
	"github.com/engram-memory/engram/internal/format"
	"github.com/engram-memory/engram/internal/jsonerr"
	"github.com/engram-memory/engram/internal/tokenize"
	"github.com/engram-memory/engram/internal/when"
	"github.com/engram-memory/engram/memory"
)

// searchFlags are the query options a command line can give.
type searchFlags struct {
	limit, candidates            int
	mode, typ, scene, source     string
	fusion, since, until         string
	scope, tags                  []string
	vectorWeight, lambda, minRel float64
	rrfK, keywordGate            float64
	rerank, mmr, hyde, noRecord  bool
	record                       bool
	batch                        string
	context                      bool
	budget                       int
	episode, asOf, now           string
	allVersions, noDates         bool
	neighbours                   int
}

func init() { register(newSearch) }

func newSearch(e *env) *cobra.Command {
	var f searchFlags
	c := &cobra.Command{
		Use:   "search QUERY...",
		Short: "Recall memories for a query (hybrid BM25 + vector, explained)",
		Long: `Recall memories for a query (its words are joined: quotes are optional). The
default output explains each result: its BM25 rank and score, vector rank and
cosine, fused score, boosts and relevance (0 to 1). --json gives the full
response, the search result JSON of the API; --context gives compact text for an
LLM's context, a long memory shown as the passage that best matches the query.

Results are ranked, not judged: a weak match is still listed. Its relevance says
how much the legs agree it is about the query; a result at or above the
embedding model's relevance bar (relevance_bar in --json) counts as a use of the
memory (--no-record: none), the rest do not. --min-relevance drops results below
a bar of your own.

With --batch FILE (or - for stdin), each line is a JSON query object
({"qid", "query", "limit", "scope", "type", ...}); one JSON response a line comes
out in the same order with qid echoed. Flags apply to lines that do not set their
own. A batch records no use unless --record is given.

Time: a date phrase in the query ("on 9 February, 2023", "in May 2023", "last
week", "two years ago", "去年", "2023年5月") is read as a window of time, relative
to --now; memories that occurred inside it rank higher (explain.boosts.time, and
"time" in --json says which phrase was read as which window). It never hides a
memory: --since and --until do. A search returns what is current: a memory
another supersedes is left out, unless --include-superseded, or --as-of TIME for
what was current then.`,
		Args: func(cmd *cobra.Command, a []string) error {
			if f.batch != "" {
				return args(cobra.NoArgs)(cmd, a)
			}
			return args(cobra.MinimumNArgs(1))(cmd, a)
		},
		RunE: func(cmd *cobra.Command, a []string) error {
			base, err := f.query(cmd)
			if err != nil {
				return usageError{err}
			}
			if f.batch == "" && base.Mode != memory.ModeBM25 && !base.HyDE {
				e.firstQuery = strings.Join(a, " ")
			}
			return e.withStore(cmd.Context(), func(db store) error {
				if f.batch != "" {
					base.NoRecord = !f.record // a batch is a measurement: no use unless asked
					return e.searchBatch(cmd, db, base, f.batch)
				}
				base.Query = strings.Join(a, " ")
				resp, err := db.Search(cmd.Context(), base)
				if err != nil {
					return err
				}
				if e.json {
					return format.JSON(e.stdout, resp, false)
				}
				e.printHints(degradedHints(resp.Degraded))
				if f.context {
					// Long memories as excerpts: the passage that best matches the query.
					q := excerpt.ForResponse(tokenize.New(tokenize.DefaultOptions()), base.Query, resp.Reduced)
					_, text := format.FitContext(resp.Results, format.ContextOptions{Budget: f.budget, Passage: q.Passage})
					_, err := io.WriteString(e.stdout, text)
					return err
				}
				return format.Explained(e.stdout, resp)
			})
		},
	}
	fl := c.Flags()
	fl.IntVar(&f.limit, "limit", 10, "number of results (1–1000)")
	fl.StringVar(&f.mode, "mode", "hybrid", "hybrid, bm25 or vector")
	fl.StringVar(&f.typ, "type", "", "only memories of this type")
	fl.StringVar(&f.scene, "scene", "", "only memories of this scene")
	fl.StringVar(&f.source, "source", "", "only memories from this source")
	fl.StringArrayVar(&f.scope, "scope", nil, "only memories in scope key=value (repeatable)")
	fl.StringArrayVar(&f.tags, "tag", nil, "only memories with this tag (repeatable: all must hold)")
	fl.StringVar(&f.since, "since", "", "created at or after: RFC 3339, YYYY-MM-DD, or an age such as 7d or 12h")
	fl.StringVar(&f.until, "until", "", "created before: same forms as --since")
	fl.StringVar(&f.fusion, "fusion", "", "rrf (reciprocal rank), rsf (relative score) or dbsf (distribution-based); default the embedding model's (rsf for the built-in)")
	fl.Float64Var(&f.vectorWeight, "vector-weight", 0, "vector leg weight for this query, BM25's being 1 (default: the store's calibrated weight, else the model's)")
	fl.Float64Var(&f.rrfK, "rrf-k", 0, "RRF's k for this query (default: the model's, 60 unless measured otherwise)")
	fl.Float64Var(&f.keywordGate, "keyword-gate", 0, "keyword relevance (0–1) BM25's best match must reach to keep BM25's whole weight in a hybrid; 0 turns the gate off (default: the model's)")
	fl.IntVar(&f.candidates, "candidates", 0, "per-leg candidate pool (default max(5×limit, 50))")
	fl.BoolVar(&f.rerank, "rerank", false, "rerank the top candidates with the configured cross-encoder")
	fl.BoolVar(&f.mmr, "mmr", false, "diversify with MMR over stored vectors")
	fl.Float64Var(&f.lambda, "lambda", 0, "MMR λ: relevance vs diversity, 0 to 1 (default 0.7)")
	fl.BoolVar(&f.hyde, "hyde", false, "embed an LLM-written hypothetical memory instead of the query")
	fl.Float64Var(&f.minRel, "min-relevance", 0, "drop results whose relevance (0–1) is below this")
	fl.BoolVar(&f.noRecord, "no-record", false, "do not count the relevant results as a use")
	fl.BoolVar(&f.record, "record", false, "--batch: count each line's relevant results as a use")
	fl.StringVar(&f.batch, "batch", "", "JSONL file of queries, or - for stdin")
	fl.BoolVar(&f.context, "context", false, "compact text for an LLM's context, only results at or above the model's relevance bar (unless --min-relevance)")
	fl.IntVar(&f.budget, "budget", 2000, "character budget of --context output (0: unlimited)")
	fl.StringVar(&f.episode, "episode", "", "only memories of this episode")
	fl.StringVar(&f.asOf, "as-of", "", "what was current then (superseded later memories included, newer ones left out): same forms as --since")
	fl.BoolVar(&f.allVersions, "include-superseded", false, "also return memories another memory supersedes")
	fl.StringVar(&f.now, "now", "", "the time relative date phrases (\"last week\") are read from: RFC 3339 or YYYY-MM-DD (default: now)")
	fl.BoolVar(&f.noDates, "no-dates", false, "do not read date phrases in the query as time windows to boost")
	fl.IntVar(&f.neighbours, "neighbours", 0, fmt.Sprintf("show each result of an episode with this many turns before and after it (0–%d)", memory.MaxNeighbours))
	return viaDaemon(c)
}

// query builds the query the flags describe (without its text).
func (f *searchFlags) query(cmd *cobra.Command) (memory.Query, error) {
	q := memory.Query{Limit: f.limit, Mode: f.mode, Fusion: f.fusion, RRFK: f.rrfK, Candidates: f.candidates,
		Rerank: f.rerank, MMR: f.mmr, HyDE: f.hyde, MinRelevance: f.minRel, NoRecord: f.noRecord,
		IncludeSuperseded: f.allVersions, NoDates: f.noDates, Neighbours: f.neighbours}
	q.Episode = f.episode
	if f.limit <= 0 {
		return q, fmt.Errorf("--limit %d: must be at least 1", f.limit)
	}
	if f.budget < 0 {
		return q, fmt.Errorf("--budget %d: must be 0 (unlimited) or more", f.budget)
	}
	q.Type, q.Scene, q.Source, q.Tags = f.typ, f.scene, f.source, f.tags
	scope, err := memory.ParseScope(f.scope...)
	if err != nil {
		return q, fmt.Errorf("--scope: %w", err)
	}
	q.Scope = scope
	now := time.Now()
	for _, t := range []struct {
		flag, v string
		dst     **time.Time
	}{{"--since", f.since, &q.Since}, {"--until", f.until, &q.Until}, {"--as-of", f.asOf, &q.AsOf}, {"--now", f.now, &q.Now}} {
		if t.v == "" {
			continue
		}
		at, err := when.Parse(t.v, now)
		if err != nil {
			return q, fmt.Errorf("%s: %w", t.flag, err)
		}
		*t.dst = &at
	}
	if cmd.Flags().Changed("keyword-gate") {
		g := f.keywordGate
		q.KeywordGate = &g
	}
	if cmd.Flags().Changed("vector-weight") {
		w := f.vectorWeight
		q.VectorWeight = &w
	}
	// --context is text for an LLM's context: like inject, only what clears
	// the model's relevance bar, unless --min-relevance says otherwise.
	q.ModelBar = f.context && !cmd.Flags().Changed("min-relevance")
	if cmd.Flags().Changed("lambda") {
		l := f.lambda
		q.Lambda = &l
	}
	return q, nil
}

// batchError is a batch line's answer when its query could not run.
type batchError struct {
	QID   string `json:"qid,omitempty"`
	Line  int    `json:"line"`
	Error string `json:"error"`
}

// searchBatch answers one JSON query a line, in order. A bad line gets an
// error object in its place; the command then exits 2.
func (e *env) searchBatch(cmd *cobra.Command, db store, base memory.Query, path string) error {
	var in io.Reader = e.stdin
	if path != "-" {
		f, err := os.Open(path)
		if err != nil {
			return usagef("--batch: %v", err)
		}
		defer f.Close()
		in = f
	}
	sc := bufio.NewScanner(in)
	sc.Buffer(make([]byte, 64<<10), maxHookInput+64<<10) // a query line as long as a hook's prompt
	out := bufio.NewWriter(e.stdout)
	defer out.Flush()
	line, failed := 0, 0
	for sc.Scan() {
		line++
		b := bytes.TrimSpace(sc.Bytes())
		if len(b) == 0 {
			continue
		}
		q, err := batchQuery(base, b)
		var resp *memory.Response
		if err == nil {
			resp, err = db.Search(cmd.Context(), q)
		}
		if err != nil {
			if !errors.Is(err, engram.ErrInvalidQuery) && !errors.Is(err, engram.ErrInvalid) {
				return fmt.Errorf("line %d: %w", line, err)
			}
			failed++
			if err := format.JSON(out, batchError{QID: q.QID, Line: line, Error: err.Error()}, true); err != nil {
				return err
			}
			continue
		}
		if err := format.JSON(out, resp, true); err != nil {
			return err
		}
	}
	if err := sc.Err(); err != nil {
		return usagef("--batch line %d: %v", line+1, err)
	}
	if failed > 0 {
		return usagef("--batch: %d of %d lines were invalid (see their error objects)", failed, line)
	}
	return nil
}

// batchQuery overlays one JSON line on the flags' query.
func batchQuery(base memory.Query, b []byte) (memory.Query, error) {
	q := base
	var keys map[string]json.RawMessage
	if err := json.Unmarshal(b, &keys); err != nil {
		return q, fmt.Errorf("%w: not a JSON object: %v", engram.ErrInvalidQuery, jsonerr.Describe(err, b))
	}
	if _, ok := keys["scope"]; ok {
		q.Scope = nil
	}
	if _, ok := keys["tags"]; ok {
		q.Tags = nil
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&q); err != nil {
		return q, fmt.Errorf("%w: %v", engram.ErrInvalidQuery, jsonerr.Describe(err, b, "since", "until", "as_of", "now"))
	}
	return q, nil
}
