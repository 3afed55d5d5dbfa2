package main

// Reading the source: the package's one JSON object (from its .tgz or
// extracted) holds "dimensions", "size", "l2NormIndex", "wordIndex", a
// "words" list and a "vectors" object mapping each word to its dimensions
// floats followed by its L2 norm and its 0-based index in the frequency-ordered
// word list. It is decoded as a stream, one vector at a time, keeping only
// words the tokenizer can produce.

import (
	"archive/tar"
	"compress/gzip"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"strings"
)

// entry is one kept word of the source.
type entry struct {
	word string
	rank uint32 // 1-based position in the source's frequency order
	vec  []float32
}

// source is what readSource returns.
type source struct {
	dim     int
	size    int     // source vocabulary size
	entries []entry // in source order
	skipped int     // words the tokenizer could never produce
	badNorm int     // vectors whose stored norm disagrees with their values
}

// openJSON opens path, which is the JSON itself or a .tgz holding it.
func openJSON(path string) (io.Reader, func() error, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, nil, fmt.Errorf("open source: %w", err)
	}
	if !strings.HasSuffix(path, ".tgz") && !strings.HasSuffix(path, ".tar.gz") {
		return f, f.Close, nil
	}
	gz, err := gzip.NewReader(f)
	if err != nil {
		f.Close()
		return nil, nil, fmt.Errorf("open %s: %w", path, err)
	}
	tr := tar.NewReader(gz)
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			f.Close()
			return nil, nil, fmt.Errorf("open %s: no .json data file inside", path)
		}
		if err != nil {
			f.Close()
			return nil, nil, fmt.Errorf("open %s: %w", path, err)
		}
		if h.Typeflag == tar.TypeReg && strings.HasSuffix(h.Name, ".json") && !strings.HasSuffix(h.Name, "package.json") {
			return tr, f.Close, nil
		}
	}
}

// vocabWord reports whether w is a word the embedder's tokenizer can emit:
// ASCII lower-case letters and digits only.
func vocabWord(w string) bool {
	if w == "" {
		return false
	}
	for i := 0; i < len(w); i++ {
		c := w[i]
		if !('a' <= c && c <= 'z' || '0' <= c && c <= '9') {
			return false
		}
	}
	return true
}

// readSource decodes the package's JSON from r. Each vector row is taken as
// dim values, the norm, then the index; the layout fields, wherever they come,
// must agree once all is read.
func readSource(r io.Reader) (*source, error) {
	dec := json.NewDecoder(r)
	if err := expectDelim(dec, '{'); err != nil {
		return nil, err
	}
	src := &source{dim: -1, size: -1}
	normAt, indexAt, rowLen := -1, -1, -1
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, fmt.Errorf("read key: %w", err)
		}
		key, _ := tok.(string)
		switch key {
		case "dimensions":
			err = dec.Decode(&src.dim)
		case "size":
			err = dec.Decode(&src.size)
		case "l2NormIndex":
			err = dec.Decode(&normAt)
		case "wordIndex":
			err = dec.Decode(&indexAt)
		case "vectors":
			rowLen, err = readVectors(dec, src)
		default:
			var skip json.RawMessage
			err = dec.Decode(&skip)
		}
		if err != nil {
			return nil, fmt.Errorf("read %q: %w", key, err)
		}
	}
	if err := expectDelim(dec, '}'); err != nil {
		return nil, err
	}
	switch {
	case src.dim <= 0 || normAt != src.dim || indexAt != src.dim+1:
		return nil, fmt.Errorf("unexpected layout: dimensions %d, l2NormIndex %d, wordIndex %d", src.dim, normAt, indexAt)
	case rowLen != -1 && rowLen != src.dim+2:
		return nil, fmt.Errorf("unexpected layout: rows of %d values for %d dimensions", rowLen, src.dim)
	case src.size <= 0:
		return nil, fmt.Errorf("unexpected layout: size %d", src.size)
	}
	for _, e := range src.entries {
		if int(e.rank) > src.size {
			return nil, fmt.Errorf("word %q has index %d beyond size %d", e.word, e.rank-1, src.size)
		}
	}
	return src, nil
}

// readVectors reads the "vectors" object into src.entries and returns the
// common row length (-1 when empty).
func readVectors(dec *json.Decoder, src *source) (int, error) {
	if err := expectDelim(dec, '{'); err != nil {
		return 0, err
	}
	rowLen := -1
	var vals []float64
	seen := make(map[uint32]string)
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return 0, fmt.Errorf("read word: %w", err)
		}
		word, ok := tok.(string)
		if !ok {
			return 0, fmt.Errorf("vector key %v is not a string", tok)
		}
		vals = vals[:0]
		if err := dec.Decode(&vals); err != nil {
			return 0, fmt.Errorf("read vector of %q: %w", word, err)
		}
		if rowLen == -1 {
			rowLen = len(vals)
		}
		if len(vals) != rowLen || rowLen < 3 {
			return 0, fmt.Errorf("vector of %q has %d values, want %d (at least 3)", word, len(vals), rowLen)
		}
		dim := rowLen - 2
		idx := vals[dim+1]
		if idx < 0 || idx >= math.MaxUint32 || idx != math.Trunc(idx) {
			return 0, fmt.Errorf("vector of %q has index %v", word, idx)
		}
		rank := uint32(idx) + 1
		if other, dup := seen[rank]; dup {
			return 0, fmt.Errorf("words %q and %q share index %d", other, word, rank-1)
		}
		seen[rank] = word
		if !vocabWord(word) {
			src.skipped++
			continue
		}
		vec := make([]float32, dim)
		var ss float64
		for j := range vec {
			vec[j] = float32(vals[j])
			ss += vals[j] * vals[j]
		}
		if math.Abs(math.Sqrt(ss)-vals[dim]) > 1e-3*math.Max(1, vals[dim]) {
			src.badNorm++
		}
		src.entries = append(src.entries, entry{word: word, rank: rank, vec: vec})
	}
	return rowLen, expectDelim(dec, '}')
}

func expectDelim(dec *json.Decoder, want json.Delim) error {
	tok, err := dec.Token()
	if err != nil {
		return fmt.Errorf("read %q: %w", want, err)
	}
	if d, ok := tok.(json.Delim); !ok || d != want {
		return fmt.Errorf("found %v where %q was expected", tok, want)
	}
	return nil
}
