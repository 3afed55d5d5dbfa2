package e5

import (
	"fmt"

	"github.com/engram-memory/engram/internal/linalg"
	"github.com/engram-memory/engram/internal/tensorfile"
)

// layer holds one transformer layer's weights as the encoder uses them: the
// Q4_0 matrices decoded once and packed for linalg's kernels, query, key and
// value stacked into one.
type layer struct {
	qkv, out, ffIn, ffOut     linear
	qkvB, outB, ffInB, ffOutB []float32
	ln1G, ln1B, ln2G, ln2B    []float32
}

// linear is a packed weight: c (m rows) = a·Wᵀ + bias.
type linear interface {
	MatMulTBias(c, a, bias []float32, m int)
}

// halfPanels says whether the layers' matrices are packed as float16 panels
// (42 MB) where the CPU has a float16 kernel, rather than float32 (85 MB):
// a Q4_0 value, a 4-bit integer times a float16 scale, needs up to 15
// significant bits, so float16 rounds it (by at most 2⁻¹² of itself), float32
// holds it exactly. Tests turn it off to cover the float32 path.
var halfPanels = linalg.HasF16

// weights is a model made ready for compute. The word-embedding table stays
// in the file's Q4_0 rows, read in place (only a text's tokens' rows are
// ever decoded).
type weights struct {
	cfg        config
	word       string // Q4_0 rows, [vocab × hidden]
	pos        []float32
	typ0       []float32 // token type 0
	embG, embB []float32
	layers     []layer
}

// dequantize decodes Q4_0 blocks q into dst (len(dst)/32 blocks).
func dequantize(dst []float32, q string) {
	for b := 0; b < len(dst)/blockLen; b++ {
		blk := q[b*blockSize : (b+1)*blockSize]
		d := tensorfile.HalfToFloat(uint16(blk[0]) | uint16(blk[1])<<8)
		o := dst[b*blockLen : (b+1)*blockLen]
		for j := range 16 {
			o[j] = float32(int(blk[2+j]&0x0f)-8) * d
			o[j+16] = float32(int(blk[2+j]>>4)-8) * d
		}
	}
}

// load decodes and packs a parsed file's tensors.
func load(f *file) (*weights, error) {
	c := f.cfg
	h, in := c.Hidden, c.Intermediate
	w := &weights{cfg: c}
	var err error
	vec := func(name string, n int) []float32 {
		if err != nil {
			return nil
		}
		var v []float32
		v, err = f.floats(name, n)
		return v
	}
	half := halfPanels()
	// matrix decodes the Q4_0 matrices names, each n×k, stacked.
	matrix := func(n, k int, names ...string) linear {
		if err != nil {
			return nil
		}
		b := make([]float32, len(names)*n*k)
		for i, name := range names {
			var t tensor
			if t, err = f.get(name, dtQ4, n*k); err != nil {
				return nil
			}
			dequantize(b[i*n*k:(i+1)*n*k], t.data)
		}
		if half {
			p, e := linalg.NewPackedF16(linalg.PackF16(b, len(names)*n, k), len(names)*n, k)
			if e != nil {
				err = fmt.Errorf("e5: %s: %w", names[0], e)
				return nil
			}
			return p
		}
		return linalg.PackB(b, len(names)*n, k)
	}
	word, e := f.get("emb.word", dtQ4, c.Vocab*h)
	if e != nil {
		return nil, e
	}
	w.word = word.data
	w.pos = vec("emb.pos", c.MaxPosition*h)
	if typ := vec("emb.type", c.TypeVocab*h); typ != nil {
		w.typ0 = typ[:h]
	}
	w.embG, w.embB = vec("emb.ln.w", h), vec("emb.ln.b", h)
	for l := range c.Layers {
		n := func(s string) string { return layerName(l, s) }
		var ly layer
		ly.qkv = matrix(h, h, n("q.w"), n("k.w"), n("v.w"))
		ly.qkvB = concat(vec(n("q.b"), h), vec(n("k.b"), h), vec(n("v.b"), h))
		ly.out, ly.outB = matrix(h, h, n("ao.w")), vec(n("ao.b"), h)
		ly.ln1G, ly.ln1B = vec(n("aln.w"), h), vec(n("aln.b"), h)
		ly.ffIn, ly.ffInB = matrix(in, h, n("fi.w")), vec(n("fi.b"), in)
		ly.ffOut, ly.ffOutB = matrix(h, in, n("fo.w")), vec(n("fo.b"), h)
		ly.ln2G, ly.ln2B = vec(n("oln.w"), h), vec(n("oln.b"), h)
		w.layers = append(w.layers, ly)
	}
	if err != nil {
		return nil, err
	}
	if f.pieces > c.Vocab {
		return nil, fmt.Errorf("e5: %d pieces but %d word embeddings", f.pieces, c.Vocab)
	}
	return w, nil
}

func concat(parts ...[]float32) []float32 {
	var out []float32
	for _, p := range parts {
		out = append(out, p...)
	}
	return out
}

// embedRow sets dst to token id's word embedding at position p, plus token
// type 0's.
func (w *weights) embedRow(dst []float32, id int32, p int) {
	h := len(dst)
	rb := h / blockLen * blockSize
	dequantize(dst, w.word[int(id)*rb:(int(id)+1)*rb])
	for d, x := range w.pos[p*h : (p+1)*h] {
		dst[d] += x + w.typ0[d]
	}
}
