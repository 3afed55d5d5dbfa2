package binenc

import (
	"bytes"
	"errors"
	"math"
	"slices"
	"testing"
)

// encodeAll writes one of every kind of value and returns the bytes.
func encodeAll(tb testing.TB) []byte {
	tb.Helper()
	var buf bytes.Buffer
	w := NewWriter(&buf)
	w.Uint32(7)
	w.Uint64(1 << 40)
	w.Int64(-3)
	w.Bool(true)
	w.Float32(1.5)
	w.Float64(math.Inf(-1))
	w.String("héllo")
	w.Bytes([]byte{1, 2, 3})
	w.Strings([]string{"a", "", "ccc"})
	w.Uint32s([]uint32{1, 2, 3})
	w.Uint64s([]uint64{math.MaxUint64})
	w.Int8s([]int8{-128, 0, 127})
	w.Float32s([]float32{-0.5, 2})
	w.Float64s([]float64{math.Pi})
	w.Uint64(4) // one slice written in two raw parts
	w.RawUint32s([]uint32{10, 11})
	w.RawUint32s([]uint32{12, 13})
	if err := w.Finish(); err != nil {
		tb.Fatal(err)
	}
	if w.Len() != int64(buf.Len()) {
		tb.Fatalf("Len %d, wrote %d", w.Len(), buf.Len())
	}
	return buf.Bytes()
}

func TestRoundTrip(t *testing.T) {
	b := encodeAll(t)
	r := NewReader(bytes.NewReader(b), int64(len(b)))
	checks := []struct {
		name string
		ok   bool
	}{
		{"uint32", r.Uint32() == 7},
		{"uint64", r.Uint64() == 1<<40},
		{"int64", r.Int64() == -3},
		{"bool", r.Bool()},
		{"float32", r.Float32() == 1.5},
		{"float64", math.IsInf(r.Float64(), -1)},
		{"string", r.String() == "héllo"},
		{"bytes", bytes.Equal(r.Bytes(), []byte{1, 2, 3})},
		{"strings", slices.Equal(r.Strings(), []string{"a", "", "ccc"})},
		{"uint32s", slices.Equal(r.Uint32s(), []uint32{1, 2, 3})},
		{"uint64s", slices.Equal(r.Uint64s(), []uint64{math.MaxUint64})},
		{"int8s", slices.Equal(r.Int8s(), []int8{-128, 0, 127})},
		{"float32s", slices.Equal(r.Float32s(), []float32{-0.5, 2})},
		{"float64s", slices.Equal(r.Float64s(), []float64{math.Pi})},
		{"raw parts", slices.Equal(r.Uint32s(), []uint32{10, 11, 12, 13})},
	}
	for _, c := range checks {
		if !c.ok {
			t.Errorf("%s did not round-trip", c.name)
		}
	}
	if err := r.Verify(); err != nil {
		t.Fatal(err)
	}
}

func TestCorrupt(t *testing.T) {
	good := encodeAll(t)
	flipped := slices.Clone(good)
	flipped[len(flipped)/2] ^= 0x40
	var huge bytes.Buffer
	w := NewWriter(&huge)
	w.Uint64(1 << 60) // a count no input could hold
	w.Finish()
	cases := []struct {
		name string
		in   []byte
	}{
		{"empty", nil},
		{"truncated", good[:len(good)-9]},
		{"flipped byte", flipped},
		{"trailing data", append(slices.Clone(good), 0)},
		{"huge count", huge.Bytes()},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := NewReader(bytes.NewReader(c.in), int64(len(c.in)))
			decodeAll(r)
			if err := r.Verify(); !errors.Is(err, ErrCorrupt) {
				t.Fatalf("Verify = %v, want ErrCorrupt", err)
			}
		})
	}
}

// decodeAll reads what encodeAll writes, ignoring the values.
func decodeAll(r *Reader) {
	r.Uint32()
	r.Uint64()
	r.Int64()
	r.Bool()
	r.Float32()
	r.Float64()
	_ = r.String()
	r.Bytes()
	r.Strings()
	r.Uint32s()
	r.Uint64s()
	r.Int8s()
	r.Float32s()
	r.Float64s()
	r.Uint32s()
}

// errWriter fails every write.
type errWriter struct{}

func (errWriter) Write([]byte) (int, error) { return 0, errors.New("disk full") }

func TestWriterStickyError(t *testing.T) {
	w := NewWriter(errWriter{})
	w.Uint32s(make([]uint32, 1<<19)) // larger than the buffer: reaches the writer
	w.String("more")
	if err := w.Finish(); err == nil || err.Error() != "disk full" {
		t.Fatalf("Finish = %v, want the write error", err)
	}
}

// FuzzReader decodes arbitrary input: it must never panic, never allocate
// beyond the input's size, and accept only what checks out.
func FuzzReader(f *testing.F) {
	f.Add(encodeAll(f))
	f.Add([]byte{})
	f.Add([]byte{0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x7f, 0, 0, 0, 0})
	f.Fuzz(func(t *testing.T, in []byte) {
		r := NewReader(bytes.NewReader(in), int64(len(in)))
		if len(in)%3 == 1 {
			r = NewBytesReader(in) // decodes in place: BytesView returns views
		} else if len(in)%3 == 2 {
			r = NewPayloadReader(in) // no trailer, never checksummed
		}
		for r.Err() == nil && r.Remaining() > 0 {
			before := r.Remaining()
			if off := r.Offset(); off+before != int64(len(in))-TrailerSize && off+before != int64(len(in)) {
				t.Fatalf("offset %d with %d left of %d bytes", off, before, len(in))
			}
			switch before % 7 {
			case 6:
				if b := r.BytesView(); int64(len(b)) > before {
					t.Fatalf("a view of %d bytes from %d", len(b), before)
				}
			case 5:
				if b, reg := r.Mappable(0); int64(len(b)) > before || reg != nil {
					t.Fatalf("%d bytes from %d (mapped %v)", len(b), before, reg != nil)
				}
			case 0:
				if s := r.Strings(); int64(len(s))*8 > before {
					t.Fatalf("%d strings from %d bytes", len(s), before)
				}
			case 1:
				if s := r.Float32s(); int64(len(s))*4 > before {
					t.Fatalf("%d floats from %d bytes", len(s), before)
				}
			case 2:
				if b := r.Bytes(); int64(len(b)) > before {
					t.Fatalf("%d bytes from %d", len(b), before)
				}
			case 3:
				r.Bool()
			default:
				r.Uint64s()
			}
		}
		_ = r.Verify()
	})
}

// BenchmarkReadScalars decodes small values one by one, as the snapshot's
// memories are read (flags, counts, times), from memory and from a reader:
//
//	go test -run '^$' -bench ReadScalars -cpu 1 -count 6 ./internal/binenc
func BenchmarkReadScalars(b *testing.B) {
	var buf bytes.Buffer
	w := NewWriter(&buf)
	const n = 1 << 16
	for i := range n {
		w.Uint32(uint32(i))
		w.Uint64(uint64(i) << 20)
		w.Bool(i%3 == 0)
	}
	if err := w.Finish(); err != nil {
		b.Fatal(err)
	}
	data := buf.Bytes()
	for _, tc := range []struct {
		name string
		open func() *Reader
	}{
		{"bytes", func() *Reader { return NewBytesReader(data) }},
		{"reader", func() *Reader { return NewReader(bytes.NewReader(data), int64(len(data))) }},
	} {
		b.Run(tc.name, func(b *testing.B) {
			b.SetBytes(int64(len(data)))
			for b.Loop() {
				r := tc.open()
				var sum uint64
				for range n {
					sum += uint64(r.Uint32()) + r.Uint64()
					if r.Bool() {
						sum++
					}
				}
				if err := r.Verify(); err != nil || sum == 0 {
					b.Fatal(err)
				}
			}
		})
	}
}
