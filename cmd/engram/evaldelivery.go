package main

import (
	"context"
	"fmt"
	"io"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/engram-memory/engram"
	"github.com/engram-memory/engram/internal/eval"
	"github.com/engram-memory/engram/internal/format"
	"github.com/engram-memory/engram/memory"
)

// deliveryPool is how many candidates inject's search keeps before its bar
// and limit (recall keeps max(limit, 30) fused candidates from pools of
// max(5×limit, 50) per leg): asking for that many, from the same pools, gives
// exactly the list inject filters.
const (
	deliveryPool       = 30
	deliveryCandidates = 50
)

// runDeliveryEval is engram eval --dataset delivery: the inject delivery rate
// on answerable LoCoMo questions and the empty rate on absent-topic questions,
// per relevance bar, for the configured embedder (see internal/eval/delivery.go).
func (e *env) runDeliveryEval(cmd *cobra.Command, f evalFlags) error {
	bars := eval.DefaultDeliveryBars
	if f.bars != "" {
		var err error
		if bars, err = parseBars(f.bars); err != nil {
			return usageError{err}
		}
	}
	if !(f.target > 0 && f.target <= 1) {
		return usagef("eval: --target %g: want a share in (0, 1]", f.target)
	}
	opts, err := optionsFromEnv()
	if err != nil {
		return err
	}
	opts.SQLite.NoSnapshot = true
	if cmd.Flags().Changed("relevance-floor") {
		opts.VectorFloor = &f.floor
	}
	if cmd.Flags().Changed("relevance-bar") {
		opts.RelevanceBar = &f.bar
	}
	root := f.dataDir()
	start := time.Now()
	lc, err := eval.LoadLoCoMo(filepath.Join(root, "locomo", "locomo-dev.json"),
		eval.LoCoMoOptions{Level: eval.LevelTurn, WithSpeaker: true, Conversations: f.conversations, Skip: f.skip})
	if err := f.skippedAll(err); err != nil {
		return err
	}
	if err != nil {
		return usagef("eval: %v (set --data or $ENGRAM_DATA)", err)
	}
	sf, err := eval.LoadBEIR(filepath.Join(root, "scifact"), f.split)
	if err != nil {
		return usagef("eval: %v (set --data or $ENGRAM_DATA)", err)
	}
	ctx := cmd.Context()
	open := func(name string, docs []*memory.Memory) (*engram.DB, func(), error) {
		opener, err := evalOpener(opts, f.tmp, e.location(), nil)
		if err != nil {
			return nil, nil, err
		}
		st, err := opener(ctx)
		if err != nil {
			return nil, nil, err
		}
		es := st.(*evalStore)
		for lo := 0; lo < len(docs); lo += f.batch {
			if err := es.Add(ctx, docs[lo:min(lo+f.batch, len(docs))]); err != nil {
				es.Close()
				return nil, nil, fmt.Errorf("%s: %w", name, err)
			}
		}
		return es.db, func() { es.Close() }, nil
	}
	sfDB, closeSF, err := open("scifact", sf.Corpora[0].Docs)
	if err != nil {
		return err
	}
	defer closeSF()
	model := describeEmbedder(sfDB)
	fmt.Fprintf(e.stderr, "eval: delivery, model %s: data loaded and SciFact indexed in %s\n", model, time.Since(start).Round(time.Millisecond))

	// qs are the questions as the configured embedder answers them; kqs the
	// same on keywords alone, as every search runs when the vector leg is
	// missing (no embedder, or one down or slow): the keyword-only bar's row;
	// vqs on the vector leg alone (mode vector): the vector-only bar's row.
	var qs, kqs, vqs []*eval.DeliveryQuestion
	rep := &eval.DeliveryReport{} // the check's counts
	modelBar, vectorBar := -1.0, -1.0
	hasModel := !opts.NoEmbedder
	ask := func(db *engram.DB, set string, c eval.Case, check bool) error {
		q, strategy, err := deliveryQuestion(ctx, db, set, c, "")
		if err != nil {
			return err
		}
		if modelBar < 0 && strategy != memory.StrategyBM25 {
			modelBar = q.Bar // the model's, as a search with its vector leg reports it
		}
		if hasModel {
			kq, _, err := deliveryQuestion(ctx, db, set, c, memory.ModeBM25)
			if err != nil {
				return err
			}
			kqs = append(kqs, kq)
			vq, _, err := deliveryQuestion(ctx, db, set, c, memory.ModeVector)
			if err != nil {
				return err
			}
			if vectorBar < 0 {
				vectorBar = vq.Bar
			}
			vqs = append(vqs, vq)
		}
		if check {
			inj, err := db.Inject(ctx, c.Text, engram.InjectOptions{NoRecord: true})
			if err != nil {
				return fmt.Errorf("inject %s: %w", c.ID, err)
			}
			got := make([]string, len(inj.Results))
			for i, r := range inj.Results {
				got[i] = r.ID
			}
			rep.Checked++
			if !slices.Equal(got, q.Delivered(q.Bar, engram.DefaultInjectLimit)) {
				rep.Mismatched++
			}
		}
		qs = append(qs, q)
		return nil
	}
	for _, c := range sf.Corpora[0].Cases {
		if err := ask(sfDB, eval.SetSciFact, c, true); err != nil {
			return err
		}
	}
	for ci, conv := range lc.Corpora {
		db, closeConv, err := open(conv.Name, conv.Docs)
		if err != nil {
			return err
		}
		for _, c := range conv.Cases {
			set := eval.SetAnswerable
			if c.Category == 5 {
				set = eval.SetAdversarial
			}
			if err := ask(db, set, c, true); err != nil {
				closeConv()
				return err
			}
			if err := ask(sfDB, eval.SetAbsentLC, eval.Case{ID: c.ID, Text: c.Text}, true); err != nil {
				closeConv()
				return err
			}
		}
		for _, c := range sf.Corpora[0].Cases {
			if err := ask(db, eval.SetAbsentSF, eval.Case{ID: c.ID, Text: c.Text}, true); err != nil {
				closeConv()
				return err
			}
		}
		closeConv()
		fmt.Fprintf(e.stderr, "eval: delivery: conversation %d of %d done (%s)\n", ci+1, len(lc.Corpora), time.Since(start).Round(time.Second))
	}
	if modelBar < 0 {
		modelBar = engram.KeywordRelevance // every search ran on keywords alone
	}
	out := eval.MeasureDelivery(qs, model, modelBar, engram.DefaultInjectLimit, bars, f.target)
	out.Checked, out.Mismatched = rep.Checked, rep.Mismatched
	out.Notes = append(out.Notes, lc.Notes...)
	if hasModel {
		out.KeywordOnly = eval.MeasureDelivery(kqs, eval.KeywordOnly, engram.KeywordRelevance, engram.DefaultInjectLimit, bars, f.target)
		out.VectorOnly = eval.MeasureDelivery(vqs, eval.VectorOnly, vectorBar, engram.DefaultInjectLimit, bars, f.target)
	} else {
		out.Model = eval.KeywordOnly + " (" + out.Model + ")"
	}
	if f.perQuery {
		out.Questions = qs
		if out.KeywordOnly != nil {
			out.KeywordOnly.Questions, out.VectorOnly.Questions = kqs, vqs
		}
	}
	switch f.jsonOut {
	case "":
	case "-":
		return format.JSON(e.stdout, out, false)
	default:
		if err := writeFile(f.jsonOut, func(w io.Writer) error { return format.JSON(w, out, false) }); err != nil {
			return err
		}
	}
	return out.WriteTable(e.stdout)
}

// deliveryQuestion asks one question of db as inject would, before its bar
// and limit, and keeps the candidates; mode bm25 asks it as inject would
// with the vector leg missing.
func deliveryQuestion(ctx context.Context, db *engram.DB, set string, c eval.Case, mode string) (*eval.DeliveryQuestion, string, error) {
	resp, err := db.Search(ctx, memory.Query{Query: c.Text, Mode: mode, Limit: deliveryPool, Candidates: deliveryCandidates, NoRecord: true})
	if err != nil {
		return nil, "", fmt.Errorf("question %s: %w", c.ID, err)
	}
	q := &eval.DeliveryQuestion{Set: set, ID: c.ID, Gold: c.Gold, Bar: resp.RelevanceBar}
	for _, r := range resp.Results {
		c := eval.DeliveryCand{ID: r.ID, Relevance: r.Explain.Relevance}
		if v := r.Explain.Vector; v != nil {
			c.Cosine = v.Cosine
		}
		q.Cands = append(q.Cands, c)
	}
	return q, resp.Strategy, nil
}

// parseBars reads "0,0.1,0.2".
func parseBars(s string) ([]float64, error) {
	var out []float64
	for _, p := range strings.Split(s, ",") {
		b, err := strconv.ParseFloat(strings.TrimSpace(p), 64)
		if err != nil || b < 0 || b > 1 {
			return nil, fmt.Errorf("eval: --bars: %q is not a bar in [0,1]", p)
		}
		out = append(out, b)
	}
	return out, nil
}
