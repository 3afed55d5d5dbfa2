package e5

import (
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"

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

// f16Panels decodes the Q4_0 matrices names, each n×k, stacked, straight
// into the float32 panel order of linalg.PackedF16 (in scratch, grown as
// needed and returned for the next matrix) and rounds them to float16 there:
// PackF16's panels of the decoded matrix value for value, without its
// row-major copy (TestF16Panels; 3.5× faster a layer, BenchmarkF16Panels).
func f16Panels(f *file, scratch []float32, n, k int, names ...string) ([]uint16, []float32, error) {
	rows := len(names) * n
	size := linalg.F16PanelLen(rows, k)
	if cap(scratch) < size {
		scratch = make([]float32, size)
	}
	scratch = scratch[:size]
	if rows%linalg.F16Panel != 0 {
		clear(scratch) // the last panel's columns past rows stay zero
	}
	for i, name := range names {
		t, err := f.get(name, dtQ4, n*k)
		if err != nil {
			return nil, scratch, err
		}
		dequantizePanels(scratch, t.data, i*n, n, k)
	}
	h := make([]uint16, size)
	linalg.RoundF16(h, scratch)
	return h, scratch, nil
}

// dequantizePanels decodes q, n rows of k Q4_0 values, as rows row0… of
// panels: value p of row j at (j/F16Panel·k + p)·F16Panel + j%F16Panel.
func dequantizePanels(panels []float32, q string, row0, n, k int) {
	const w = linalg.F16Panel
	blocks := k / blockLen
	for r := range n {
		j := row0 + r
		col := panels[(j/w)*k*w+j%w:]
		row := q[r*blocks*blockSize : (r+1)*blocks*blockSize]
		for b := range blocks {
			blk := row[b*blockSize : (b+1)*blockSize]
			d := tensorfile.HalfToFloat(uint16(blk[0]) | uint16(blk[1])<<8)
			p := b * blockLen
			for t := range 16 {
				col[(p+t)*w] = float32(int(blk[2+t]&0x0f)-8) * d
				col[(p+t+16)*w] = float32(int(blk[2+t]>>4)-8) * d
			}
		}
	}
}

// loadLayer decodes and packs layer l's tensors: its Q4_0 matrices as
// float16 panels (half) or float32 ones, query, key and value stacked.
func loadLayer(f *file, l int, half bool, scratch []float32) (layer, []float32, error) {
	c := f.cfg
	h, in := c.Hidden, c.Intermediate
	n := func(s string) string { return layerName(l, s) }
	r := floats{f: f}
	vec := r.vec
	// matrix decodes the Q4_0 matrices names, each n×k, stacked.
	matrix := func(n, k int, names ...string) linear {
		if r.err != nil {
			return nil
		}
		if half {
			var h []uint16
			if h, scratch, r.err = f16Panels(f, scratch, n, k, names...); r.err != nil {
				return nil
			}
			p, e := linalg.NewPackedF16(h, len(names)*n, k)
			if e != nil {
				r.err = fmt.Errorf("e5: %s: %w", names[0], e)
				return nil
			}
			return p
		}
		b := make([]float32, len(names)*n*k)
		for i, name := range names {
			var t tensor
			if t, r.err = f.get(name, dtQ4, n*k); r.err != nil {
				return nil
			}
			dequantize(b[i*n*k:(i+1)*n*k], t.data)
		}
		return linalg.PackB(b, len(names)*n, k)
	}
	var ly layer
	ly.qkv = matrix(h, h, n("q.w"), n("k.w"), n("v.w"))
	ly.qkvB = concat(vec(n("q.b"), h), vec(n("k.b"), h), vec(n("v.b"), h))
	ly.out, ly.outB = matrix(h, h, n("ao.w")), vec(n("ao.b"), h)
	ly.ln1G, ly.ln1B = vec(n("aln.w"), h), vec(n("aln.b"), h)
	ly.ffIn, ly.ffInB = matrix(in, h, n("fi.w")), vec(n("fi.b"), in)
	ly.ffOut, ly.ffOutB = matrix(h, in, n("fo.w")), vec(n("fo.b"), h)
	ly.ln2G, ly.ln2B = vec(n("oln.w"), h), vec(n("oln.b"), h)
	return ly, scratch, r.err
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

// load decodes and packs a parsed file's tensors, its layers on every core
// (each layer's matrices are decoded and packed on their own).
func load(f *file) (*weights, error) {
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
	half := halfPanels()
	errs := make([]error, c.Layers)
	var next atomic.Int64
	var wg sync.WaitGroup
	for range min(runtime.GOMAXPROCS(0), c.Layers) {
		wg.Go(func() {
			var scratch []float32 // the float32 panels of one matrix, reused
			for {
				l := int(next.Add(1) - 1)
				if l >= c.Layers {
					return
				}
				w.layers[l], scratch, errs[l] = loadLayer(f, l, half, scratch)
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
