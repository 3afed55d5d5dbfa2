package bert

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"sync/atomic"

	"github.com/engram-memory/engram/internal/linalg"
	"github.com/engram-memory/engram/internal/tensorfile"
	"github.com/engram-memory/engram/internal/wordpiece"
)

// meta is the JSON header tools/modelconv/bert_convert.py writes.
type meta struct {
	Kind     string `json:"kind"`
	Name     string `json:"name"`
	Revision int    `json:"revision"`
	Encoding string `json:"encoding"`
	Bert     struct {
		Hidden       int     `json:"hidden_size"`
		Layers       int     `json:"num_layers"`
		Heads        int     `json:"num_heads"`
		Intermediate int     `json:"intermediate_size"`
		MaxPosition  int     `json:"max_position"`
		TypeVocab    int     `json:"type_vocab_size"`
		LayerNormEps float64 `json:"layer_norm_eps"`
		Act          string  `json:"hidden_act"`
	} `json:"bert"`
	Tokenizer struct {
		Type         string   `json:"type"`
		Normalizer   string   `json:"normalizer"`
		Unk          string   `json:"unk"`
		Prefix       string   `json:"prefix"`
		Suffix       string   `json:"suffix"`
		Special      []string `json:"special"`
		MaxWordChars int      `json:"max_chars_per_word"`
		MaxLength    int      `json:"max_length"`
	} `json:"tokenizer"`
	Pooling   string `json:"pooling"`
	Normalize bool   `json:"normalize"`
	// LinearLayout is how the matrices the encoder multiplies by are
	// stored: "" as [out × in] rows (PyTorch's layout), panelsLayout or
	// q8PanelsLayout.
	LinearLayout string `json:"linear_layout"`
	// QueryInstruction is the prefix the model's authors suggest for search
	// queries (Options.QueryInstruction); "" for none.
	QueryInstruction string `json:"query_instruction"`
}

// panelsLayout stores each matrix the encoder multiplies by as float16 in
// the kernels' panels, [⌈out/16⌉ × in × 16] (linalg.PackedF16), a layer's
// query, key and value stacked into one attention.self.qkv.weight: on a CPU
// with a float16 kernel they are used in place, nothing decoded or packed.
const panelsLayout = "panels16"

// q8PanelsLayout stores them as Q8_0 blocks of 32 in the kernels' panels
// (linalg.NewPackedQPanels), the bytes of a Bytes tensor, query, key and
// value stacked likewise: used in place on every CPU, a product decoding
// each weight exactly (q·d) as it goes, at half float16's bytes.
const q8PanelsLayout = "q8panels"

func parseMeta(b []byte) (*meta, error) {
	var m meta
	if err := json.Unmarshal(b, &m); err != nil {
		return nil, fmt.Errorf("bert: model header: %w", err)
	}
	c := m.Bert
	switch {
	case m.Kind != "bert":
		return nil, fmt.Errorf("bert: model file is of kind %q, not bert", m.Kind)
	case m.Name == "" || m.Revision < 1:
		return nil, fmt.Errorf("bert: model file has no name or revision")
	case c.Hidden <= 0 || c.Layers <= 0 || c.Heads <= 0 || c.Hidden%c.Heads != 0 || c.Intermediate <= 0 ||
		c.MaxPosition <= 0 || c.TypeVocab <= 0 || !(c.LayerNormEps > 0):
		return nil, fmt.Errorf("bert: model config %+v is invalid", c)
	case c.Act != "gelu_erf":
		return nil, fmt.Errorf("bert: activation %q is not supported (only gelu_erf)", c.Act)
	case m.Tokenizer.Type != "wordpiece" || m.Tokenizer.Normalizer != "bert_uncased":
		return nil, fmt.Errorf("bert: tokenizer %s/%s is not supported (only wordpiece/bert_uncased)", m.Tokenizer.Type, m.Tokenizer.Normalizer)
	case m.Tokenizer.MaxLength < 3 || m.Tokenizer.MaxLength > c.MaxPosition:
		return nil, fmt.Errorf("bert: max length %d outside 3..%d", m.Tokenizer.MaxLength, c.MaxPosition)
	case m.Pooling != "mean" && m.Pooling != "cls":
		return nil, fmt.Errorf("bert: pooling %q is not supported (mean or cls)", m.Pooling)
	case m.LinearLayout != "" && m.LinearLayout != panelsLayout && m.LinearLayout != q8PanelsLayout:
		return nil, fmt.Errorf("bert: linear layout %q is not supported (rows, %s or %s)", m.LinearLayout, panelsLayout, q8PanelsLayout)
	}
	return &m, nil
}

// layer holds one transformer layer's weights, as the encoder uses them: the
// PyTorch Linear weights ([out × in]) packed once for linalg's kernels.
type layer struct {
	qkv        linear    // query, key and value stacked: [3H × H]
	qkvB       []float32 // [3H]
	out        linear    // attention output: [H × H]
	outB       []float32
	ln1G, ln1B []float32
	ffIn       linear // [I × H]
	ffInB      []float32
	ffOut      linear // [H × I]
	ffOutB     []float32
	ln2G, ln2B []float32
}

// linear is a packed weight: c (m rows) = a·Wᵀ + bias.
type linear interface {
	MatMulTBias(c, a, bias []float32, m int)
}

// packer packs a weight for the kernels at a precision.
func packer(p Precision) func(b []float32, n, k int) linear {
	if p == BF16 && linalg.HasBF16() {
		return func(b []float32, n, k int) linear { return linalg.PackBF16(b, n, k) }
	}
	return func(b []float32, n, k int) linear { return linalg.PackB(b, n, k) }
}

// inPlace reports whether float16 panels are multiplied by where they lie:
// on a CPU with a float16 kernel, at FP32 (bit for bit the product of the
// decoded, packed weight) and at BF16 where the CPU multiplies in bf16
// (linalg.PackedF16BF16: bit for bit PackBF16's product). Tests turn it
// off to cover the decoding fallback.
var inPlace = linalg.HasF16

// weights is a model made ready for compute. The word-embedding table stays
// in the file's int8 rows and the position table in its float16 rows (only
// the rows of a text's tokens are ever read); the matrices are the file's
// float16 panels where they lie (linalg.PackedF16) or packed float32 (or
// bf16); the vectors are float32.
type weights struct {
	m         *meta
	tok       *wordpiece.Tokenizer
	vocab     int
	wordQ     string    // int8 rows, [vocab × H], or "" when wordF is set
	wordScale []float32 // per-row scales of wordQ
	wordF     []float32 // float32 rows, when the file stores them so
	pos       []float32 // [maxPosition × H], or nil when posH is set
	posH      []uint16  // float16 rows, in place, when the file stores them so
	typ0      []float32 // token type 0: [H]
	embG      []float32
	embB      []float32
	layers    []layer
}

// load decodes a parsed file.
// load makes the weights of f ready; table is the vocabulary's WordPiece
// lookup table made ahead (wordpiece.Table), or "" to build it.
func load(f *tensorfile.File, m *meta, p Precision, table string) (*weights, error) {
	pack := packer(p)
	c := m.Bert
	h, in := c.Hidden, c.Intermediate
	voc, ok := f.Tensor("vocab")
	if !ok || voc.DType != tensorfile.Bytes {
		return nil, fmt.Errorf("bert: model file has no vocabulary")
	}
	vocab := strings.Split(voc.Data, "\n")
	tok, err := wordpiece.New(wordpiece.Config{
		Vocab:        vocab,
		Unknown:      m.Tokenizer.Unk,
		Special:      m.Tokenizer.Special,
		Prefix:       m.Tokenizer.Prefix,
		Suffix:       m.Tokenizer.Suffix,
		MaxLen:       m.Tokenizer.MaxLength,
		MaxWordChars: m.Tokenizer.MaxWordChars,
		Table:        table,
	})
	if err != nil {
		return nil, fmt.Errorf("bert: %w", err)
	}
	w := &weights{m: m, tok: tok, vocab: len(vocab)}
	panels := m.LinearLayout != "" // a layer's query, key and value stacked
	direct := m.LinearLayout == panelsLayout && inPlace()
	get := func(name string, shape ...int) []float32 {
		if err != nil {
			return nil
		}
		t, ok := f.Tensor(name)
		if !ok {
			err = fmt.Errorf("bert: model file has no tensor %q", name)
			return nil
		}
		if !slices.Equal(t.Shape, shape) {
			err = fmt.Errorf("bert: tensor %q has shape %v, want %v", name, t.Shape, shape)
			return nil
		}
		var v []float32
		if v, err = t.Float32s(nil); err != nil {
			err = fmt.Errorf("bert: %w", err)
		}
		return v
	}
	// matrix returns the n×k weight name for the kernels: float16 panels in
	// place, or decoded and packed.
	matrix := func(name string, n, k int) linear {
		if err != nil {
			return nil
		}
		if !panels {
			if b := get(name, n, k); b != nil {
				return pack(b, n, k)
			}
			return nil
		}
		t, ok := f.Tensor(name)
		if !ok {
			err = fmt.Errorf("bert: model file has no tensor %q", name)
			return nil
		}
		if m.LinearLayout == q8PanelsLayout {
			if t.DType != tensorfile.Bytes {
				err = fmt.Errorf("bert: tensor %q is %v, want Q8_0 panels as bytes", name, t.DType)
				return nil
			}
			q, e := linalg.NewPackedQPanels(linalg.Q8_0, t.Data, n, k)
			if e != nil {
				err = fmt.Errorf("bert: tensor %q: %w", name, e)
				return nil
			}
			if p == BF16 && linalg.HasBF16() {
				return pack(q.Unpack(), n, k)
			}
			if p == Int8 && linalg.HasInt8Activations() {
				return q.Int8Activations()
			}
			return q
		}
		if want := []int{(n + linalg.F16Panel - 1) / linalg.F16Panel, k, linalg.F16Panel}; !slices.Equal(t.Shape, want) || t.DType != tensorfile.Float16 {
			err = fmt.Errorf("bert: tensor %q is %v %v, want float16 %v", name, t.DType, t.Shape, want)
			return nil
		}
		data, e := t.Float16s()
		if e != nil {
			err = fmt.Errorf("bert: %w", e)
			return nil
		}
		if direct {
			var l linear
			var e error
			if p == BF16 && linalg.HasBF16() {
				l, e = linalg.NewPackedF16BF16(data, n, k)
			} else {
				l, e = linalg.NewPackedF16(data, n, k)
			}
			if e != nil {
				err = fmt.Errorf("bert: tensor %q: %w", name, e)
				return nil
			}
			return l
		}
		b, e := linalg.UnpackF16(data, n, k)
		if e != nil {
			err = fmt.Errorf("bert: tensor %q: %w", name, e)
			return nil
		}
		return pack(b, n, k)
	}
	const word = "embeddings.word_embeddings.weight"
	if t, ok := f.Tensor(word); ok && t.DType == tensorfile.Int8Rows && slices.Equal(t.Shape, []int{len(vocab), h}) {
		if w.wordScale, w.wordQ, err = t.Int8Rows(); err != nil {
			return nil, fmt.Errorf("bert: %w", err)
		}
	} else {
		w.wordF = get(word, len(vocab), h)
	}
	const position = "embeddings.position_embeddings.weight"
	if t, ok := f.Tensor(position); ok && t.DType == tensorfile.Float16 && slices.Equal(t.Shape, []int{c.MaxPosition, h}) {
		if w.posH, err = t.Float16s(); err != nil {
			return nil, fmt.Errorf("bert: %w", err)
		}
	} else {
		w.pos = get(position, c.MaxPosition, h)
	}
	typ := get("embeddings.token_type_embeddings.weight", c.TypeVocab, h)
	if typ != nil {
		w.typ0 = typ[:h]
	}
	w.embG = get("embeddings.LayerNorm.weight", h)
	w.embB = get("embeddings.LayerNorm.bias", h)
	for i := 0; i < c.Layers; i++ {
		p := fmt.Sprintf("encoder.layer.%d.", i)
		var l layer
		if panels {
			l.qkv = matrix(p+"attention.self.qkv.weight", 3*h, h)
		} else if q, k, v := get(p+"attention.self.query.weight", h, h), get(p+"attention.self.key.weight", h, h), get(p+"attention.self.value.weight", h, h); err == nil {
			l.qkv = pack(concat(q, k, v), 3*h, h)
		}
		l.qkvB = concat(get(p+"attention.self.query.bias", h), get(p+"attention.self.key.bias", h), get(p+"attention.self.value.bias", h))
		l.out = matrix(p+"attention.output.dense.weight", h, h)
		l.outB = get(p+"attention.output.dense.bias", h)
		l.ln1G = get(p+"attention.output.LayerNorm.weight", h)
		l.ln1B = get(p+"attention.output.LayerNorm.bias", h)
		l.ffIn = matrix(p+"intermediate.dense.weight", in, h)
		l.ffInB = get(p+"intermediate.dense.bias", in)
		l.ffOut = matrix(p+"output.dense.weight", h, in)
		l.ffOutB = get(p+"output.dense.bias", h)
		l.ln2G = get(p+"output.LayerNorm.weight", h)
		l.ln2B = get(p+"output.LayerNorm.bias", h)
		if err != nil {
			return nil, err
		}
		w.layers = append(w.layers, l)
	}
	if err != nil {
		return nil, err
	}
	return w, nil
}

// packable reports whether some layer multiplies float16 panels in bf16
// in place (linalg.PackedF16BF16), which packed would not round per product.
func (w *weights) packable() bool {
	for _, l := range w.layers {
		if _, ok := l.qkv.(*linalg.PackedF16BF16); ok {
			return true
		}
	}
	return false
}

// packed returns a copy of w whose bf16 layers in float16 panels are packed
// (linalg.PackedF16BF16.Pack): the same products, bit for bit.
func (w *weights) packed() *weights {
	c := *w
	c.layers = slices.Clone(w.layers)
	pack := func(l linear) linear {
		if p, ok := l.(*linalg.PackedF16BF16); ok {
			return p.Pack()
		}
		return l
	}
	for i := range c.layers {
		l := &c.layers[i]
		l.qkv, l.out, l.ffIn, l.ffOut = pack(l.qkv), pack(l.out), pack(l.ffIn), pack(l.ffOut)
	}
	return &c
}

func concat(parts ...[]float32) []float32 {
	n := 0
	for _, p := range parts {
		n += len(p)
	}
	out := make([]float32, 0, n)
	for _, p := range parts {
		out = append(out, p...)
	}
	return out
}

// prefault reads one value of every page of the weights used in place, so
// that the first forward pass does not stop on page faults.
func (w *weights) prefault(ctx context.Context) {
	var sink uint16
	for _, l := range w.layers {
		if ctx.Err() != nil {
			return
		}
		for _, m := range []linear{l.qkv, l.out, l.ffIn, l.ffOut} {
			if p, ok := m.(interface{ Prefault() uint16 }); ok {
				sink ^= p.Prefault()
			}
		}
	}
	prefaultSink.Store(uint32(sink))
}

// prefaultSink keeps prefault's reads from being optimised away; atomic, as
// several warms may run at once.
var prefaultSink atomic.Uint32

// setPosition sets dst to position p's embedding plus token type 0's.
func (w *weights) setPosition(dst []float32, p int) {
	h := len(dst)
	if w.posH != nil {
		for d, x := range w.posH[p*h : (p+1)*h] {
			dst[d] = tensorfile.HalfToFloat(x) + w.typ0[d]
		}
		return
	}
	for d, x := range w.pos[p*h : (p+1)*h] {
		dst[d] = x + w.typ0[d]
	}
}

// addWord adds token id's word embedding to dst.
func (w *weights) addWord(dst []float32, id int32) {
	h := len(dst)
	if w.wordF != nil {
		for i, x := range w.wordF[int(id)*h : int(id+1)*h] {
			dst[i] += x
		}
		return
	}
	s := w.wordScale[id]
	q := w.wordQ[int(id)*h : int(id+1)*h]
	for i := range dst {
		dst[i] += float32(int8(q[i])) * s
	}
}
