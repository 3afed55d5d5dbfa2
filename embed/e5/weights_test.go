package e5

import (
	"fmt"
	"slices"
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

// TestF16Panels: the float16 panels load builds straight from the file's
// Q4_0 blocks are PackF16's of the row-major decoded matrices, value for
// value, for every matrix of the built-in model, with the scratch reused
// from one matrix to the next as load does; and a stack whose rows do not
// fill the last panel gets zeros past them.
func TestF16Panels(t *testing.T) {
	f, err := parse(model, "")
	if err != nil {
		t.Fatal(err)
	}
	var scratch []float32
	for l := range f.cfg.Layers {
		for _, m := range fileMatrices(f.cfg, l) {
			var got []uint16
			if got, scratch, err = f16Panels(f, scratch, m.n, m.k, m.names...); err != nil {
				t.Fatal(err)
			}
			rows := make([]float32, len(m.names)*m.n*m.k)
			for i, name := range m.names {
				tn, err := f.get(name, dtQ4, m.n*m.k)
				if err != nil {
					t.Fatal(err)
				}
				dequantize(rows[i*m.n*m.k:(i+1)*m.n*m.k], tn.data)
			}
			if want := linalg.PackF16(rows, len(m.names)*m.n, m.k); !slices.Equal(got, want) {
				t.Fatalf("%s: the panels differ from PackF16's", m.names[0])
			}
		}
	}
	// Rows that stop inside a panel: the first 40 rows of a matrix (its
	// tensor read as a shorter one is not possible, so decode by hand).
	ao, err := f.get(layerName(0, "ao.w"), dtQ4, f.cfg.Hidden*f.cfg.Hidden)
	if err != nil {
		t.Fatal(err)
	}
	const n = 40
	k := f.cfg.Hidden
	q := ao.data[:n*k/blockLen*blockSize]
	panels := make([]float32, linalg.F16PanelLen(n, k))
	for i := range panels {
		panels[i] = 7 // what a reused scratch may hold
	}
	clear(panels)
	dequantizePanels(panels, q, 0, n, k)
	rows := make([]float32, n*k)
	dequantize(rows, q)
	got := make([]uint16, len(panels))
	linalg.RoundF16(got, panels)
	if want := linalg.PackF16(rows, n, k); !slices.Equal(got, want) {
		t.Fatal("40 rows: the panels differ from PackF16's")
	}
}

// BenchmarkF16Panels is load's float16 path for one layer's matrices against
// the row-major decode and PackF16 it replaced.
func BenchmarkF16Panels(b *testing.B) {
	f, err := parse(model, "")
	if err != nil {
		b.Fatal(err)
	}
	ms := fileMatrices(f.cfg, 0)
	b.Run("panels", func(b *testing.B) {
		var scratch []float32
		for b.Loop() {
			for _, m := range ms {
				if _, scratch, err = f16Panels(f, scratch, m.n, m.k, m.names...); err != nil {
					b.Fatal(err)
				}
			}
		}
	})
	b.Run("rows+PackF16", func(b *testing.B) {
		for b.Loop() {
			for _, m := range ms {
				rows := make([]float32, len(m.names)*m.n*m.k)
				for i, name := range m.names {
					tn, _ := f.get(name, dtQ4, m.n*m.k)
					dequantize(rows[i*m.n*m.k:(i+1)*m.n*m.k], tn.data)
				}
				linalg.PackF16(rows, len(m.names)*m.n, m.k)
			}
		}
	})
}

// TestLoadErrors: a tensor missing or of another type in any layer, built on
// whichever core, makes load fail naming it, for both panel kinds.
func TestLoadErrors(t *testing.T) {
	for _, half := range []bool{true, false} {
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
			t.Run(fmt.Sprintf("%s/half=%t", c.name, half), func(t *testing.T) {
				if half && !linalg.HasF16() {
					t.Skip("no float16 kernel on this CPU")
				}
				f, err := parse(model, "")
				if err != nil {
					t.Fatal(err)
				}
				c.change(f)
				saved := halfPanels
				halfPanels = func() bool { return half }
				defer func() { halfPanels = saved }()
				if _, err := load(f); err == nil || !strings.Contains(err.Error(), c.want) {
					t.Fatalf("load: %v, want an error with %q", err, c.want)
				}
			})
		}
	}
}
