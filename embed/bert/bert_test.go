package bert

import (
	"context"
	"errors"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
)

func TestModelID(t *testing.T) {
	e, err := Default()
	if err != nil {
		t.Fatal(err)
	}
	if got, want := e.Model(), "all-minilm-l6-v2-v1"; got != want {
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
