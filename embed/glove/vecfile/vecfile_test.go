package vecfile

import (
	"bytes"
	"errors"
	"math"
	"reflect"
	"testing"
)

func sample(tb testing.TB) *File {
	tb.Helper()
	f := &File{Name: "t", Rev: 2, Dim: 3, SourceWords: 10,
		Words: []string{"alpha", "beta", "gamma"}, Ranks: []uint32{1, 4, 10},
		Components: map[string][]float32{"mean": {1, 0, 0}, "sif": {0, 0.6, 0.8}}}
	var vecs []byte
	for _, v := range [][]float32{{0.5, -1, 0.25}, {0, 0, 0}, {3, 2, -7}} {
		q, s := Quantize(v)
		f.Scales = append(f.Scales, s)
		vecs = append(vecs, q...)
	}
	f.Vectors = string(vecs)
	return f
}

func encode(tb testing.TB, f *File) []byte {
	tb.Helper()
	var b bytes.Buffer
	if err := Write(&b, f); err != nil {
		tb.Fatal(err)
	}
	return b.Bytes()
}

func TestRoundTrip(t *testing.T) {
	f := sample(t)
	got, err := Parse(string(encode(t, f)))
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, f) {
		t.Fatalf("round trip:\n got %+v\nwant %+v", got, f)
	}
	h, err := ParseHeader(string(encode(t, f)))
	if err != nil {
		t.Fatal(err)
	}
	if want := (Header{Name: "t", Rev: 2, Dim: 3, Words: 3, SourceWords: 10}); h != want {
		t.Fatalf("header %+v, want %+v", h, want)
	}
}

func TestQuantizeError(t *testing.T) {
	tests := []struct {
		name string
		v    []float32
	}{
		{"mixed", []float32{0.5, -1, 0.25, 0.001}},
		{"zero", []float32{0, 0}},
		{"one", []float32{-3}},
		{"tiny", []float32{1e-30, -2e-30}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			q, s := Quantize(tc.v)
			for i, x := range tc.v {
				got := float32(int8(q[i])) * s
				if d := math.Abs(float64(got - x)); d > float64(s)/2+1e-12 {
					t.Errorf("value %d: %v back as %v (scale %v)", i, x, got, s)
				}
			}
		})
	}
}

func TestParseRejects(t *testing.T) {
	good := encode(t, sample(t))
	mutate := func(fn func(b []byte) []byte) string {
		b := append([]byte(nil), good...)
		return string(fn(b))
	}
	tests := []struct {
		name string
		data string
	}{
		{"empty", ""},
		{"truncated", string(good[:len(good)-7])},
		{"flipped byte", mutate(func(b []byte) []byte { b[len(b)/2] ^= 1; return b })},
		{"bad magic", mutate(func(b []byte) []byte { b[0] = 'X'; return b })},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if _, err := Parse(tc.data); !errors.Is(err, ErrFormat) {
				t.Fatalf("Parse = %v, want ErrFormat", err)
			}
		})
	}
}

func TestWriteRejects(t *testing.T) {
	tests := []struct {
		name string
		mod  func(f *File)
	}{
		{"ranks not ascending", func(f *File) { f.Ranks[1] = 1 }},
		{"rank beyond source", func(f *File) { f.Ranks[2] = 11 }},
		{"newline in word", func(f *File) { f.Words[0] = "a\nb" }},
		{"short vectors", func(f *File) { f.Vectors = f.Vectors[1:] }},
		{"component length", func(f *File) { f.Components["mean"] = []float32{1} }},
		{"negative scale", func(f *File) { f.Scales[0] = -1 }},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			f := sample(t)
			tc.mod(f)
			if err := Write(&bytes.Buffer{}, f); !errors.Is(err, ErrFormat) {
				t.Fatalf("Write = %v, want ErrFormat", err)
			}
		})
	}
}

func FuzzParse(f *testing.F) {
	f.Add(string(encode(f, sample(f))))
	f.Add("")
	f.Add(Magic)
	f.Fuzz(func(t *testing.T, data string) {
		vf, err := Parse(data)
		if err != nil {
			return
		}
		// Whatever parses must write, and parse back to the same file.
		var b bytes.Buffer
		if err := Write(&b, vf); err != nil {
			t.Fatalf("parsed file does not write: %v", err)
		}
		again, err := Parse(b.String())
		if err != nil || !reflect.DeepEqual(again, vf) {
			t.Fatalf("rewritten file parses as %+v, %v", again, err)
		}
	})
}
