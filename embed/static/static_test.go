package static

import (
	"compress/gzip"
	"context"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"errors"
	"math"
	"os"
	"slices"
	"strings"
	"testing"
)

// reference is testdata/reference.json.gz, written by
// tools/modelconv/static_convert.py with model2vec's StaticModel.
type reference struct {
	MaxLength int `json:"max_length"`
	Dim       int `json:"dim"`
	Items     []struct {
		Text string  `json:"text"`
		IDs  []int32 `json:"ids"`
		Vec  string  `json:"vec"`
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

func TestReference(t *testing.T) {
	ref := loadReference(t)
	e, err := Default()
	if err != nil {
		t.Fatal(err)
	}
	if e.Dim() != ref.Dim {
		t.Fatalf("Dim %d, reference %d", e.Dim(), ref.Dim)
	}
	texts := make([]string, len(ref.Items))
	for i, it := range ref.Items {
		texts[i] = it.Text
	}
	got, err := e.Embed(context.Background(), texts)
	if err != nil {
		t.Fatal(err)
	}
	minCos, sum, n, empty := 2.0, 0.0, 0, 0
	for i, it := range ref.Items {
		ids, err := e.Tokenize(it.Text)
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(ids, it.IDs) && !(len(ids) == 0 && len(it.IDs) == 0) {
			t.Errorf("Tokenize(%.60q):\n got %v\nwant %v", it.Text, ids, it.IDs)
		}
		want := decodeVec(t, it.Vec)
		var ww float64
		for _, x := range want {
			ww += float64(x) * float64(x)
		}
		if ww == 0 { // model2vec's zero vector: nothing to embed
			empty++
			if got[i] != nil {
				t.Errorf("%.60q: model2vec gives the zero vector, got a vector", it.Text)
			}
			continue
		}
		if got[i] == nil {
			t.Errorf("%.60q: nil vector", it.Text)
			continue
		}
		var ab, aa float64
		for d := range want {
			ab += float64(got[i][d]) * float64(want[d])
			aa += float64(got[i][d]) * float64(got[i][d])
		}
		cs := ab / math.Sqrt(aa*ww)
		if !(cs >= 0.999) {
			t.Errorf("%.60q: cosine %.6f < 0.999", it.Text, cs)
		}
		minCos = min(minCos, cs)
		sum += cs
		n++
		if math.Abs(aa-1) > 1e-5 {
			t.Errorf("%.60q: |v|² = %v", it.Text, aa)
		}
	}
	t.Logf("%d texts (%d with nothing to embed): min cosine %.6f, mean %.6f", len(ref.Items), empty, minCos, sum/float64(n))
	if empty == 0 {
		t.Error("the reference has no text without known tokens")
	}
}

func TestModelID(t *testing.T) {
	e, err := Default()
	if err != nil {
		t.Fatal(err)
	}
	if id := e.Model(); !strings.HasPrefix(id, "minilm-static") || !strings.HasSuffix(id, "-v1") {
		t.Errorf("Model() = %q", id)
	}
}

func TestEmbedCancelled(t *testing.T) {
	e, err := Default()
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := e.Embed(ctx, []string{"x"}); !errors.Is(err, context.Canceled) {
		t.Errorf("err %v, want context.Canceled", err)
	}
}

func TestNewFromDataErrors(t *testing.T) {
	for name, data := range map[string]string{
		"empty":   "",
		"garbage": "not a model file at all, no",
		"bert":    builtinHeaderAs(t, "bert"),
	} {
		if _, err := NewFromData(data); err == nil {
			t.Errorf("%s: NewFromData succeeded", name)
		}
	}
}

// builtinHeaderAs is a file with the built-in header's kind replaced.
func builtinHeaderAs(t *testing.T, kind string) string {
	t.Helper()
	return strings.Replace(builtin[:4096], `"kind":"static"`, `"kind":"`+kind+`"`, 1)
}

func FuzzEmbed(f *testing.F) {
	e, err := Default()
	if err != nil {
		f.Fatal(err)
	}
	for _, s := range []string{"", "hello world", "[PAD][UNK]", "日本語", "\x00\xff", strings.Repeat("word ", 600)} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		ids, err := e.Tokenize(s)
		if err != nil {
			t.Fatal(err)
		}
		if len(ids) > e.meta.Tokenizer.MaxLength {
			t.Fatalf("%d ids", len(ids))
		}
		v, err := e.Embed(context.Background(), []string{s})
		if err != nil {
			t.Fatal(err)
		}
		if v[0] != nil {
			var ss float64
			for _, x := range v[0] {
				ss += float64(x) * float64(x)
			}
			if math.Abs(ss-1) > 1e-4 {
				t.Fatalf("|v|² = %v", ss)
			}
		}
	})
}
