package tensorfile

import (
	"encoding/binary"
	"errors"
	"hash/crc32"
	"math"
	"testing"
	"unsafe"
)

func fixture(t testing.TB) []byte {
	t.Helper()
	w := NewWriter([]byte(`{"name":"fixture"}`))
	w.AddBytes("vocab", []byte("a\nb\nc"))
	must := func(err error) {
		if err != nil {
			t.Fatal(err)
		}
	}
	must(w.Add("f32", Float32, []int{2, 3}, []float32{1, -2, 3.5, 0, 1e-7, -1e30}))
	must(w.Add("f16", Float16, []int{4}, []float32{1, -2, 0.1, 65504}))
	must(w.Add("q8", Int8Rows, []int{2, 2}, []float32{1, -0.5, 0, 0}))
	must(w.Add("q8vec", Int8Rows, []int{3}, []float32{2, 1, -1}))
	return w.Bytes()
}

func TestRoundTrip(t *testing.T) {
	data := fixture(t)
	f, err := Parse(string(data))
	if err != nil {
		t.Fatal(err)
	}
	if string(f.Meta) != `{"name":"fixture"}` {
		t.Errorf("meta %q", f.Meta)
	}
	if m, err := Meta(string(data)); err != nil || string(m) != string(f.Meta) {
		t.Errorf("Meta = %q, %v", m, err)
	}
	for _, c := range []struct {
		name  string
		shape []int
		want  []float32
		tol   float32
	}{
		{"f32", []int{2, 3}, []float32{1, -2, 3.5, 0, 1e-7, -1e30}, 0},
		{"f16", []int{4}, []float32{1, -2, 0.1, 65504}, 1e-4},
		{"q8", []int{2, 2}, []float32{1, -0.5, 0, 0}, 1.0 / 254},
		{"q8vec", []int{3}, []float32{2, 1, -1}, 2.0 / 254},
	} {
		tn, ok := f.Tensor(c.name)
		if !ok {
			t.Fatalf("no tensor %q", c.name)
		}
		if len(tn.Shape) != len(c.shape) {
			t.Fatalf("%s: shape %v, want %v", c.name, tn.Shape, c.shape)
		}
		got, err := tn.Float32s(nil)
		if err != nil {
			t.Fatal(err)
		}
		for i := range c.want {
			if d := float32(math.Abs(float64(got[i] - c.want[i]))); d > c.tol {
				t.Errorf("%s[%d] = %v, want %v", c.name, i, got[i], c.want[i])
			}
		}
	}
	v, _ := f.Tensor("vocab")
	if v.DType != Bytes || v.Data != "a\nb\nc" {
		t.Errorf("vocab %v %q", v.DType, v.Data)
	}
	if _, err := v.Float32s(nil); err == nil {
		t.Error("Float32s of a bytes tensor did not fail")
	}
}

func TestCorrupt(t *testing.T) {
	data := fixture(t)
	cases := map[string][]byte{
		"empty":     nil,
		"magic":     append([]byte("XNGRAMTF"), data[8:]...),
		"truncated": data[:len(data)-10],
		"bitflip":   flip(data, 40),
	}
	for name, b := range cases {
		if _, err := Parse(string(b)); !errors.Is(err, ErrCorrupt) {
			t.Errorf("%s: err %v, want ErrCorrupt", name, err)
		}
	}
}

func flip(b []byte, i int) []byte {
	c := append([]byte(nil), b...)
	c[i] ^= 0x10
	return c
}

// Every binary16 value converts to float32 exactly and back to the same bits.
func TestHalfExhaustive(t *testing.T) {
	for h := 0; h < 1<<16; h++ {
		f := HalfToFloat(uint16(h))
		exp, frac := (h>>10)&0x1f, h&0x3ff
		var want float64
		switch {
		case exp == 0x1f && frac != 0:
			if !math.IsNaN(float64(f)) {
				t.Fatalf("%04x: %v, want NaN", h, f)
			}
			continue
		case exp == 0x1f:
			want = math.Inf(1)
		case exp == 0:
			want = float64(frac) * math.Pow(2, -24)
		default:
			want = (1 + float64(frac)/1024) * math.Pow(2, float64(exp-15))
		}
		if h&0x8000 != 0 {
			want = -want
		}
		if float64(f) != want {
			t.Fatalf("%04x: %v, want %v", h, f, want)
		}
		if back := FloatToHalf(f); back != uint16(h) {
			t.Fatalf("%04x -> %v -> %04x", h, f, back)
		}
	}
}

// FloatToHalf rounds to the nearest binary16, ties to even.
func TestFloatToHalfRounding(t *testing.T) {
	for _, c := range []struct {
		f    float32
		want uint16
	}{
		{1 + 1.0/2048, 0x3c00},          // tie, even stays
		{1 + 3.0/2048, 0x3c02},          // tie, odd rounds up
		{65520, 0x7c00},                 // rounds to Inf
		{1e-8, 0x0000},                  // underflow
		{5.960464477539063e-08, 0x0001}, // smallest subnormal
		{-2, 0xc000},
	} {
		if got := FloatToHalf(c.f); got != c.want {
			t.Errorf("FloatToHalf(%v) = %04x, want %04x", c.f, got, c.want)
		}
	}
}

func FuzzParse(f *testing.F) {
	f.Add(fixture(f))
	f.Add([]byte(Magic))
	f.Fuzz(func(t *testing.T, b []byte) {
		// Fix the checksum up so the fuzzer reaches the layout checks.
		if len(b) >= 4 {
			binary.LittleEndian.PutUint32(b[len(b)-4:], crc32.ChecksumIEEE(b[:len(b)-4]))
		}
		file, err := Parse(string(b))
		if err != nil {
			return
		}
		for i := range file.Tensors {
			tn := &file.Tensors[i]
			if tn.DType != Bytes {
				if _, err := tn.Float32s(nil); err != nil {
					t.Fatalf("parsed tensor %q does not decode: %v", tn.Name, err)
				}
			}
		}
	})
}

// TestFloat16s: the bits of a float16 tensor, in place when the file is
// 2-byte aligned and decoded when it is not, the same either way.
func TestFloat16s(t *testing.T) {
	data := fixture(t)
	shifted := string(append([]byte{0}, data...))
	for _, c := range []struct {
		name    string
		file    string
		inPlace bool
	}{
		{"aligned", string(data), littleEndian},
		{"odd address", shifted[1:], false},
	} {
		f, err := Parse(c.file)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		tn, _ := f.Tensor("f16")
		bits, err := tn.Float16s()
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		want, _ := tn.Float32s(nil)
		if len(bits) != len(want) {
			t.Fatalf("%s: %d values, want %d", c.name, len(bits), len(want))
		}
		for i, h := range bits {
			if HalfToFloat(h) != want[i] {
				t.Errorf("%s: [%d] = %g, want %g", c.name, i, HalfToFloat(h), want[i])
			}
		}
		if inPlace := unsafe.Pointer(&bits[0]) == unsafe.Pointer(unsafe.StringData(tn.Data)); inPlace != c.inPlace {
			t.Errorf("%s: in place %v, want %v", c.name, inPlace, c.inPlace)
		}
		q, _ := f.Tensor("q8")
		if _, err := q.Float16s(); err == nil {
			t.Errorf("%s: Float16s of an int8rows tensor did not fail", c.name)
		}
	}
}

// TestParseBuiltIn: without the checksum a flipped data byte passes (the
// caller vouches for the bytes), but the layout is still checked.
func TestParseBuiltIn(t *testing.T) {
	data := fixture(t)
	if _, err := Parse(string(flip(data, len(data)-5))); !errors.Is(err, ErrCorrupt) {
		t.Fatalf("Parse of a flipped data byte: %v, want ErrCorrupt", err)
	}
	for name, c := range map[string]struct {
		data    []byte
		corrupt bool
	}{
		"intact":    {data, false},
		"truncated": {data[:len(data)-10], true},
		"magic":     {append([]byte("XNGRAMTF"), data[8:]...), true},
		"last byte": {flip(data, len(data)-5), false},
	} {
		_, err := ParseBuiltIn(string(c.data))
		if got := errors.Is(err, ErrCorrupt); got != c.corrupt {
			t.Errorf("%s: err %v, want corrupt %v", name, err, c.corrupt)
		}
	}
}
