// Command relevance measures Engram's relevance signal (explain.relevance) on
// real data: how often a relevance bar leaves nothing for questions the store
// cannot answer (LoCoMo's adversarial category, and queries about topics the
// store lacks), and how much recall it costs on answerable questions. It also
// compares alternative definitions of the signal. With -calibrate it instead
// checks engram calibrate's label-free vector weight against a real-label sweep.
//
//	go run ./tools/relevance -data ../shared/data
//	go run ./tools/relevance -data ../shared/data -calibrate
//	go run ./tools/relevance -data ../shared/data -adaptive
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/engram-memory/engram"
	"github.com/engram-memory/engram/internal/eval"
)

func main() {
	var (
		data    = flag.String("data", "../shared/data", "directory holding locomo/ and scifact/")
		pool    = flag.Int("pool", 30, "candidates looked at per query (the pipeline keeps max(limit, 30))")
		barList = flag.String("bars", "0.05,0.08,0.1,0.12,0.15,0.2,0.3,0.4,0.5,0.6", "relevance bars to tabulate")
		share   = flag.Float64("share", 0.9, "for the variant table: the share of absent-topic queries a bar must leave empty")
		all     = flag.Bool("variants", true, "also compare alternative definitions of the signal")
		calib   = flag.Bool("calibrate", false, "instead: compare engram calibrate's weight with a real-label sweep")
		adapt   = flag.Bool("adaptive", false, "instead: measure query-adaptive vector weights (identifier-heavy queries at 0)")
		samples = flag.Int("samples", engram.DefaultCalibrateSamples, "pseudo-queries per calibration (-calibrate)")
	)
	flag.Parse()
	bars, err := parseBars(*barList)
	if err == nil && *adapt {
		err = runAdaptive(context.Background(), os.Stdout, *data)
	} else if err == nil && *calib {
		err = runCalibrate(context.Background(), os.Stdout, *data, *samples)
	} else if err == nil {
		err = run(context.Background(), os.Stdout, *data, *pool, bars, *share, *all)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "relevance:", err)
		os.Exit(1)
	}
}

func parseBars(s string) ([]float64, error) {
	var out []float64
	for _, p := range strings.Split(s, ",") {
		b, err := strconv.ParseFloat(strings.TrimSpace(p), 64)
		if err != nil || b < 0 || b > 1 {
			return nil, fmt.Errorf("-bars: %q is not a number in [0,1]", p)
		}
		out = append(out, b)
	}
	return out, nil
}

func run(ctx context.Context, w io.Writer, data string, pool int, bars []float64, share float64, all bool) error {
	lc, sf, tmp, err := loadBoth(data, "engram-relevance-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)

	byKind := map[string][]*sample{}
	keep := func(s sample) { byKind[s.Kind] = append(byKind[s.Kind], &s) }
	sfStore, err := openStore(ctx, tmp, "scifact", sf.Corpora[0].Docs)
	if err != nil {
		return err
	}
	defer sfStore.db.Close()
	fmt.Fprintf(w, "store floors (mean cosine of 4000 random memory pairs, %s): scifact %.3f", sfStore.emb.Model(), sfStore.floor)
	for _, c := range sf.Corpora[0].Cases {
		s, err := sfStore.ask(ctx, kindSciFact, c, pool)
		if err != nil {
			return err
		}
		keep(s)
	}
	for _, conv := range lc.Corpora {
		st, err := openStore(ctx, tmp, conv.Name, conv.Docs)
		if err != nil {
			return err
		}
		fmt.Fprintf(w, ", %s %.3f", conv.Name, st.floor)
		for _, c := range conv.Cases {
			kind := kindAnswerable
			if c.Category == 5 {
				kind = kindAdversarial
			}
			s, err := st.ask(ctx, kind, c, pool)
			if err != nil {
				st.db.Close()
				return err
			}
			keep(s)
			// The same question against SciFact: a topic that store lacks.
			s, err = sfStore.ask(ctx, kindAbsentLC, eval.Case{ID: c.ID, Text: c.Text}, pool)
			if err != nil {
				st.db.Close()
				return err
			}
			keep(s)
		}
		for _, c := range sf.Corpora[0].Cases {
			s, err := st.ask(ctx, kindAbsentSF, eval.Case{ID: c.ID, Text: c.Text}, pool)
			if err != nil {
				st.db.Close()
				return err
			}
			keep(s)
		}
		st.db.Close()
	}
	fmt.Fprintln(w)
	kinds := []string{kindAnswerable, kindAdversarial, kindSciFact, kindAbsentSF, kindAbsentLC}
	fmt.Fprintf(w, "queries:")
	for _, k := range kinds {
		fmt.Fprintf(w, " %s %d", k, len(byKind[k]))
	}
	fmt.Fprintln(w)
	fmt.Fprintf(w, "mean over queries of the median query–memory cosine:")
	for _, k := range kinds {
		t := 0.0
		for _, s := range byKind[k] {
			t += s.QueryMedian
		}
		fmt.Fprintf(w, " %s %.3f", k, t/float64(max(1, len(byKind[k]))))
	}
	fmt.Fprintln(w)
	fmt.Fprintln(w, "\nexplain.relevance as the pipeline computes it, by bar (empty = share of queries left with nothing;")
	fmt.Fprintln(w, "R@5 = any gold turn in the 5 best results that clear the bar; SciFact nDCG@10):")
	writeBars(w, byKind, kinds, variants[0], bars)
	if all {
		writeVariants(w, byKind, share)
	}
	return nil
}

func writeBars(w io.Writer, byKind map[string][]*sample, kinds []string, v variant, bars []float64) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprint(tw, "bar\t")
	for _, k := range kinds {
		fmt.Fprintf(tw, "%s empty\t", k)
	}
	fmt.Fprint(tw, "answerable R@5\tcost\tscifact nDCG@10\tcost\t\n")
	base := measure(byKind[kindAnswerable], v, 0)
	sbase := measure(byKind[kindSciFact], v, 0)
	for _, b := range append([]float64{0}, bars...) {
		fmt.Fprintf(tw, "%.2f\t", b)
		for _, k := range kinds {
			fmt.Fprintf(tw, "%.1f%%\t", 100*measure(byKind[k], v, b).Empty)
		}
		a, s := measure(byKind[kindAnswerable], v, b), measure(byKind[kindSciFact], v, b)
		fmt.Fprintf(tw, "%.3f\t%+.3f\t%.3f\t%+.3f\t\n", a.Metric, a.Metric-base.Metric, s.Metric, s.Metric-sbase.Metric)
	}
	tw.Flush()
}

func writeVariants(w io.Writer, byKind map[string][]*sample, share float64) {
	absent := append(append([]*sample(nil), byKind[kindAbsentSF]...), byKind[kindAbsentLC]...)
	answerable := append(append([]*sample(nil), byKind[kindAnswerable]...), byKind[kindSciFact]...)
	fmt.Fprintf(w, "\nsignal variants: AUC of a query's top signal (answerable LoCoMo + SciFact vs absent-topic; LoCoMo\n")
	fmt.Fprintf(w, "answerable vs adversarial), then the bar leaving %.0f%% of absent-topic queries empty and its cost there:\n", 100*share)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprint(tw, "variant\tAUC ans/absent\tAUC ans/adv\tbar\tabsent empty\tadv empty\tans empty\tR@5 cost\tnDCG@10 cost\t\n")
	for _, v := range variants {
		tops := func(ss []*sample) []float64 {
			out := make([]float64, len(ss))
			for i, s := range ss {
				out[i] = top(s, v)
			}
			return out
		}
		bar := barFor(absent, v, share)
		a0, a := measure(byKind[kindAnswerable], v, 0), measure(byKind[kindAnswerable], v, bar)
		s0, s := measure(byKind[kindSciFact], v, 0), measure(byKind[kindSciFact], v, bar)
		fmt.Fprintf(tw, "%s\t%.3f\t%.3f\t%.3f\t%.1f%%\t%.1f%%\t%.1f%%\t%+.3f\t%+.3f\t\n", v.name,
			auc(tops(answerable), tops(absent)), auc(tops(byKind[kindAnswerable]), tops(byKind[kindAdversarial])),
			bar, 100*measure(absent, v, bar).Empty, 100*measure(byKind[kindAdversarial], v, bar).Empty,
			100*measure(answerable, v, bar).Empty, a.Metric-a0.Metric, s.Metric-s0.Metric)
	}
	tw.Flush()
}

// loadBoth loads LoCoMo dev (turn level) and SciFact from data and makes a
// temporary directory for the stores (the caller removes it).
func loadBoth(data, tmpPrefix string) (lc, sf *eval.Dataset, tmp string, err error) {
	if lc, err = eval.LoadLoCoMo(filepath.Join(data, "locomo", "locomo-dev.json"), eval.DefaultLoCoMoOptions()); err != nil {
		return nil, nil, "", err
	}
	if sf, err = eval.LoadBEIR(filepath.Join(data, "scifact"), "test"); err != nil {
		return nil, nil, "", err
	}
	tmp, err = os.MkdirTemp("", tmpPrefix)
	return lc, sf, tmp, err
}
