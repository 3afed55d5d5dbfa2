// Package vecfile reads and writes the compact word-vector file that package
// glove embeds: a versioned header, the vocabulary in frequency order, each
// word's source frequency rank, int8 vectors with a float32 scale per row, and
// the named common components that pooling removes.
package vecfile

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"math"
	"strings"
)

// Magic opens every file; Version is the layout written by Write.
const (
	Magic   = "ENGRAMWV"
	Version = 1
)

// Limits that keep a corrupt header from asking for absurd allocations.
const (
	MaxDim   = 4096
	MaxWords = 1 << 24
	maxName  = 255
)

// ErrFormat is wrapped by every error that reports a malformed file.
var ErrFormat = errors.New("vecfile: malformed file")

// castagnoli is the CRC-32C table, made on first use rather than in every
// process's package init.
func castagnoli() *crc32.Table { return crc32.MakeTable(crc32.Castagnoli) }

// File is one word-vector table. Row i of Vectors (Dim bytes from i*Dim, each
// an int8 stored as a byte) times Scales[i] is word i's vector.
type File struct {
	// Name identifies the data ("glove100"); Rev is bumped whenever the data
	// changes, so that model ids derived from the file change with it.
	Name string
	Rev  uint16
	Dim  int
	// SourceWords is the size of the source vocabulary that Ranks refer to
	// (for a Zipf estimate of each word's probability).
	SourceWords uint32
	// Words in ascending rank; Ranks[i] is Words[i]'s 1-based rank in the source.
	Words []string
	Ranks []uint32
	// Scales[i] dequantises row i.
	Scales []float32
	// Vectors holds len(Words)*Dim int8 values as bytes. Parse keeps it as a
	// string so that an embedded file is used in place, without a copy.
	Vectors string
	// Components are unit vectors removed from pooled vectors, keyed by pooling name.
	Components map[string][]float32
}

// Row returns the int8 values of word i as a string of Dim bytes.
func (f *File) Row(i int) string { return f.Vectors[i*f.Dim : (i+1)*f.Dim] }

// Dequantize appends word i's float32 vector to dst.
func (f *File) Dequantize(dst []float32, i int) []float32 {
	s := f.Scales[i]
	for _, b := range []byte(f.Row(i)) {
		dst = append(dst, float32(int8(b))*s)
	}
	return dst
}

// Quantize returns v as int8 values with one scale (max |v| / 127), so that
// every value is recovered within scale/2.
func Quantize(v []float32) (q []byte, scale float32) {
	var maxAbs float32
	for _, x := range v {
		if a := float32(math.Abs(float64(x))); a > maxAbs {
			maxAbs = a
		}
	}
	q = make([]byte, len(v))
	if maxAbs == 0 || math.IsNaN(float64(maxAbs)) || math.IsInf(float64(maxAbs), 0) {
		return q, 0
	}
	scale = maxAbs / 127
	for i, x := range v {
		r := math.Round(float64(x / scale))
		r = max(-127, min(127, r))
		q[i] = byte(int8(r))
	}
	return q, scale
}

// validate checks the invariants Write relies on and Parse guarantees.
func (f *File) validate() error {
	n := len(f.Words)
	switch {
	case f.Dim <= 0 || f.Dim > MaxDim:
		return fmt.Errorf("%w: dim %d out of range", ErrFormat, f.Dim)
	case n > MaxWords:
		return fmt.Errorf("%w: %d words exceed %d", ErrFormat, n, MaxWords)
	case len(f.Name) > maxName:
		return fmt.Errorf("%w: name longer than %d bytes", ErrFormat, maxName)
	case len(f.Ranks) != n || len(f.Scales) != n:
		return fmt.Errorf("%w: %d words but %d ranks and %d scales", ErrFormat, n, len(f.Ranks), len(f.Scales))
	case len(f.Vectors) != n*f.Dim:
		return fmt.Errorf("%w: %d vector bytes, want %d", ErrFormat, len(f.Vectors), n*f.Dim)
	case len(f.Components) > maxName:
		return fmt.Errorf("%w: %d components", ErrFormat, len(f.Components))
	}
	var prev uint32
	for i, w := range f.Words {
		if w == "" || strings.IndexByte(w, '\n') >= 0 {
			return fmt.Errorf("%w: word %d is empty or holds a newline", ErrFormat, i)
		}
		if f.Ranks[i] <= prev || f.Ranks[i] > f.SourceWords {
			return fmt.Errorf("%w: rank %d of word %q not ascending within 1..%d", ErrFormat, f.Ranks[i], w, f.SourceWords)
		}
		prev = f.Ranks[i]
		if s := f.Scales[i]; s < 0 || math.IsNaN(float64(s)) || math.IsInf(float64(s), 0) {
			return fmt.Errorf("%w: scale of word %q is %v", ErrFormat, w, s)
		}
	}
	for k, c := range f.Components {
		if k == "" || len(k) > maxName || len(c) != f.Dim {
			return fmt.Errorf("%w: component %q has length %d, want %d", ErrFormat, k, len(c), f.Dim)
		}
	}
	return nil
}

// Write encodes f to w in the current version, little-endian, ending in a
// CRC-32C of everything before it.
func Write(w io.Writer, f *File) error {
	if err := f.validate(); err != nil {
		return err
	}
	b := make([]byte, 0, 64+len(f.Vectors)+len(f.Words)*16)
	b = append(b, Magic...)
	b = binary.LittleEndian.AppendUint16(b, Version)
	b = binary.LittleEndian.AppendUint16(b, uint16(f.Dim))
	b = binary.LittleEndian.AppendUint32(b, uint32(len(f.Words)))
	b = binary.LittleEndian.AppendUint32(b, f.SourceWords)
	b = binary.LittleEndian.AppendUint16(b, f.Rev)
	b = append(b, byte(len(f.Name)))
	b = append(b, f.Name...)
	b = append(b, byte(len(f.Components)))
	for _, k := range sortedKeys(f.Components) {
		b = append(b, byte(len(k)))
		b = append(b, k...)
		for _, x := range f.Components[k] {
			b = binary.LittleEndian.AppendUint32(b, math.Float32bits(x))
		}
	}
	words := strings.Join(f.Words, "\n")
	b = binary.LittleEndian.AppendUint32(b, uint32(len(words)))
	b = append(b, words...)
	var prev uint32
	for _, r := range f.Ranks {
		b = binary.AppendUvarint(b, uint64(r-prev))
		prev = r
	}
	for _, s := range f.Scales {
		b = binary.LittleEndian.AppendUint32(b, math.Float32bits(s))
	}
	b = append(b, f.Vectors...)
	b = binary.LittleEndian.AppendUint32(b, crc32.Checksum(b, castagnoli()))
	if _, err := w.Write(b); err != nil {
		return fmt.Errorf("vecfile: write: %w", err)
	}
	return nil
}

func sortedKeys(m map[string][]float32) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	// Insertion sort: a file holds a handful of components.
	for i := 1; i < len(keys); i++ {
		for j := i; j > 0 && keys[j] < keys[j-1]; j-- {
			keys[j], keys[j-1] = keys[j-1], keys[j]
		}
	}
	return keys
}
