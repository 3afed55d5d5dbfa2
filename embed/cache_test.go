package embed

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"sync"
	"testing"

	"github.com/engram-memory/engram/memory"
)

// recorder is a Func that remembers every batch it was asked to embed.
type recorder struct {
	mu      sync.Mutex
	batches [][]string
	err     error
	short   bool // return one vector too few
}

func (r *recorder) embedder(model string) Func {
	return Func{ModelID: model, F: func(_ context.Context, texts []string) ([][]float32, error) {
		r.mu.Lock()
		r.batches = append(r.batches, slices.Clone(texts))
		r.mu.Unlock()
		if r.err != nil {
			return nil, r.err
		}
		out := make([][]float32, len(texts))
		for i, t := range texts {
			if t != "" {
				out[i] = fakeVec(model+t, 4)
			}
		}
		if r.short {
			out = out[1:]
		}
		return out, nil
	}}
}

func TestCachedSecondCallEmbedsNothing(t *testing.T) {
	for _, p := range protocols {
		t.Run(p.name, func(t *testing.T) {
			srv := newFake(t, p, ok(p, 8))
			c := Cached(p.open(t, srv.URL, opts{}), NewLRU(1000))
			in := texts(150)
			first, err := c.Embed(context.Background(), in)
			if err != nil {
				t.Fatal(err)
			}
			if srv.count() != 3 {
				t.Fatalf("first call made %d requests, want 3", srv.count())
			}
			second, err := c.Embed(context.Background(), in)
			if err != nil {
				t.Fatal(err)
			}
			if srv.count() != 3 {
				t.Fatalf("second call made %d requests, want none", srv.count()-3)
			}
			if !equalVecs(first, second) || !equalVecs(first, fakeVecs(in, 8)) {
				t.Fatal("cached vectors differ")
			}
			if c.Model() != p.name+":m" {
				t.Fatalf("model %q", c.Model())
			}
		})
	}
}

func TestCachedOnlyMissesEmbedded(t *testing.T) {
	for _, tc := range []struct {
		name        string
		first, then []string
		wantBatch   []string // what the second call sends; nil: no call
	}{
		{"partial hits", []string{"a", "b"}, []string{"a", "c", "b", "d"}, []string{"c", "d"}},
		{"all hits", []string{"a", "b"}, []string{"b", "a", "b"}, nil},
		{"duplicates embedded once", nil, []string{"x", "y", "x", "x"}, []string{"x", "y"}},
		{"duplicate of a hit", []string{"a"}, []string{"a", "a", "z"}, []string{"z"}},
		{"empty", nil, []string{}, nil},
		{"unembeddable text asked again", []string{""}, []string{"", "a"}, []string{"", "a"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rec := &recorder{}
			c := Cached(rec.embedder("f:m"), NewLRU(100))
			if len(tc.first) > 0 {
				if _, err := c.Embed(context.Background(), tc.first); err != nil {
					t.Fatal(err)
				}
			}
			before := len(rec.batches)
			got, err := c.Embed(context.Background(), tc.then)
			if err != nil {
				t.Fatal(err)
			}
			var sent []string
			if len(rec.batches) > before {
				if len(rec.batches) != before+1 {
					t.Fatalf("%d calls, want one", len(rec.batches)-before)
				}
				sent = rec.batches[before]
			}
			if !slices.Equal(sent, tc.wantBatch) {
				t.Fatalf("embedded %q, want %q", sent, tc.wantBatch)
			}
			if got == nil || len(got) != len(tc.then) {
				t.Fatalf("%d vectors for %d texts", len(got), len(tc.then))
			}
			for i, s := range tc.then {
				var want []float32
				if s != "" {
					want = fakeVec("f:m"+s, 4)
				}
				if !slices.Equal(got[i], want) {
					t.Fatalf("text %q: got %v want %v", s, got[i], want)
				}
			}
		})
	}
}

// Callers may normalise vectors in place: that must not reach the cache or
// the other copies of a repeated text.
func TestCachedReturnsIndependentVectors(t *testing.T) {
	rec := &recorder{}
	c := Cached(rec.embedder("f:m"), NewLRU(10))
	got, err := c.Embed(context.Background(), []string{"a", "a"})
	if err != nil {
		t.Fatal(err)
	}
	got[0][0] = 42
	if got[1][0] == 42 {
		t.Fatal("repeated text shares its vector")
	}
	again, _ := c.Embed(context.Background(), []string{"a"})
	if again[0][0] == 42 {
		t.Fatal("mutation reached the cache")
	}
}

func TestCachedKeysByModel(t *testing.T) {
	lru := NewLRU(10)
	r1, r2 := &recorder{}, &recorder{}
	a, b := Cached(r1.embedder("p:one"), lru), Cached(r2.embedder("p:two"), lru)
	va, _ := a.Embed(context.Background(), []string{"t"})
	vb, _ := b.Embed(context.Background(), []string{"t"})
	if len(r2.batches) != 1 || slices.Equal(va[0], vb[0]) {
		t.Fatal("a vector crossed models")
	}
	if v, ok, _ := lru.GetEmbedding(context.Background(), "p:one", memory.ContentHash("t")); !ok || !slices.Equal(v, va[0]) {
		t.Fatal("not stored under (model, memory.ContentHash(text))")
	}
}

// errCache fails on demand.
type errCache struct {
	Cache
	getErr, putErr error
}

func (c errCache) GetEmbedding(ctx context.Context, m, h string) ([]float32, bool, error) {
	if c.getErr != nil {
		return nil, false, c.getErr
	}
	return c.Cache.GetEmbedding(ctx, m, h)
}

func (c errCache) PutEmbedding(ctx context.Context, m, h string, v []float32) error {
	if c.putErr != nil {
		return c.putErr
	}
	return c.Cache.PutEmbedding(ctx, m, h, v)
}

func TestCachedErrors(t *testing.T) {
	boom := errors.New("boom")
	for _, tc := range []struct {
		name    string
		cache   Cache
		rec     *recorder
		wantErr error
	}{
		{"get fails", errCache{NewLRU(4), boom, nil}, &recorder{}, boom},
		{"put fails", errCache{NewLRU(4), nil, boom}, &recorder{}, boom},
		{"embedder fails", NewLRU(4), &recorder{err: boom}, boom},
		{"embedder miscounts", NewLRU(4), &recorder{short: true}, ErrBadResponse},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := Cached(tc.rec.embedder("f:m"), tc.cache).Embed(context.Background(), []string{"a", "b"})
			if !errors.Is(err, tc.wantErr) || got != nil {
				t.Fatalf("got %v, %v; want %v", got, err, tc.wantErr)
			}
		})
	}
}

func TestCachedNilParts(t *testing.T) {
	e := Func{ModelID: "f:m"}
	if _, wrapped := Cached(e, nil).(*cached); wrapped {
		t.Fatal("nil cache should return the embedder unchanged")
	}
	c := Cached(nil, NewLRU(1))
	if _, err := c.Embed(context.Background(), []string{"a"}); !errors.Is(err, ErrNoEmbedder) {
		t.Fatalf("error %v, want ErrNoEmbedder", err)
	}
	if c.Model() != "" {
		t.Fatal(c.Model())
	}
}

func TestCachedConcurrent(t *testing.T) {
	srv := newFake(t, openAIProtocol, ok(openAIProtocol, 8))
	c := Cached(openAIProtocol.open(t, srv.URL, opts{batch: 7}), NewLRU(16)) // small: evicts constantly
	pool := texts(40)
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	for g := range 8 {
		wg.Go(func() {
			rng := rand.New(rand.NewPCG(uint64(g), 1))
			for range 30 {
				in := make([]string, 1+rng.IntN(12))
				for i := range in {
					in[i] = pool[rng.IntN(len(pool))]
				}
				got, err := c.Embed(context.Background(), in)
				if err != nil {
					errs <- err
					return
				}
				if !equalVecs(got, fakeVecs(in, 8)) {
					errs <- fmt.Errorf("wrong vectors for %q", in)
					return
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
}

// batchLRU is an LRU that also takes batches, counting the calls of each kind.
type batchLRU struct {
	*LRU
	batches, singles int
}

func (b *batchLRU) PutEmbedding(ctx context.Context, m, h string, v []float32) error {
	b.singles++
	return b.LRU.PutEmbedding(ctx, m, h, v)
}

func (b *batchLRU) PutEmbeddings(ctx context.Context, m string, hs []string, vs [][]float32) error {
	b.batches++
	for i, h := range hs {
		if err := b.LRU.PutEmbedding(ctx, m, h, vs[i]); err != nil {
			return err
		}
	}
	return nil
}

// TestCachedPutsInOneBatch: a cache that takes batches gets one call per
// Embed, holding exactly the new vectors.
func TestCachedPutsInOneBatch(t *testing.T) {
	ctx := context.Background()
	var r recorder
	c := &batchLRU{LRU: NewLRU(100)}
	e := Cached(r.embedder("m"), c)
	if _, err := e.Embed(ctx, []string{"a", "b", "", "a", "c"}); err != nil {
		t.Fatal(err)
	}
	if c.batches != 1 || c.singles != 0 || c.Len() != 3 {
		t.Fatalf("batches %d, singles %d, cached %d; want 1, 0, 3", c.batches, c.singles, c.Len())
	}
	if _, err := e.Embed(ctx, []string{"a", "b"}); err != nil {
		t.Fatal(err)
	}
	if c.batches != 1 {
		t.Fatalf("all hits still wrote to the cache: %d batches", c.batches)
	}
}
