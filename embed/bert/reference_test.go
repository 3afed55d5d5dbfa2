package bert

import (
	"compress/gzip"
	"context"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"math"
	"os"
	"slices"
	"testing"
)

// reference is testdata/reference.json.gz, written by
// tools/modelconv/bert_reference.py with sentence-transformers.
type reference struct {
	MaxSeqLength int `json:"max_seq_length"`
	Dim          int `json:"dim"`
	Items        []struct {
		Text string  `json:"text"`
		IDs  []int32 `json:"ids"`
		Vec  string  `json:"vec"`
	} `json:"items"`
}

func loadReference(tb testing.TB, path string) *reference {
	tb.Helper()
	f, err := os.Open(path)
	if err != nil {
		tb.Fatal(err)
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		tb.Fatal(err)
	}
	var ref reference
	if err := json.NewDecoder(zr).Decode(&ref); err != nil {
		tb.Fatal(err)
	}
	if len(ref.Items) < 100 {
		tb.Fatalf("reference has only %d items", len(ref.Items))
	}
	return &ref
}

func decodeVec(tb testing.TB, s string) []float32 {
	tb.Helper()
	b, err := base64.StdEncoding.DecodeString(s)
	if err != nil || len(b)%4 != 0 {
		tb.Fatalf("bad reference vector: %v", err)
	}
	v := make([]float32, len(b)/4)
	for i := range v {
		v[i] = math.Float32frombits(binary.LittleEndian.Uint32(b[4*i:]))
	}
	return v
}

func cosine(a, b []float32) float64 {
	var ab, aa, bb float64
	for i := range a {
		ab += float64(a[i]) * float64(b[i])
		aa += float64(a[i]) * float64(a[i])
		bb += float64(b[i]) * float64(b[i])
	}
	return ab / math.Sqrt(aa*bb)
}

func TestReferenceTokenIDs(t *testing.T) {
	ref := loadReference(t, "testdata/reference.json.gz")
	e, err := Default()
	if err != nil {
		t.Fatal(err)
	}
	if e.MaxTokens() != ref.MaxSeqLength {
		t.Errorf("MaxTokens %d, reference %d", e.MaxTokens(), ref.MaxSeqLength)
	}
	for _, it := range ref.Items {
		got, err := e.Tokenize(it.Text)
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(got, it.IDs) {
			t.Errorf("Tokenize(%.60q):\n got %v\nwant %v", it.Text, got, it.IDs)
		}
	}
}

// Every reference vector, embedded in one call (so batches pack many texts)
// and one text a call, reaches cosine 0.999 with sentence-transformers'. The
// reference cuts long texts at the model's maximum: Windows 1 does too
// (TestWindows covers what more windows add).
func TestReferenceVectors(t *testing.T) {
	ref := loadReference(t, "testdata/reference.json.gz")
	for _, c := range []struct {
		name string
		opts Options
		each bool // embed one text a call
		long bool // skipped with -short
	}{
		{"one call", Options{Windows: 1}, false, false},
		{"small batches, one worker", Options{BatchTokens: 300, Workers: 1, Windows: 1}, false, true},
		{"one text a call", Options{Windows: 1}, true, true},
		// bfloat16 where the CPU has it; elsewhere this is FP32 again.
		{"bf16", Options{Precision: BF16, Windows: 1}, false, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			if testing.Short() && c.long {
				t.Skip("short")
			}
			e, err := New(c.opts)
			if err != nil {
				t.Fatal(err)
			}
			texts := make([]string, len(ref.Items))
			for i, it := range ref.Items {
				texts[i] = it.Text
			}
			var got [][]float32
			if c.each {
				for _, s := range texts {
					v, err := e.Embed(context.Background(), []string{s})
					if err != nil {
						t.Fatal(err)
					}
					got = append(got, v[0])
				}
			} else if got, err = e.Embed(context.Background(), texts); err != nil {
				t.Fatal(err)
			}
			minCos, sum := 2.0, 0.0
			for i, it := range ref.Items {
				want := decodeVec(t, it.Vec)
				if len(got[i]) != ref.Dim || len(want) != ref.Dim {
					t.Fatalf("%q: dim %d, reference %d", it.Text, len(got[i]), len(want))
				}
				cs := cosine(got[i], want)
				sum += cs
				minCos = min(minCos, cs)
				if !(cs >= 0.999) {
					t.Errorf("%.60q: cosine %.6f < 0.999", it.Text, cs)
				}
			}
			t.Logf("%d texts: min cosine %.6f, mean %.6f", len(ref.Items), minCos, sum/float64(len(ref.Items)))
		})
	}
}
