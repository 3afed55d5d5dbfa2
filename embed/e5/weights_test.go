package e5

import (
	"math"
	"strings"
	"testing"

	"github.com/engram-memory/engram/internal/linalg"
)

// fileMatrices are the stacked Q4_0 matrices load builds of layer l, as
// (rows of each, columns, names).
func fileMatrices(c config, l int) []struct {
	n, k  int
	names []string
} {
	h, in := c.Hidden, c.Intermediate
	n := func(s string) string { return layerName(l, s) }
	return []struct {
		n, k  int
		names []string
	}{
		{h, h, []string{n("q.w"), n("k.w"), n("v.w")}},
		{h, h, []string{n("ao.w")}},
		{in, h, []string{n("fi.w")}},
		{h, in, []string{n("fo.w")}},
	}
}

// TestQ4Matrices: every matrix load builds is, unpacked, the row-major
// decoding of its file tensors, stacked, bit for bit.
func TestQ4Matrices(t *testing.T) {
	f, err := parse(model, "")
	if err != nil {
		t.Fatal(err)
	}
	for l := range f.cfg.Layers {
		int8Acts := l%2 == 1 // the int8 products share the same panels
		ly, err := loadLayer(f, l, int8Acts)
		if err != nil {
			t.Fatal(err)
		}
		for i, lin := range []linear{ly.qkv, ly.out, ly.ffIn, ly.ffOut} {
			p, ok := lin.(*linalg.PackedQ)
			if q, isQA8 := lin.(*linalg.QA8); int8Acts && isQA8 {
				p, ok = q.PackedQ, true
			}
			if !ok {
				t.Fatalf("layer %d (int8 activations %v): matrix %d is %T", l, int8Acts, i, lin)
			}
			m := fileMatrices(f.cfg, l)[i]
			want := make([]float32, len(m.names)*m.n*m.k)
			for j, name := range m.names {
				tn, err := f.get(name, dtQ4, m.n*m.k)
				if err != nil {
					t.Fatal(err)
				}
				dequantize(want[j*m.n*m.k:(j+1)*m.n*m.k], tn.data)
			}
			if p.N() != len(m.names)*m.n || p.K() != m.k {
				t.Fatalf("%s: %d×%d, want %d×%d", m.names[0], p.N(), p.K(), len(m.names)*m.n, m.k)
			}
			got := p.Unpack()
			for x := range want {
				if math.Float32bits(got[x]) != math.Float32bits(want[x]) {
					t.Fatalf("%s: value %d = %g, the file's is %g", m.names[0], x, got[x], want[x])
				}
			}
		}
	}
}

// TestLoadErrors: a tensor missing or of another type in any layer, built on
// whichever core, makes load fail naming it.
func TestLoadErrors(t *testing.T) {
	for _, c := range []struct {
		name   string
		change func(f *file)
		want   string
	}{
		{"missing matrix", func(f *file) { delete(f.tensors, "l7.fi.w") }, `no tensor "l7.fi.w"`},
		{"matrix as float32", func(f *file) { t := f.tensors["l0.q.w"]; t.dtype = dtF32; f.tensors["l0.q.w"] = t }, `"l0.q.w" has dtype 0`},
		{"missing bias", func(f *file) { delete(f.tensors, "l11.oln.b") }, `no tensor "l11.oln.b"`},
		{"missing embedding", func(f *file) { delete(f.tensors, "emb.pos") }, `no tensor "emb.pos"`},
	} {
		t.Run(c.name, func(t *testing.T) {
			f, err := parse(model, "")
			if err != nil {
				t.Fatal(err)
			}
			c.change(f)
			if _, err := load(f, false); err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("load: %v, want an error with %q", err, c.want)
			}
		})
	}
}

// New refuses a precision it does not know, naming it; "bf16", which the
// BERT models take from the same variable, is FP32 here, and Precision
// says what is used and why.
func TestPrecision(t *testing.T) {
	if _, err := New(Options{Precision: "fp16"}); err == nil || !strings.Contains(err.Error(), `"fp16"`) {
		t.Errorf("precision fp16: %v", err)
	}
	int8Got := "int8"
	if !linalg.HasInt8Activations() {
		int8Got = "fp32 (int8 asked: this CPU has no AVX-512 VNNI)"
	}
	for _, c := range []struct {
		p    Precision
		want string // what Precision reports
	}{
		{"", "fp32"},
		{FP32, "fp32"},
		{"bf16", "fp32 (bf16 asked: this model has no bf16 path)"},
		{Int8, int8Got},
	} {
		e, err := New(Options{Precision: c.p})
		if err != nil {
			t.Fatalf("precision %q: %v", c.p, err)
		}
		if got := e.Precision(); got != c.want {
			t.Errorf("precision %q: Precision() = %q, want %q", c.p, got, c.want)
		}
	}
}
