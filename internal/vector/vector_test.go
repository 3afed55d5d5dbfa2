package vector

import (
	"bytes"
	"errors"
	"math"
	"math/rand"
	"runtime"
	"slices"
	"testing"
)

func norm(v []float32) float64 {
	var s float64
	for _, x := range v {
		s += float64(x) * float64(x)
	}
	return math.Sqrt(s)
}

func TestNormalize(t *testing.T) {
	nan, inf := float32(math.NaN()), float32(math.Inf(1))
	cases := []struct {
		name string
		in   []float32
		ok   bool
	}{
		{"unit already", []float32{1, 0, 0}, true},
		{"ordinary", []float32{3, 4}, true},
		{"negative", []float32{-1, -1, -1, -1}, true},
		{"huge components", []float32{3e38, 3e38, -3e38}, true},
		{"subnormal components", []float32{1e-45, 2e-45}, true},
		{"empty", nil, false},
		{"zero", []float32{0, 0, 0}, false},
		{"NaN", []float32{1, nan}, false},
		{"+Inf", []float32{inf, 1}, false},
		{"-Inf", []float32{1, -inf}, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			in := slices.Clone(c.in)
			got, ok := Normalize(in)
			if ok != c.ok {
				t.Fatalf("ok = %v, want %v", ok, c.ok)
			}
			if !slices.EqualFunc(in, c.in, func(a, b float32) bool { return math.Float32bits(a) == math.Float32bits(b) }) {
				t.Fatal("input modified")
			}
			if !ok {
				if got != nil {
					t.Fatalf("got %v with ok=false", got)
				}
				return
			}
			if n := norm(got); math.Abs(n-1) > 1e-6 {
				t.Fatalf("norm = %v", n)
			}
			if &got[0] == &in[0] {
				t.Fatal("Normalize must return a copy")
			}
		})
	}
}

func TestSetErrors(t *testing.T) {
	nan := float32(math.NaN())
	cases := []struct {
		name string
		v    []float32
		want error
	}{
		{"short", []float32{1, 2}, ErrDim},
		{"long", []float32{1, 2, 3, 4}, ErrDim},
		{"nil", nil, ErrDim},
		{"zero", []float32{0, 0, 0}, ErrInvalid},
		{"NaN", []float32{1, nan, 0}, ErrInvalid},
		{"+Inf", []float32{float32(math.Inf(1)), 0, 0}, ErrInvalid},
		{"-Inf", []float32{0, float32(math.Inf(-1)), 0}, ErrInvalid},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			ix := New(3)
			if err := ix.Set(1, []float32{0, 2, 0}); err != nil {
				t.Fatal(err)
			}
			for _, doc := range []uint32{1, 2} { // overwrite and insert both fail cleanly
				err := ix.Set(doc, c.v)
				if !errors.Is(err, c.want) {
					t.Fatalf("Set(%d) error = %v, want %v", doc, err, c.want)
				}
			}
			if ix.Len() != 1 || ix.Has(2) || !slices.Equal(ix.Vector(1), []float32{0, 1, 0}) {
				t.Fatalf("index changed by failed Set: len %d, vector %v", ix.Len(), ix.Vector(1))
			}
		})
	}
	if err := New(2).Set(math.MaxUint32, []float32{1, 0}); err == nil {
		t.Fatal("Set with a document number beyond int32 must fail")
	}
}

func TestSetRemoveReset(t *testing.T) {
	ix := New(2)
	if ix.Dim() != 2 || ix.Len() != 0 || ix.Has(0) || ix.Vector(0) != nil {
		t.Fatal("new index not empty")
	}
	vec := map[uint32][]float32{
		0: {1, 0}, 5: {0, 3}, 9: {1, 1}, 70: {-2, 0},
	}
	for _, d := range []uint32{0, 5, 9, 70} {
		if err := ix.Set(d, vec[d]); err != nil {
			t.Fatal(err)
		}
	}
	check := func(step string, want map[uint32][]float32) {
		t.Helper()
		if ix.Len() != len(want) {
			t.Fatalf("%s: Len = %d, want %d", step, ix.Len(), len(want))
		}
		for d := uint32(0); d < 100; d++ {
			w, ok := want[d]
			if ix.Has(d) != ok {
				t.Fatalf("%s: Has(%d) = %v", step, d, !ok)
			}
			if !ok {
				if ix.Vector(d) != nil {
					t.Fatalf("%s: Vector(%d) not nil", step, d)
				}
				continue
			}
			n, _ := Normalize(w)
			if !slices.Equal(ix.Vector(d), n) {
				t.Fatalf("%s: Vector(%d) = %v, want %v", step, d, ix.Vector(d), n)
			}
		}
		// Every row is owned by exactly one live doc.
		for r, d := range ix.rowDoc {
			if got, ok := ix.row(d); !ok || got != r {
				t.Fatalf("%s: row %d holds doc %d, whose row is %d", step, r, d, got)
			}
		}
	}
	check("after set", vec)
	steps := []struct {
		name string
		op   func()
		edit func(m map[uint32][]float32)
	}{
		{"remove middle", func() { ix.Remove(5) }, func(m map[uint32][]float32) { delete(m, 5) }},
		{"remove absent", func() { ix.Remove(5); ix.Remove(1000) }, func(map[uint32][]float32) {}},
		{"remove last row", func() { ix.Remove(9) }, func(m map[uint32][]float32) { delete(m, 9) }},
		{"re-set removed", func() { _ = ix.Set(5, []float32{4, 3}) }, func(m map[uint32][]float32) { m[5] = []float32{4, 3} }},
		{"overwrite", func() { _ = ix.Set(0, []float32{0, -1}) }, func(m map[uint32][]float32) { m[0] = []float32{0, -1} }},
		{"remove first row", func() { ix.Remove(0) }, func(m map[uint32][]float32) { delete(m, 0) }},
		{"remove all", func() { ix.Remove(70); ix.Remove(5) }, func(m map[uint32][]float32) { clear(m) }},
		{"set again", func() { _ = ix.Set(3, []float32{1, 2}) }, func(m map[uint32][]float32) { m[3] = []float32{1, 2} }},
	}
	for _, s := range steps {
		s.op()
		s.edit(vec)
		check(s.name, vec)
	}
}

func TestNewClampsDim(t *testing.T) {
	for _, d := range []int{-3, 0} {
		if got := New(d).Dim(); got != 1 {
			t.Fatalf("New(%d).Dim() = %d, want 1", d, got)
		}
	}
}

// TestSetRowMatchesSet: the prepared path stores exactly what Set stores.
func TestSetRowMatchesSet(t *testing.T) {
	r := rand.New(rand.NewSource(7))
	a, b := New(37), New(37)
	b.Reserve(50)
	for i := 0; i < 200; i++ {
		doc := uint32(r.Intn(60))
		v := make([]float32, 37)
		for j := range v {
			v[j] = float32(r.NormFloat64())
		}
		if i%7 == 0 {
			a.Remove(doc)
			b.Remove(doc)
			continue
		}
		if err := a.Set(doc, v); err != nil {
			t.Fatal(err)
		}
		row, err := Prepare(v)
		if err != nil {
			t.Fatal(err)
		}
		if err := b.SetRow(doc, row); err != nil {
			t.Fatal(err)
		}
	}
	if a.Len() != b.Len() {
		t.Fatalf("Len %d vs %d", a.Len(), b.Len())
	}
	q := make([]float32, 37)
	for j := range q {
		q[j] = float32(r.NormFloat64())
	}
	ha, hb := a.Search(q, nil, 100), b.Search(q, nil, 100)
	if len(ha) != len(hb) {
		t.Fatalf("%d vs %d hits", len(ha), len(hb))
	}
	for i := range ha {
		if ha[i] != hb[i] {
			t.Fatalf("hit %d: %+v vs %+v", i, ha[i], hb[i])
		}
	}
	if sa, sb := a.SearchSketch(q, nil, 5, 20), b.SearchSketch(q, nil, 5, 20); !slices.Equal(sa, sb) {
		t.Fatalf("sketch search: %v vs %v", sa, sb)
	}
	if _, err := Prepare(make([]float32, 37)); err == nil {
		t.Fatal("Prepare accepted a zero vector")
	}
}

// TestReserveOffHeap: a reservation of a MiB or more puts the matrices in
// anonymous memory (on Linux), and the index then holds and finds exactly
// what one grown on the heap does, through changes, removals and growth
// past the reserved room onto the heap.
func TestReserveOffHeap(t *testing.T) {
	const dim, n = 256, 1200 // 1.2 MB of float32 rows
	r := rand.New(rand.NewSource(9))
	a, b := New(dim), New(dim)
	b.Reserve(n)
	if got := len(b.anon) > 0; got != (runtime.GOOS == "linux") {
		t.Fatalf("reserved off the heap: %t on %s", got, runtime.GOOS)
	}
	if heap, _ := b.Bytes(); heap > 64<<10 {
		t.Fatalf("an empty reservation counts %d bytes", heap)
	}
	set := func(d uint32) {
		row, err := Prepare(randVec(r, dim))
		if err != nil {
			t.Fatal(err)
		}
		if err := a.SetRow(d, row); err != nil {
			t.Fatal(err)
		}
		if err := b.SetRow(d, row); err != nil {
			t.Fatal(err)
		}
	}
	check := func(stage string) {
		t.Helper()
		for i := range 20 {
			q := randVec(r, dim)
			if x, y := a.Search(q, nil, 10), b.Search(q, nil, 10); !slices.Equal(x, y) {
				t.Fatalf("%s: reserved %v, heap %v", stage, y, x)
			}
			if x, y := a.SearchSketch(q, nil, 10, 40), b.SearchSketch(q, nil, 10, 40); !slices.Equal(x, y) {
				t.Fatalf("%s: reserved sketch search %v, heap %v", stage, y, x)
			}
			if d := uint32(r.Intn(4 * n)); !slices.Equal(a.Vector(d), b.Vector(d)) {
				t.Fatalf("%s: doc %d's vectors differ (query %d)", stage, d, i)
			}
		}
		if !bytes.Equal(snapshotBytes(t, a), snapshotBytes(t, b)) {
			t.Fatalf("%s: the snapshots differ", stage)
		}
	}
	for d := range uint32(n) {
		set(d)
	}
	check("loaded")
	for range 300 {
		if d := uint32(r.Intn(n)); r.Intn(2) == 0 {
			a.Remove(d)
			b.Remove(d)
		} else {
			set(d)
		}
	}
	check("changed")
	for d := uint32(n); d < 4*n; d++ { // past the room of 2n+1024 rows
		set(d)
	}
	check("grown")
	if _, mapped := b.Bytes(); mapped != 0 || len(b.anon) != 0 {
		t.Fatalf("grown onto the heap: %d bytes counted mapped, %d anonymous regions still mapped", mapped, len(b.anon))
	}
}

// TestPrepareRecycled: rows filled again after Recycle, whatever dimension
// they last held (sketched or not), hold exactly what fresh arrays do.
func TestPrepareRecycled(t *testing.T) {
	r := rand.New(rand.NewSource(11))
	dims := []int{12, 37, 256, 5000} // 5000: over signMaxDim, no sketch
	for i := range 300 {
		dim := dims[r.Intn(len(dims))]
		v := randVec(r, dim)
		got, err := Prepare(v)
		if err != nil {
			t.Fatal(err)
		}
		want := &Row{unit: make([]float32, dim), codes: make([]int8, dim), fine: make([]int8, dim), signs: make([]byte, signCols(dim))}
		normalizeInto(want.unit, v)
		want.scale, want.resid = quantizeInto(want.codes, want.unit)
		want.fscale, want.fresid = fineInto(want.fine, want.unit, want.codes, want.scale)
		if len(want.signs) > 0 {
			want.signInv, want.signPop = signInto(want.signs, want.unit, make([]float32, signDim(dim)))
		}
		if !slices.Equal(got.unit, want.unit) || !slices.Equal(got.codes, want.codes) || !slices.Equal(got.fine, want.fine) ||
			!slices.Equal(got.signs, want.signs) || got.scale != want.scale || got.resid != want.resid ||
			got.fscale != want.fscale || got.fresid != want.fresid || got.signInv != want.signInv || got.signPop != want.signPop {
			t.Fatalf("round %d, dim %d: the prepared row differs from a fresh one", i, dim)
		}
		Recycle(got)
	}
	if _, err := Prepare(make([]float32, 8)); !errors.Is(err, ErrInvalid) {
		t.Fatalf("zero vector: %v, want ErrInvalid", err)
	}
}
