// Command gloveeval measures dense-only retrieval with the built-in GloVe
// embedder (or another vector file) on SciFact (nDCG@10) and LoCoMo turns
// (R@5 any-gold, Hit@1), for each pooling variant, to choose the default.
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

	"github.com/engram-memory/engram/embed/glove"
	"github.com/engram-memory/engram/embed/glove/vecfile"
)

// variant is one pooling set-up under test.
type variant struct {
	name string
	opts glove.Options
	// corpusPC fits the removed component on the store's own vectors (the
	// original SIF recipe; not static, so only a reference point).
	corpusPC bool
}

var variants = []variant{
	{name: "mean (no stopwords), raw", opts: glove.Options{Pooling: glove.Mean, KeepCommon: true}},
	{name: "mean (no stopwords), static CC removed", opts: glove.Options{Pooling: glove.Mean}},
	{name: "mean (no stopwords), corpus PC removed (ref)", opts: glove.Options{Pooling: glove.Mean, KeepCommon: true}, corpusPC: true},
	{name: "sif a=1e-3, raw", opts: glove.Options{Pooling: glove.SIF, KeepCommon: true}},
	{name: "sif a=1e-3, static CC removed", opts: glove.Options{Pooling: glove.SIF}},
	{name: "sif a=1e-3, corpus PC removed (ref)", opts: glove.Options{Pooling: glove.SIF, KeepCommon: true}, corpusPC: true},
	{name: "sif a=1e-4, static CC removed", opts: glove.Options{Pooling: glove.SIF, SIFA: 1e-4}},
}

func main() {
	if err := run(os.Args[1:], os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "gloveeval:", err)
		os.Exit(1)
	}
}

func run(args []string, w io.Writer) error {
	fs := flag.NewFlagSet("gloveeval", flag.ContinueOnError)
	defData := os.Getenv("ENGRAM_DATA")
	if defData == "" {
		defData = "../shared/data"
	}
	data := fs.String("data", defData, "benchmark data directory (ENGRAM_DATA)")
	models := fs.String("model", "", "comma-separated vector files to compare (default: the built-in one)")
	only := fs.String("variants", "", "substring: run only variants whose name contains it")
	sweep := fs.String("sweep", "", "comma-separated SIF a values: run SIF at each (raw and static CC removed) instead of the fixed variants")
	if err := fs.Parse(args); err != nil {
		return err
	}
	sf, err := loadSciFact(filepath.Join(*data, "scifact"))
	if err != nil {
		return err
	}
	convs, skipped, err := loadLoCoMo(filepath.Join(*data, "locomo", "locomo-dev.json"))
	if err != nil {
		return err
	}
	nq := 0
	for _, c := range convs {
		nq += len(c.questions)
	}
	fmt.Fprintf(w, "SciFact: %d docs, %d queries; LoCoMo: %d conversations, %d questions (%d skipped: no evidence naming a turn)\n\n",
		len(sf.docs), len(sf.queries), len(convs), nq, skipped)
	vs := variants
	if *sweep != "" {
		vs = nil
		for _, a := range strings.Split(*sweep, ",") {
			x, err := strconv.ParseFloat(a, 64)
			if err != nil {
				return fmt.Errorf("-sweep: %w", err)
			}
			vs = append(vs,
				variant{name: "sif a=" + a + ", raw", opts: glove.Options{Pooling: glove.SIF, SIFA: x, KeepCommon: true}},
				variant{name: "sif a=" + a + ", static CC removed", opts: glove.Options{Pooling: glove.SIF, SIFA: x}})
		}
	}
	files := []string{""}
	if *models != "" {
		files = strings.Split(*models, ",")
	}
	tw := tabwriter.NewWriter(w, 2, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "file\twords\tvariant\tmodel id\tSciFact nDCG@10\tLoCoMo R@5-any\tLoCoMo Hit@1\tno-vector texts")
	for _, path := range files {
		for _, v := range vs {
			if *only != "" && !strings.Contains(v.name, *only) {
				continue
			}
			e, label, err := open(path, v.opts)
			if err != nil {
				return err
			}
			r, err := evaluate(context.Background(), e, v.corpusPC, sf, convs)
			if err != nil {
				return fmt.Errorf("%s %s: %w", label, v.name, err)
			}
			fmt.Fprintf(tw, "%s\t%d\t%s\t%s\t%.3f\t%.3f\t%.3f\t%d\n", label, e.Words(), v.name, e.Model(), r.ndcg, r.r5, r.hit1, r.noVector)
		}
	}
	return tw.Flush()
}

func open(path string, o glove.Options) (*glove.Embedder, string, error) {
	if path == "" {
		e, err := glove.New(o)
		return e, "built-in", err
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, "", err
	}
	f, err := vecfile.Parse(string(b))
	if err != nil {
		return nil, "", fmt.Errorf("%s: %w", path, err)
	}
	e, err := glove.NewFromFile(f, o)
	return e, filepath.Base(path), err
}
