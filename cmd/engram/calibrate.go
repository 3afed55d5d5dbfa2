package main

import (
	"fmt"
	"io"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/engram-memory/engram"
)

func init() { register(newCalibrate) }

func newCalibrate(e *env) *cobra.Command {
	var (
		opt     engram.CalibrateOptions
		weights string
		reset   bool
	)
	c := &cobra.Command{
		Use:   "calibrate",
		Short: "Set the vector leg's fusion weight for this store from its own memories",
		Long: `Estimate, without labels, how much the vector leg can be trusted on this store
with this embedder. Pseudo-queries are made from the store's own memories (by
default a sentence held out of each, the memory searched without it); each is
run at every vector weight (every model default among them), and of the weights
whose MRR@10 of the source memory is within one standard error of the best, the
one nearest the model's default is stored as the store's weight for the current
model (weight_source "store" in search output). The table and
the decision are printed. A weight of 0 would switch the vector leg off: it is
reported, not stored, unless --allow-off. ENGRAM_VECTOR_WEIGHT still overrides
the stored weight. --dry-run measures without storing; --reset removes the
stored weight, so searches use the model's default again.`,
		Args: args(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := e.localOnly("calibrate"); err != nil {
				return err
			}
			if reset {
				return e.withDB(cmd.Context(), func(db *engram.DB) error {
					w, err := db.ResetCalibration(cmd.Context())
					if err != nil {
						return err
					}
					return e.outf(map[string]any{"reset": true, "vector_weight": w, "weight_source": "model"},
						"stored vector weight removed: searches use the model's %g\n", w)
				})
			}
			if weights != "" {
				ws, err := parseWeights(weights)
				if err != nil {
					return usageError{err}
				}
				opt.Weights = ws
			}
			if opt.Samples < 0 {
				return usagef("--samples %d: must not be negative", opt.Samples)
			}
			return e.withDB(cmd.Context(), func(db *engram.DB) error {
				opt.Progress = e.progressBar("calibrate")
				res, err := db.Calibrate(cmd.Context(), opt)
				if err != nil {
					return err
				}
				return e.out(res, func(w io.Writer) error { return writeCalibration(w, res) })
			})
		},
	}
	fl := c.Flags()
	fl.StringVar(&opt.Method, "method", "heldout", "pseudo-queries: heldout, partial, span or name")
	fl.IntVar(&opt.Samples, "samples", engram.DefaultCalibrateSamples, "number of pseudo-queries")
	fl.Uint64Var(&opt.Seed, "seed", 0, "which memories are drawn")
	fl.StringVar(&weights, "weights", "", "comma-separated vector weights to try (default 0,.02,.05,.1,.2,.3,.5,1)")
	fl.BoolVar(&opt.DryRun, "dry-run", false, "measure only; do not store the chosen weight")
	fl.BoolVar(&opt.AllowOff, "allow-off", false, "store the chosen weight even when it is 0 (the vector leg off)")
	fl.BoolVar(&reset, "reset", false, "remove the stored weight: searches use the model's default again")
	return c
}

// parseWeights reads "0,0.1,1".
func parseWeights(s string) ([]float64, error) {
	var out []float64
	for _, p := range strings.Split(s, ",") {
		p = strings.TrimSpace(p)
		if p == "" {
			continue
		}
		w, err := strconv.ParseFloat(p, 64)
		if err != nil || !(w >= 0) || w > 1e6 {
			return nil, fmt.Errorf("--weights: %q is not a number in [0, 1e6]", p)
		}
		out = append(out, w)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("--weights: no weight given")
	}
	return out, nil
}

// writeCalibration prints the sweep and the decision.
func writeCalibration(w io.Writer, res *engram.CalibrateResult) error {
	fmt.Fprintf(w, "model %s, %d pseudo-queries (%s)\n", res.Model, res.Queries, res.Method)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprint(tw, "weight\tMRR@10\t±se\thit@1\t\t\n")
	for _, p := range res.Points {
		mark := ""
		switch {
		case p.Weight == res.Chosen && p.Weight == res.Best:
			mark = "← best, chosen"
		case p.Weight == res.Chosen:
			mark = "← chosen"
		case p.Weight == res.Best:
			mark = "← best"
		}
		fmt.Fprintf(tw, "%g\t%.3f\t%.3f\t%.3f\t%s\t\n", p.Weight, p.MRR, p.SE, p.Hit1, mark)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	if res.Chosen != res.Best {
		fmt.Fprintf(w, "chosen %g, not the best %g: the weight nearest the model's default within one standard error of the best MRR\n", res.Chosen, res.Best)
	}
	var err error
	switch {
	case res.Stored:
		_, err = fmt.Fprintf(w, "vector weight %g stored; was %g (%s)\n", res.Chosen, res.Previous, res.PreviousSource)
	case res.NotStored == "dry run":
		_, err = fmt.Fprintf(w, "vector weight %g not stored (dry run); searches keep %g (%s)\n", res.Chosen, res.Previous, res.PreviousSource)
	default:
		_, err = fmt.Fprintf(w, "vector weight %g not stored: %s (--allow-off stores it); searches keep %g (%s)\n",
			res.Chosen, res.NotStored, res.Previous, res.PreviousSource)
	}
	return err
}
