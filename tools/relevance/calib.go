package main

import (
	"context"
	"fmt"
	"io"
	"math"
	"os"
	"text/tabwriter"

	"github.com/engram-memory/engram"
	"github.com/engram-memory/engram/internal/calibrate"
	"github.com/engram-memory/engram/internal/eval"
	"github.com/engram-memory/engram/memory"
)

// runCalibrate compares, per store, the weight engram calibrate picks without
// labels (each pseudo-query method) with the best weight of a sweep scored on
// the real labels (nDCG@10 on SciFact, R@5-any on each LoCoMo conversation).
func runCalibrate(ctx context.Context, w io.Writer, data string, samples int) error {
	lc, sf, tmp, err := loadBoth(data, "engram-calibrate-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	corpora := append([]eval.Corpus{{Name: "scifact", Docs: sf.Corpora[0].Docs, Cases: sf.Corpora[0].Cases}}, lc.Corpora...)
	weights := calibrate.DefaultWeights
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprint(tw, "store\tmetric\t")
	for _, wt := range weights {
		fmt.Fprintf(tw, "w=%g\t", wt)
	}
	fmt.Fprint(tw, "label best\t")
	for _, m := range calibrate.Methods {
		fmt.Fprintf(tw, "%s picks\t", m)
	}
	fmt.Fprint(tw, "\n")
	var pseudo [][]string
	for _, c := range corpora {
		st, err := openStore(ctx, tmp, c.Name, c.Docs)
		if err != nil {
			return err
		}
		metric := eval.Any5
		if c.Name == "scifact" {
			metric = eval.NDCG10
		}
		score := make([]float64, len(weights))
		best := 0
		for i, wt := range weights {
			for _, cs := range c.Cases {
				resp, err := st.db.Search(ctx, memory.Query{Query: cs.Text, Limit: 10, VectorWeight: &wt, NoRecord: true})
				if err != nil {
					st.db.Close()
					return err
				}
				ids := make([]string, len(resp.Results))
				for j, r := range resp.Results {
					ids[j] = r.ID
				}
				score[i] += eval.Score(ids, cs.Gold)[metric]
			}
			score[i] /= float64(len(c.Cases))
			if score[i] > score[best]+1e-9 {
				best = i
			}
		}
		fmt.Fprintf(tw, "%s\t%s\t", c.Name, metric)
		for _, s := range score {
			fmt.Fprintf(tw, "%.3f\t", s)
		}
		fmt.Fprintf(tw, "%g\t", weights[best])
		for _, m := range calibrate.Methods {
			res, err := st.db.Calibrate(ctx, engram.CalibrateOptions{Method: m, Samples: samples, DryRun: true})
			if err != nil {
				fmt.Fprintf(tw, "— (%v)\t", err)
				continue
			}
			at := score[indexOf(weights, res.Chosen)]
			fmt.Fprintf(tw, "%g (%+.3f)\t", res.Chosen, at-score[best])
			row := []string{c.Name, m, fmt.Sprint(res.Queries)}
			for _, p := range res.Points {
				row = append(row, fmt.Sprintf("%.3f", p.MRR))
			}
			pseudo = append(pseudo, row)
		}
		fmt.Fprint(tw, "\n")
		st.db.Close()
	}
	tw.Flush()
	fmt.Fprintln(w, "\npseudo-query MRR@10 by vector weight:")
	tw = tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprint(tw, "store\tmethod\tqueries\t")
	for _, wt := range weights {
		fmt.Fprintf(tw, "w=%g\t", wt)
	}
	fmt.Fprint(tw, "\n")
	for _, row := range pseudo {
		for _, cell := range row {
			fmt.Fprintf(tw, "%s\t", cell)
		}
		fmt.Fprint(tw, "\n")
	}
	return tw.Flush()
}

func indexOf(ws []float64, w float64) int {
	for i, x := range ws {
		if math.Abs(x-w) < 1e-12 {
			return i
		}
	}
	return 0
}
