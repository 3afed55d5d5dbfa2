package bert

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
	"unsafe"

	"github.com/engram-memory/engram/embed"
	"github.com/engram-memory/engram/internal/golden"
	"github.com/engram-memory/engram/internal/linalg"
	"github.com/engram-memory/engram/internal/tensorfile"
	"github.com/engram-memory/engram/internal/wordpiece"
)

func TestModelID(t *testing.T) {
	e, err := Default()
	if err != nil {
		t.Fatal(err)
	}
	if got, want := e.Model(), "all-minilm-l6-v2-v2"; got != want {
		t.Errorf("Model() = %q, want %q", got, want)
	}
	if e.Dim() != 384 || e.MaxTokens() != 256 {
		t.Errorf("Dim %d MaxTokens %d", e.Dim(), e.MaxTokens())
	}
}

// A text's vector does not depend on what else is in its batch, on the batch
// size or on the number of workers: every step is row-wise or per sequence.
func TestBatchIndependent(t *testing.T) {
	texts := []string{"", "hello", "The staging database runs PostgreSQL 16 on port 5433.",
		strings.Repeat("long text about memory engines ", 60), "日本語", "[SEP]"}
	base, err := New(Options{Workers: 1})
	if err != nil {
		t.Fatal(err)
	}
	var alone [][]float32
	for _, s := range texts {
		v, err := base.Embed(context.Background(), []string{s})
		if err != nil {
			t.Fatal(err)
		}
		alone = append(alone, v[0])
	}
	for _, o := range []Options{{}, {Workers: 3}, {BatchTokens: 1}, {BatchTokens: 100000}} {
		e, err := New(o)
		if err != nil {
			t.Fatal(err)
		}
		got, err := e.Embed(context.Background(), texts)
		if err != nil {
			t.Fatal(err)
		}
		for i := range texts {
			if !slices.Equal(got[i], alone[i]) {
				t.Errorf("%+v: vector of %.30q differs from its one-text embedding", o, texts[i])
			}
		}
	}
}

func TestConcurrentEmbed(t *testing.T) {
	e, err := Default()
	if err != nil {
		t.Fatal(err)
	}
	concurrentEmbed(t, e)
	// bge-small with int8 activations (fp32 without VNNI): each product
	// quantises its rows into the calling goroutine's scratch.
	if e, err = NewBGESmall(Options{Precision: Int8}); err != nil {
		t.Fatal(err)
	}
	concurrentEmbed(t, e)
}

// concurrentEmbed embeds the same texts from 8 goroutines, 5 rounds each,
// against one serial call (-race).
func concurrentEmbed(t *testing.T, e *Embedder) {
	t.Helper()
	texts := []string{"first memory", "second, longer memory about the deploy key rotation", "third"}
	want, err := e.Embed(context.Background(), texts)
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	for g := 0; g < 8; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for round := 0; round < 5; round++ {
				got, err := e.Embed(context.Background(), texts)
				if err != nil {
					t.Error(err)
					return
				}
				for i := range got {
					if !slices.Equal(got[i], want[i]) {
						t.Errorf("concurrent vector %d differs", i)
						return
					}
				}
			}
		}()
	}
	wg.Wait()
}

func TestEmbedCancelled(t *testing.T) {
	e, err := New(Options{BatchTokens: 256})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := e.Embed(ctx, []string{"x"}); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled before: err %v", err)
	}
	// Cancelled while embedding: the next forward pass does not start.
	texts := make([]string, 2000)
	for i := range texts {
		texts[i] = strings.Repeat("a memory to embed ", 10)
	}
	ctx, cancel = context.WithCancel(context.Background())
	time.AfterFunc(20*time.Millisecond, cancel)
	if _, err := e.Embed(ctx, texts); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled during: err %v", err)
	}
}

// TestWindows: a text longer than the model's maximum is embedded as its
// windows, pooled by length. "word" and "cat" are one word piece each, so 254
// of each fill exactly one window apiece, whose vectors are those of the two
// halves embedded alone; a text cut to one window is the first half's.
func TestWindows(t *testing.T) {
	e, err := New(Options{})
	if err != nil {
		t.Fatal(err)
	}
	one, err := New(Options{Windows: 1})
	if err != nil {
		t.Fatal(err)
	}
	piece := e.MaxTokens() - 2
	a, b := strings.Repeat("word ", piece), strings.Repeat("cat ", piece)
	for _, s := range []string{a, b} {
		if ids, _ := e.Tokenize(s); len(ids) != e.MaxTokens() {
			t.Fatalf("%d ids for %d repeats: the fixture no longer fills one window", len(ids), piece)
		}
	}
	ctx := context.Background()
	halves, err := e.Embed(ctx, []string{a, b})
	if err != nil {
		t.Fatal(err)
	}
	want := make([]float32, len(halves[0]))
	for d := range want {
		want[d] = halves[0][d] + halves[1][d] // equal lengths: equal weights
	}
	normalize(want)
	// The long text among short ones, so batches mix windows and texts.
	got, err := e.Embed(ctx, []string{"short", a + b, "also short"})
	if err != nil {
		t.Fatal(err)
	}
	if c := cosine(got[1], want); c < 0.99999 {
		t.Errorf("two windows: cosine %.6f to the pooled halves", c)
	}
	short, _ := e.Embed(ctx, []string{"short"})
	if c := cosine(got[0], short[0]); c < 0.999999 {
		t.Errorf("a short text beside a long one: cosine %.6f to itself alone", c)
	}
	cut, err := one.Embed(ctx, []string{a + b})
	if err != nil {
		t.Fatal(err)
	}
	if c := cosine(cut[0], halves[0]); c < 0.99999 {
		t.Errorf("Windows 1: cosine %.6f to the first half", c)
	}
	// Past Options.Windows the rest is cut: three halves at Windows 2 are two.
	two, err := New(Options{Windows: 2})
	if err != nil {
		t.Fatal(err)
	}
	got2, err := two.Embed(ctx, []string{a + b + a})
	if err != nil {
		t.Fatal(err)
	}
	if c := cosine(got2[0], want); c < 0.99999 {
		t.Errorf("Windows 2 of three: cosine %.6f to the first two pooled", c)
	}
}

func TestNewFromDataErrors(t *testing.T) {
	header := func(from, to string) string {
		if !strings.Contains(minilm[:4096], from) {
			t.Fatalf("header has no %q", from)
		}
		return strings.Replace(minilm[:4096], from, to, 1)
	}
	for name, data := range map[string]string{
		"empty":      "",
		"garbage":    "definitely not a model file",
		"kind":       header(`"kind":"bert"`, `"kind":"cnn!"`),
		"activation": header(`"hidden_act":"gelu_erf"`, `"hidden_act":"relu____"`),
		"pooling":    header(`"pooling":"mean"`, `"pooling":"max!"`),
	} {
		if _, err := NewFromData(data, Options{}); err == nil {
			t.Errorf("%s: NewFromData succeeded", name)
		}
	}
	if _, err := New(Options{Windows: -1}); err == nil {
		t.Error("negative Windows accepted")
	}
	if _, err := New(Options{Workers: -1}); err == nil {
		t.Error("negative Workers accepted")
	}
	if _, err := New(Options{Precision: "fp16"}); err == nil || !strings.Contains(err.Error(), `"fp16"`) {
		t.Errorf("precision fp16: %v", err)
	}
	// A header that parses but a body that does not: the error comes at first use.
	e, err := NewFromData(minilm[:len(minilm)-1], Options{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := e.Embed(context.Background(), []string{"x"}); err == nil {
		t.Error("a truncated model file embedded")
	}
}

func FuzzTokenize(f *testing.F) {
	e, err := Default()
	if err != nil {
		f.Fatal(err)
	}
	for _, s := range []string{"", "Hello, world!", "[CLS]x[SEP]", "日本語 한국어", "\x00\xff\u200d", strings.Repeat("unaffable ", 300)} {
		f.Add(s)
	}
	w, err := e.load()
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, s string) {
		ids, err := e.Tokenize(s)
		if err != nil {
			t.Fatal(err)
		}
		if len(ids) < 2 || len(ids) > e.MaxTokens() || ids[0] != 101 || ids[len(ids)-1] != 102 {
			t.Fatalf("%d ids: %v", len(ids), ids)
		}
		for _, id := range ids {
			if id < 0 || int(id) >= w.vocab {
				t.Fatalf("id %d out of range", id)
			}
		}
	})
}

// builtInFiles are the model files in this binary.
var builtInFiles = []struct{ name, data string }{
	{"minilm", minilm},
	{"bge-small", bgeSmall},
}

// TestBuiltInChecksum checks the built-in model files' checksums, which New
// and NewBGESmall skip at run time (tensorfile.ParseBuiltIn).
func TestBuiltInChecksum(t *testing.T) {
	for _, b := range builtInFiles {
		if _, err := tensorfile.Parse(b.data); err != nil {
			t.Errorf("%s: %v", b.name, err)
		}
	}
}

// rowsFile rewrites the built-in file with every matrix in [out × in] rows
// (query, key and value apart) and the word table in float32: the same
// values in the layout a file without linear_layout has.
func rowsFile(t *testing.T) string {
	t.Helper()
	f, err := tensorfile.Parse(minilm)
	if err != nil {
		t.Fatal(err)
	}
	var meta map[string]any
	if err := json.Unmarshal(f.Meta, &meta); err != nil {
		t.Fatal(err)
	}
	if meta["linear_layout"] != panelsLayout {
		t.Fatalf("built-in file's linear_layout is %v, want %s", meta["linear_layout"], panelsLayout)
	}
	delete(meta, "linear_layout")
	mb, err := json.Marshal(meta)
	if err != nil {
		t.Fatal(err)
	}
	w := tensorfile.NewWriter(mb)
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	for _, tn := range f.Tensors {
		switch {
		case tn.DType == tensorfile.Bytes:
			w.AddBytes(tn.Name, []byte(tn.Data))
		case len(tn.Shape) == 3: // panels
			bits, err := tn.Float16s()
			must(err)
			n, k := tn.Shape[0]*tn.Shape[2], tn.Shape[1]
			rows, err := linalg.UnpackF16(bits, n, k)
			must(err)
			if base, ok := strings.CutSuffix(tn.Name, "qkv.weight"); ok {
				for i, part := range []string{"query", "key", "value"} {
					must(w.Add(base+part+".weight", tensorfile.Float16, []int{n / 3, k}, rows[i*n/3*k:(i+1)*n/3*k]))
				}
				continue
			}
			must(w.Add(tn.Name, tensorfile.Float16, []int{n, k}, rows))
		default:
			v, err := tn.Float32s(nil)
			must(err)
			dt := tn.DType
			if dt == tensorfile.Int8Rows {
				dt = tensorfile.Float32
			}
			must(w.Add(tn.Name, dt, tn.Shape, v))
		}
	}
	return string(w.Bytes())
}

// TestLayouts: the built-in file's float16 panels used in place, the same
// panels decoded and packed (a CPU without a float16 kernel), and the same
// values stored as rows all give bit-identical vectors, at every precision.
func TestLayouts(t *testing.T) {
	texts := []string{"", "Prefers dark themes in every editor", strings.Repeat("the staging database listens on port 5433 ", 40)}
	rows := rowsFile(t)
	for _, prec := range []Precision{FP32, BF16} {
		var want [][]float32
		for _, c := range []struct {
			name    string
			data    string
			inPlace bool
		}{
			{"panels in place", minilm, true},
			{"panels decoded", minilm, false},
			{"rows", rows, false},
		} {
			if c.inPlace && !inPlace() {
				continue
			}
			saved := inPlace
			inPlace = func() bool { return c.inPlace }
			e, err := NewFromData(c.data, Options{Precision: prec})
			if err != nil {
				t.Fatal(err)
			}
			got, err := e.Embed(context.Background(), texts)
			inPlace = saved
			if err != nil {
				t.Fatalf("%s %s: %v", prec, c.name, err)
			}
			if want == nil {
				want = got
				continue
			}
			for i := range got {
				for d := range got[i] {
					if math.Float32bits(got[i][d]) != math.Float32bits(want[i][d]) {
						t.Fatalf("%s %s: text %d [%d] = %g, want %g", prec, c.name, i, d, got[i][d], want[i][d])
					}
				}
			}
		}
	}
}

// q8RowsFile rewrites the built-in bge-small file (Q8_0 panels) with every
// matrix decoded into float32 [out × in] rows (query, key and value apart):
// the same values in the layout a file without linear_layout has.
func q8RowsFile(t *testing.T) string {
	t.Helper()
	f, err := tensorfile.Parse(bgeSmall)
	if err != nil {
		t.Fatal(err)
	}
	m, err := parseMeta(f.Meta)
	if err != nil {
		t.Fatal(err)
	}
	if m.LinearLayout != q8PanelsLayout {
		t.Fatalf("bge-small's linear_layout is %q, want %s", m.LinearLayout, q8PanelsLayout)
	}
	var meta map[string]any
	if err := json.Unmarshal(f.Meta, &meta); err != nil {
		t.Fatal(err)
	}
	delete(meta, "linear_layout")
	mb, err := json.Marshal(meta)
	if err != nil {
		t.Fatal(err)
	}
	h, in := m.Bert.Hidden, m.Bert.Intermediate
	shapes := map[string][2]int{"attention.self.qkv.weight": {3 * h, h}, "attention.output.dense.weight": {h, h}, "intermediate.dense.weight": {in, h}, "output.dense.weight": {h, in}}
	w := tensorfile.NewWriter(mb)
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	for _, tn := range f.Tensors {
		if tn.DType == tensorfile.Bytes && tn.Name != "vocab" {
			_, rest, _ := strings.Cut(strings.TrimPrefix(tn.Name, "encoder.layer."), ".")
			nk, ok := shapes[rest]
			if !ok {
				t.Fatalf("bytes tensor %q", tn.Name)
			}
			q, err := linalg.NewPackedQPanels(linalg.Q8_0, tn.Data, nk[0], nk[1])
			must(err)
			n, k, rows := nk[0], nk[1], q.Unpack()
			if base, ok := strings.CutSuffix(tn.Name, "qkv.weight"); ok {
				for i, part := range []string{"query", "key", "value"} {
					must(w.Add(base+part+".weight", tensorfile.Float32, []int{n / 3, k}, rows[i*n/3*k:(i+1)*n/3*k]))
				}
				continue
			}
			must(w.Add(tn.Name, tensorfile.Float32, []int{n, k}, rows))
			continue
		}
		if tn.DType == tensorfile.Bytes {
			w.AddBytes(tn.Name, []byte(tn.Data))
			continue
		}
		v, err := tn.Float32s(nil)
		must(err)
		dt := tn.DType
		if dt == tensorfile.Int8Rows {
			dt = tensorfile.Float32
		}
		must(w.Add(tn.Name, dt, tn.Shape, v))
	}
	return string(w.Bytes())
}

// TestQ8Layout: bge-small's Q8_0 panels, used in place, give bit for bit
// the vectors of the same values decoded into float32 rows; at bf16 (the
// panels decoded and packed for the bf16 kernel) likewise.
func TestQ8Layout(t *testing.T) {
	texts := []string{"", "Prefers dark themes in every editor", strings.Repeat("the staging database listens on port 5433 ", 40)}
	rows := q8RowsFile(t)
	for _, prec := range []Precision{FP32, BF16} {
		var want [][]float32
		for _, data := range []string{bgeSmall, rows} {
			e, err := NewFromData(data, Options{Precision: prec})
			if err != nil {
				t.Fatal(err)
			}
			got, err := e.Embed(context.Background(), texts)
			if err != nil {
				t.Fatalf("%s: %v", prec, err)
			}
			if want == nil {
				want = got
				continue
			}
			for i := range got {
				for d := range got[i] {
					if math.Float32bits(got[i][d]) != math.Float32bits(want[i][d]) {
						t.Fatalf("%s rows: text %d [%d] = %g, the panels give %g", prec, i, d, got[i][d], want[i][d])
					}
				}
			}
		}
	}
}

// TestQ8LayoutErrors: a Q8_0 panel tensor of the wrong length or type makes
// the first use fail naming it.
func TestQ8LayoutErrors(t *testing.T) {
	f, err := tensorfile.Parse(bgeSmall)
	if err != nil {
		t.Fatal(err)
	}
	const name = "encoder.layer.3.intermediate.dense.weight"
	for _, c := range []struct {
		what string
		edit func(w *tensorfile.Writer, tn tensorfile.Tensor) error
		want string
	}{
		{"short", func(w *tensorfile.Writer, tn tensorfile.Tensor) error {
			w.AddBytes(tn.Name, []byte(tn.Data[:len(tn.Data)-1]))
			return nil
		}, "bytes for 1536×384 Q8_0 panels"},
		{"float32", func(w *tensorfile.Writer, tn tensorfile.Tensor) error {
			return w.Add(tn.Name, tensorfile.Float32, []int{4}, []float32{1, 2, 3, 4})
		}, "want Q8_0 panels as bytes"},
	} {
		t.Run(c.what, func(t *testing.T) {
			w := tensorfile.NewWriter(f.Meta)
			for _, tn := range f.Tensors {
				if tn.Name == name {
					if err := c.edit(w, tn); err != nil {
						t.Fatal(err)
					}
					continue
				}
				if tn.DType == tensorfile.Bytes {
					w.AddBytes(tn.Name, []byte(tn.Data))
					continue
				}
				v, err := tn.Float32s(nil)
				if err != nil {
					t.Fatal(err)
				}
				if err := w.Add(tn.Name, tn.DType, tn.Shape, v); err != nil {
					t.Fatal(err)
				}
			}
			e, err := NewFromData(string(w.Bytes()), Options{})
			if err != nil {
				t.Fatal(err)
			}
			_, err = e.Embed(context.Background(), []string{"x"})
			if err == nil || !strings.Contains(err.Error(), name) || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("Embed: %v, want an error naming %s with %q", err, name, c.want)
			}
		})
	}
}

// TestWarm: Warm readies the model (Embed then finds it loaded), and
// reports a model file that cannot load; through embed.Cached too.
func TestWarm(t *testing.T) {
	e, err := New(Options{})
	if err != nil {
		t.Fatal(err)
	}
	var w embed.Warmer = e
	if err := embed.Cached(e, embed.NewLRU(4)).(embed.Warmer).Warm(t.Context()); err != nil {
		t.Fatal(err)
	}
	if err := w.Warm(t.Context()); err != nil {
		t.Fatal(err)
	}
	if e.w.Load() == nil {
		t.Fatal("Warm left the model unloaded")
	}
	if _, err := e.Embed(t.Context(), []string{"warm"}); err != nil {
		t.Fatal(err)
	}
	bad, err := NewFromData(minilm[:len(minilm)-1], Options{})
	if err != nil {
		t.Fatal(err)
	}
	if err := bad.Warm(t.Context()); err == nil {
		t.Error("Warm of a truncated file succeeded")
	}
}

// TestBuiltInInPlace: the built-in files' panels (float16, or Q8_0 bytes)
// are used where the binary holds them (a misaligned go:embed string would
// make every process copy float16 ones: correct, but the load time would be
// back), and each file is in the layout the encoder is measured with.
func TestBuiltInInPlace(t *testing.T) {
	if binary.NativeEndian.Uint16([]byte{1, 0}) != 1 {
		t.Skip("a big-endian machine decodes the float16 values")
	}
	layouts := map[string]string{"minilm": panelsLayout, "bge-small": q8PanelsLayout}
	for _, b := range builtInFiles {
		f, err := tensorfile.ParseBuiltIn(b.data)
		if err != nil {
			t.Fatal(err)
		}
		m, err := parseMeta(f.Meta)
		if err != nil {
			t.Fatal(err)
		}
		if m.LinearLayout != layouts[b.name] {
			t.Errorf("%s: layout %q, want %q", b.name, m.LinearLayout, layouts[b.name])
		}
		const name = "encoder.layer.0.attention.self.qkv.weight"
		tn, ok := f.Tensor(name)
		if !ok {
			t.Fatalf("%s: no fused qkv tensor", b.name)
		}
		w, err := load(f, m, FP32, "")
		if err != nil {
			t.Fatal(err)
		}
		switch q := w.layers[0].qkv.(type) {
		case *linalg.PackedQ:
			if unsafe.Pointer(&q.Panels()[0]) != unsafe.Pointer(unsafe.StringData(tn.Data)) {
				t.Errorf("%s: the Q8_0 panels were copied (file at %p)", b.name, unsafe.StringData(b.data))
			}
		case *linalg.PackedF16:
			bits, err := tn.Float16s()
			if err != nil {
				t.Fatal(err)
			}
			if unsafe.Pointer(&bits[0]) != unsafe.Pointer(unsafe.StringData(tn.Data)) {
				t.Errorf("%s: the panels were copied (file at %p)", b.name, unsafe.StringData(b.data))
			}
		default:
			if linalg.HasF16() || m.LinearLayout == q8PanelsLayout {
				t.Errorf("%s: qkv is a %T", b.name, q)
			}
		}
	}
}

// TestVocabTable checks uncased.wpt, the WordPiece lookup table a built-in
// model's process uses in place, against the one built from each built-in
// file's vocabulary (they share it); go test -update rewrites it.
func TestVocabTable(t *testing.T) {
	var tables []string
	for _, data := range []string{minilm, bgeSmall} {
		f, err := tensorfile.Parse(data)
		if err != nil {
			t.Fatal(err)
		}
		voc, ok := f.Tensor("vocab")
		if !ok {
			t.Fatal("no vocabulary")
		}
		tb, err := wordpiece.Table(strings.Split(voc.Data, "\n"))
		if err != nil {
			t.Fatal(err)
		}
		tables = append(tables, tb)
	}
	if tables[0] != tables[1] {
		t.Fatal("the built-in files' vocabularies differ: each needs a table of its own")
	}
	golden.CheckBytes(t, "uncased.wpt", []byte(tables[0]))
}

// TestPackAfter: an embedder whose bf16 weights are float16 panels used in
// place packs them in the background after packAfter calls and uses the
// packed twin from then on, while calls go on from several goroutines (for
// -race); the vectors stay bit for bit those of the first call.
func TestPackAfter(t *testing.T) {
	if !linalg.HasBF16() || !inPlace() {
		t.Skip("skipped: this CPU has no AVX512_BF16 or float16 kernel")
	}
	saved := packAfter
	packAfter = 3
	t.Cleanup(func() { packAfter = saved })
	e, err := New(Options{Precision: BF16})
	if err != nil {
		t.Fatal(err)
	}
	texts := []string{"Prefers dark themes in every editor", "the staging database listens on port 5433"}
	want, err := e.Embed(t.Context(), texts)
	if err != nil {
		t.Fatal(err)
	}
	first := e.w.Load()
	if !first.packable() {
		t.Fatal("bf16 weights are not float16 panels in place")
	}
	var wg sync.WaitGroup
	errs := make(chan string, 4)
	for g := range 4 {
		wg.Go(func() {
			for round := range 20 {
				got, err := e.Embed(t.Context(), texts)
				if err != nil {
					errs <- err.Error()
					return
				}
				for i := range got {
					for d := range got[i] {
						if math.Float32bits(got[i][d]) != math.Float32bits(want[i][d]) {
							errs <- fmt.Sprintf("goroutine %d round %d: text %d [%d] = %g, want %g", g, round, i, d, got[i][d], want[i][d])
							return
						}
					}
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for e := range errs {
		t.Fatal(e)
	}
	for i := 0; e.w.Load() == first; i++ {
		if i == 1000 {
			t.Fatal("the weights were not packed after 80 calls")
		}
		time.Sleep(5 * time.Millisecond)
	}
	if e.w.Load().packable() {
		t.Fatal("the packed weights still round float16 panels per product")
	}
	got, err := e.Embed(t.Context(), texts)
	if err != nil {
		t.Fatal(err)
	}
	for i := range got {
		for d := range got[i] {
			if math.Float32bits(got[i][d]) != math.Float32bits(want[i][d]) {
				t.Fatalf("packed: text %d [%d] = %g, want %g", i, d, got[i][d], want[i][d])
			}
		}
	}
}

// Int8 multiplies int8 activations only by block-quantised weights, and
// only where the CPU has the kernel: MiniLM's float16 file computes FP32's
// vectors bit for bit, and so does bge-small's Q8_0 file elsewhere.
func TestInt8Precision(t *testing.T) {
	texts := []string{"which port does the staging database listen on", "ok", "sorry, I can't make it tomorrow"}
	for _, c := range []struct {
		name     string
		new      func(Options) (*Embedder, error)
		integers bool
	}{
		{"minilm", New, false},
		{"bge-small", NewBGESmall, linalg.HasInt8Activations()},
	} {
		t.Run(c.name, func(t *testing.T) {
			var got [2][][]float32
			for i, p := range []Precision{FP32, Int8} {
				e, err := c.new(Options{Precision: p})
				if err != nil {
					t.Fatal(err)
				}
				if got[i], err = e.Embed(context.Background(), texts); err != nil {
					t.Fatal(err)
				}
			}
			same := true
			for i := range texts {
				same = same && slices.Equal(got[0][i], got[1][i])
				if cs := cosine(got[0][i], got[1][i]); cs < 0.999 {
					t.Errorf("%q: int8 against fp32 cosine %.6f", texts[i], cs)
				}
			}
			if same == c.integers {
				t.Errorf("int8 vectors identical to fp32's: %v, want %v", same, !c.integers)
			}
		})
	}
}

// Precision reports what each model multiplies in for each option, and
// why when it is not what was asked.
func TestPrecisionReported(t *testing.T) {
	bf16Got, int8Got := "bf16", "int8"
	if !linalg.HasBF16() {
		bf16Got = "fp32 (bf16 asked: this CPU has no AVX512_BF16)"
	}
	if !linalg.HasInt8Activations() {
		int8Got = "fp32 (int8 asked: this CPU has no AVX-512 VNNI)"
	}
	for _, c := range []struct {
		name string
		new  func(Options) (*Embedder, error)
		p    Precision
		want string
	}{
		{"minilm", New, "", "fp32"},
		{"minilm", New, BF16, bf16Got},
		{"minilm", New, Int8, "fp32 (int8 asked: this model's float16 weights have no int8 path)"},
		{"bge-small", NewBGESmall, FP32, "fp32"},
		{"bge-small", NewBGESmall, Int8, int8Got},
	} {
		e, err := c.new(Options{Precision: c.p})
		if err != nil {
			t.Fatal(err)
		}
		if got := e.Precision(); got != c.want {
			t.Errorf("%s at %q: Precision() = %q, want %q", c.name, c.p, got, c.want)
		}
	}
}
