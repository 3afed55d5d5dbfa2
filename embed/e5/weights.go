package e5

import (
	"fmt"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/engram-memory/engram/internal/linalg"
	"github.com/engram-memory/engram/internal/tensorfile"
)

// layer holds one transformer layer's weights as the encoder uses them: the
// Q4_0 matrices regrouped into linalg's panels, query, key and value stacked
// into one, multiplied with float32 or int8 activations.
type layer struct {
	qkv, out, ffIn, ffOut     linear
	qkvB, outB, ffInB, ffOutB []float32
	ln1G, ln1B, ln2G, ln2B    []float32
}

// linear is a layer's weight: c (m rows) = a·Wᵀ + bias.
type linear interface {
	MatMulTBias(c, a, bias []float32, m int)
}

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

// loadLayer regroups layer l's Q4_0 matrices into linalg.PackedQ panels,
// query, key and value stacked, and reads its vectors. The matrices stay in
// 4-bit blocks (12 MB for the model): a product decodes each value exactly
// as it uses it, or, with int8Acts, quantises its activations to int8 and
// multiplies integers (linalg.PackedQ.Int8Activations).
func loadLayer(f *file, l int, int8Acts bool) (layer, error) {
	c := f.cfg
	h, in := c.Hidden, c.Intermediate
	n := func(s string) string { return layerName(l, s) }
	r := floats{f: f}
	vec := r.vec
	// matrix stacks the Q4_0 matrices names, each n×k.
	matrix := func(n, k int, names ...string) linear {
		if r.err != nil {
			return nil
		}
		var rows strings.Builder
		for _, name := range names {
			t, err := f.get(name, dtQ4, n*k)
			if err != nil {
				r.err = err
				return nil
			}
			rows.WriteString(t.data)
		}
		p, err := linalg.NewPackedQ(linalg.Q4_0, rows.String(), len(names)*n, k)
		if err != nil {
			r.err = fmt.Errorf("e5: %s: %w", names[0], err)
			return nil
		}
		if int8Acts {
			return p.Int8Activations()
		}
		return p
	}
	var ly layer
	ly.qkv = matrix(h, h, n("q.w"), n("k.w"), n("v.w"))
	ly.qkvB = concat(vec(n("q.b"), h), vec(n("k.b"), h), vec(n("v.b"), h))
	ly.out, ly.outB = matrix(h, h, n("ao.w")), vec(n("ao.b"), h)
	ly.ln1G, ly.ln1B = vec(n("aln.w"), h), vec(n("aln.b"), h)
	ly.ffIn, ly.ffInB = matrix(in, h, n("fi.w")), vec(n("fi.b"), in)
	ly.ffOut, ly.ffOutB = matrix(h, in, n("fo.w")), vec(n("fo.b"), h)
	ly.ln2G, ly.ln2B = vec(n("oln.w"), h), vec(n("oln.b"), h)
	return ly, r.err
}

// floats reads float32 tensors until the first error, which it keeps.
type floats struct {
	f   *file
	err error
}

func (r *floats) vec(name string, n int) []float32 {
	if r.err != nil {
		return nil
	}
	var v []float32
	v, r.err = r.f.floats(name, n)
	return v
}

// load readies a parsed file's tensors, its layers on every core (each
// layer's matrices are regrouped on their own), int8Acts as loadLayer.
func load(f *file, int8Acts bool) (*weights, error) {
	c := f.cfg
	h := c.Hidden
	w := &weights{cfg: c, layers: make([]layer, c.Layers)}
	r := floats{f: f}
	vec := r.vec
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
	if r.err != nil {
		return nil, r.err
	}
	errs := make([]error, c.Layers)
	var next atomic.Int64
	var wg sync.WaitGroup
	for range min(runtime.GOMAXPROCS(0), c.Layers) {
		wg.Go(func() {
			for {
				l := int(next.Add(1) - 1)
				if l >= c.Layers {
					return
				}
				w.layers[l], errs[l] = loadLayer(f, l, int8Acts)
			}
		})
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return nil, err // the first layer's: the others would say the same of theirs
		}
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
