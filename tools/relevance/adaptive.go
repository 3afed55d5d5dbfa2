package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"regexp"
	"text/tabwriter"

	"github.com/engram-memory/engram/internal/calibrate"
	"github.com/engram-memory/engram/internal/eval"
	"github.com/engram-memory/engram/memory"
)

// identifier matches the tokens that mark an identifier-heavy query:
// snake_case, camelCase, letters mixed with digits, paths, flags, quoted or
// back-quoted strings, calls, and upper-case acronyms or codes.
var identifier = regexp.MustCompile("(\\w+_\\w+|[a-z]+[A-Z]\\w+|\\S*\\d\\S*[A-Za-z]|[A-Za-z]\\S*\\d|/\\w+/|(^|\\s)--?\\w[\\w-]+|\"[^\"]+\"|`[^`]+`|\\w+\\.\\w+\\(|\\b[A-Z]{2,}\\d*\\b)")

func identifierHeavy(q string) bool { return identifier.MatchString(q) }

// runAdaptive measures query-adaptive weights: identifier-heavy queries get
// vector weight 0, the others weight w, against one weight w for all.
func runAdaptive(ctx context.Context, w io.Writer, data string) error {
	lc, sf, tmp, err := loadBoth(data, "engram-adaptive-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	weights := calibrate.DefaultWeights
	type set struct {
		name, metric string
		heavy, total int
		uniform      []float64 // per weight
		adaptive     []float64 // heavy → 0, else weight
	}
	sets := []*set{{name: "scifact", metric: eval.NDCG10}, {name: "locomo (5 conversations)", metric: eval.Any5}}
	run := func(s *set, c eval.Corpus) error {
		st, err := openStore(ctx, tmp, c.Name, c.Docs)
		if err != nil {
			return err
		}
		defer st.db.Close()
		if s.uniform == nil {
			s.uniform, s.adaptive = make([]float64, len(weights)), make([]float64, len(weights))
		}
		for _, cs := range c.Cases {
			per := make([]float64, len(weights))
			for i, wt := range weights {
				resp, err := st.db.Search(ctx, memory.Query{Query: cs.Text, Limit: 10, VectorWeight: &wt, NoRecord: true})
				if err != nil {
					return err
				}
				ids := make([]string, len(resp.Results))
				for j, r := range resp.Results {
					ids[j] = r.ID
				}
				per[i] = eval.Score(ids, cs.Gold)[s.metric]
			}
			heavy := identifierHeavy(cs.Text)
			s.total++
			if heavy {
				s.heavy++
			}
			for i := range weights {
				s.uniform[i] += per[i]
				if heavy {
					s.adaptive[i] += per[0]
				} else {
					s.adaptive[i] += per[i]
				}
			}
		}
		return nil
	}
	if err := run(sets[0], sf.Corpora[0]); err != nil {
		return err
	}
	for _, c := range lc.Corpora {
		if err := run(sets[1], c); err != nil {
			return err
		}
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprint(tw, "data set\tmetric\tidentifier-heavy\tpolicy\t")
	for _, wt := range weights {
		fmt.Fprintf(tw, "w=%g\t", wt)
	}
	fmt.Fprint(tw, "\n")
	for _, s := range sets {
		for _, row := range []struct {
			name string
			v    []float64
		}{{"uniform w", s.uniform}, {"heavy→0, else w", s.adaptive}} {
			fmt.Fprintf(tw, "%s\t%s\t%d/%d\t%s\t", s.name, s.metric, s.heavy, s.total, row.name)
			for _, v := range row.v {
				fmt.Fprintf(tw, "%.4f\t", v/float64(s.total))
			}
			fmt.Fprint(tw, "\n")
		}
	}
	return tw.Flush()
}
