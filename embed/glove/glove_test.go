package glove

import (
	"context"
	"encoding/json"
	"errors"
	"math"
	"os"
	"strings"
	"sync"
	"testing"

	"github.com/engram-memory/engram/embed/glove/vecfile"
)

// fakeFile is a tiny hand-made vocabulary: each word's vector is chosen so
// that pooled results can be worked out by hand. Scales are 1, so the int8
// values are the vector.
func fakeFile(tb testing.TB, comps map[string][]float32) *vecfile.File {
	tb.Helper()
	rows := []struct {
		word string
		rank uint32
		vec  [3]int8
	}{
		{"the", 1, [3]int8{0, 0, 10}},
		{"cat", 50, [3]int8{4, 0, 0}},
		{"mat", 60, [3]int8{0, 3, 0}},
		{"get", 70, [3]int8{1, 1, 0}},
		{"user", 80, [3]int8{0, 2, 2}},
		{"name", 90, [3]int8{2, 0, 2}},
		{"iphone", 95, [3]int8{0, 0, 5}},
		{"cafe", 99, [3]int8{7, 0, 0}},
	}
	f := &vecfile.File{Name: "fake", Rev: 1, Dim: 3, SourceWords: 1000, Components: comps}
	var vecs []byte
	for _, r := range rows {
		f.Words = append(f.Words, r.word)
		f.Ranks = append(f.Ranks, r.rank)
		f.Scales = append(f.Scales, 1)
		for _, x := range r.vec {
			vecs = append(vecs, byte(x))
		}
	}
	f.Vectors = string(vecs)
	return f
}

func mustNew(tb testing.TB, f *vecfile.File, o Options) *Embedder {
	tb.Helper()
	e, err := NewFromFile(f, o)
	if err != nil {
		tb.Fatal(err)
	}
	return e
}

func embedOne(tb testing.TB, e *Embedder, text string) []float32 {
	tb.Helper()
	vs, err := e.Embed(context.Background(), []string{text})
	if err != nil {
		tb.Fatal(err)
	}
	return vs[0]
}

func unit(v ...float64) []float32 {
	var ss float64
	for _, x := range v {
		ss += x * x
	}
	out := make([]float32, len(v))
	for i, x := range v {
		out[i] = float32(x / math.Sqrt(ss))
	}
	return out
}

func near(a, b []float32, tol float64) bool {
	if (a == nil) != (b == nil) || len(a) != len(b) {
		return false
	}
	for i := range a {
		if math.Abs(float64(a[i]-b[i])) > tol {
			return false
		}
	}
	return true
}

func TestPoolingHandWorked(t *testing.T) {
	sifW := func(rank uint32) float64 { return DefaultSIFA / (DefaultSIFA + zipfP(rank, 1000)) }
	wThe, wCat, wMat := sifW(1), sifW(50), sifW(60)
	tests := []struct {
		name string
		opts Options
		comp []float32 // stored under the pooling's key
		text string
		want []float32
	}{
		{"mean drops stopwords", Options{Pooling: Mean, KeepCommon: true}, nil, "The cat on the mat", unit(4, 3, 0)},
		{"mean of one word", Options{Pooling: Mean, KeepCommon: true}, nil, "cat!", unit(1, 0, 0)},
		{"mean only stopwords is nil", Options{Pooling: Mean, KeepCommon: true}, nil, "the the", nil},
		{"oov contributes nothing", Options{Pooling: Mean, KeepCommon: true}, nil, "zebra cat quokka", unit(1, 0, 0)},
		{"camelCase split when whole is oov", Options{Pooling: Mean, KeepCommon: true}, nil, "getUserName", unit(3, 3, 4)},
		{"snake and kebab split", Options{Pooling: Mean, KeepCommon: true}, nil, "get_user-name", unit(3, 3, 4)},
		{"whole word kept when known", Options{Pooling: Mean, KeepCommon: true}, nil, "iPhone", unit(0, 0, 1)},
		{"diacritics folded", Options{Pooling: Mean, KeepCommon: true}, nil, "Café", unit(1, 0, 0)},
		{"sif weights by rank", Options{Pooling: SIF, KeepCommon: true}, nil, "the cat mat",
			unit(4*wCat, 3*wMat, 10*wThe)},
		{"component removed", Options{Pooling: Mean}, []float32{1, 0, 0}, "cat mat", unit(0, 1, 0)},
		{"vector equal to component is nil", Options{Pooling: Mean}, []float32{1, 0, 0}, "cat", nil},
		{"empty", Options{Pooling: Mean, KeepCommon: true}, nil, "", nil},
		{"punctuation only", Options{Pooling: SIF, KeepCommon: true}, nil, "?!- ...", nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var comps map[string][]float32
			if tc.comp != nil {
				comps = map[string][]float32{tc.opts.Pooling.String(): tc.comp}
			}
			e := mustNew(t, fakeFile(t, comps), tc.opts)
			if got := embedOne(t, e, tc.text); !near(got, tc.want, 1e-6) {
				t.Errorf("Embed(%q) = %v, want %v", tc.text, got, tc.want)
			}
		})
	}
}

func TestModelID(t *testing.T) {
	tests := []struct {
		name string
		opts Options
		want string
	}{
		{"default", Options{}, "fake-" + DefaultPooling.String() + "-v1"},
		{"mean", Options{Pooling: Mean}, "fake-mean-v1"},
		{"sif", Options{Pooling: SIF}, "fake-sif-v1"},
		{"sif other a", Options{Pooling: SIF, SIFA: 1e-4}, "fake-sif-a0.0001-v1"},
		{"keep common", Options{Pooling: Mean, KeepCommon: true}, "fake-mean-keepcc-v1"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := mustNew(t, fakeFile(t, nil), tc.opts).Model(); got != tc.want {
				t.Errorf("Model() = %q, want %q", got, tc.want)
			}
		})
	}
}

func TestBadOptions(t *testing.T) {
	for _, o := range []Options{{Pooling: 7}, {Pooling: SIF, SIFA: -1}, {Pooling: SIF, SIFA: 2}} {
		if _, err := NewFromFile(fakeFile(t, nil), o); err == nil {
			t.Errorf("NewFromFile(%+v) succeeded, want error", o)
		}
	}
}

func TestCanceled(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := mustNew(t, fakeFile(t, nil), Options{}).Embed(ctx, []string{"cat"})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v, want context.Canceled", err)
	}
}

func TestCommonComponentIsMeanDirectionForOneWord(t *testing.T) {
	// With a single contributing word the second moment is rank one: the
	// component is that word's direction.
	f := fakeFile(t, nil)
	f.Words, f.Ranks, f.Scales, f.Vectors = f.Words[1:2], f.Ranks[1:2], f.Scales[1:2], f.Vectors[3:6]
	c, err := CommonComponent(f, Options{Pooling: Mean})
	if err != nil {
		t.Fatal(err)
	}
	if !near(c, unit(1, 0, 0), 1e-6) {
		t.Fatalf("component = %v, want [1 0 0]", c)
	}
}

// TestEmbeddedMatchesSource checks the built-in file against the package's
// original floats for a few words: equal within int8 quantisation error.
func TestEmbeddedMatchesSource(t *testing.T) {
	b, err := os.ReadFile("testdata/source_words.json")
	if err != nil {
		t.Fatal(err)
	}
	var want map[string][]float32
	if err := json.Unmarshal(b, &want); err != nil {
		t.Fatal(err)
	}
	f, idx, err := builtin.load()
	if err != nil {
		t.Fatal(err)
	}
	for word, vec := range want {
		t.Run(word, func(t *testing.T) {
			i, ok := idx[word]
			if !ok {
				t.Fatalf("%q not in the embedded vocabulary", word)
			}
			got := f.Dequantize(nil, int(i))
			tol := float64(f.Scales[i])/2 + 1e-6
			for j := range vec {
				if d := math.Abs(float64(got[j] - vec[j])); d > tol {
					t.Fatalf("dim %d: %v, source %v (|diff| %v > %v)", j, got[j], vec[j], d, tol)
				}
			}
		})
	}
}

func cos(a, b []float32) float64 {
	var s float64
	for i := range a {
		s += float64(a[i]) * float64(b[i])
	}
	return s
}

func TestBuiltinSemantics(t *testing.T) {
	for _, p := range []Pooling{Mean, SIF} {
		t.Run(p.String(), func(t *testing.T) {
			e, err := New(Options{Pooling: p})
			if err != nil {
				t.Fatal(err)
			}
			if e.Dim() != 100 || e.Words() < 10000 {
				t.Fatalf("Dim %d, Words %d", e.Dim(), e.Words())
			}
			texts := []string{
				"the cat sat on the mat", "a kitten rested on the rug", "quarterly revenue grew 8%",
				"which colour scheme does the user like", "prefers dark themes",
				"the train to Berlin leaves at noon", "invoice totals are due by Friday",
				"", "xqzvw blorptastic", "!!!",
			}
			v, err := e.Embed(context.Background(), texts)
			if err != nil {
				t.Fatal(err)
			}
			cats, kitten, revenue := cos(v[0], v[1]), cos(v[0], v[2]), cos(v[1], v[2])
			t.Logf("cat~kitten %.3f, cat~revenue %.3f, kitten~revenue %.3f", cats, kitten, revenue)
			if cats < max(kitten, revenue)+0.2 {
				t.Errorf("cat~kitten %.3f not clearly above %.3f / %.3f", cats, kitten, revenue)
			}
			theme := cos(v[3], v[4])
			for _, other := range []int{2, 5, 6} {
				if o := cos(v[3], v[other]); theme <= o {
					t.Errorf("colour~themes %.3f <= colour~%q %.3f", theme, texts[other], o)
				}
			}
			for _, i := range []int{7, 8, 9} {
				if v[i] != nil {
					t.Errorf("Embed(%q) = %v, want nil", texts[i], v[i])
				}
			}
			for i := 0; i < 7; i++ {
				if n := math.Sqrt(cos(v[i], v[i])); math.Abs(n-1) > 1e-5 {
					t.Errorf("|Embed(%q)| = %v, want 1", texts[i], n)
				}
			}
		})
	}
}

func TestConcurrentEmbed(t *testing.T) {
	e := mustNew(t, fakeFile(t, map[string][]float32{"mean": {0, 0, 1}}), Options{Pooling: Mean})
	want := embedOne(t, e, "getUserName cat")
	var wg sync.WaitGroup
	for g := 0; g < 8; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < 200; i++ {
				vs, err := e.Embed(context.Background(), []string{"getUserName cat", strings.Repeat("mat ", i%5)})
				if err != nil {
					t.Error(err)
					return
				}
				if !near(vs[0], want, 0) {
					t.Errorf("concurrent result %v, want %v", vs[0], want)
					return
				}
			}
		}()
	}
	wg.Wait()
}

func TestDefaultShared(t *testing.T) {
	a, err := Default()
	if err != nil {
		t.Fatal(err)
	}
	b, _ := Default()
	if a != b {
		t.Error("Default returned two embedders")
	}
	if want := "glove100-" + DefaultPooling.String() + "-v1"; a.Model() != want {
		t.Errorf("Model() = %q, want %q", a.Model(), want)
	}
}
