package weaviate

import (
	"context"
	"errors"
	"fmt"
	stdmaps "maps"
	"slices"
	"sync"
	"testing"
	"time"
)

// fakeCounts stands for a tenant's counts on the server: what fetch answers,
// and what it was asked.
type fakeCounts struct {
	mu    sync.Mutex
	n     map[string]int            // tenant → memories
	df    map[string]map[string]int // tenant → term → documents
	asked []string                  // "tenant:all" and "tenant:term", in order
	fail  error
}

func (f *fakeCounts) fetch(tenant string) func(context.Context, int, []string) (int, map[string]int, error) {
	return func(_ context.Context, n int, terms []string) (int, map[string]int, error) {
		f.mu.Lock()
		defer f.mu.Unlock()
		if f.fail != nil {
			return 0, nil, f.fail
		}
		if n < 0 {
			f.asked = append(f.asked, tenant+":all")
			n = f.n[tenant]
		}
		df := map[string]int{}
		for _, t := range terms {
			f.asked = append(f.asked, tenant+":"+t)
			df[t] = f.df[tenant][t]
		}
		return n, df, nil
	}
}

func (f *fakeCounts) take() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	a := f.asked
	f.asked = nil
	return a
}

func TestTermCache(t *testing.T) {
	ctx := context.Background()
	now := time.Unix(1_700_000_000, 0)
	type step struct {
		do      string // "stats", "write", "dropAll", "serverAdds"
		tenant  string
		terms   []string
		after   time.Duration // since now
		wantN   int
		wantDF  map[string]int
		wantAsk []string
	}
	tests := []struct {
		name  string
		steps []step
	}{
		{"a repeat is answered from the cache", []step{
			{do: "stats", tenant: "a", terms: []string{"x", "y"}, wantN: 10, wantDF: map[string]int{"x": 3, "y": 0}, wantAsk: []string{"a:all", "a:x", "a:y"}},
			{do: "stats", tenant: "a", terms: []string{"x", "y"}, after: time.Second, wantN: 10, wantDF: map[string]int{"x": 3, "y": 0}},
		}},
		{"only new terms are counted", []step{
			{do: "stats", tenant: "a", terms: []string{"x"}, wantN: 10, wantDF: map[string]int{"x": 3}, wantAsk: []string{"a:all", "a:x"}},
			{do: "stats", tenant: "a", terms: []string{"x", "z"}, wantN: 10, wantDF: map[string]int{"x": 3, "z": 7}, wantAsk: []string{"a:z"}},
		}},
		{"tenants are counted apart", []step{
			{do: "stats", tenant: "a", terms: []string{"x"}, wantN: 10, wantDF: map[string]int{"x": 3}, wantAsk: []string{"a:all", "a:x"}},
			{do: "stats", tenant: "b", terms: []string{"x"}, wantN: 2, wantDF: map[string]int{"x": 1}, wantAsk: []string{"b:all", "b:x"}},
			{do: "write", tenant: "b"},
			{do: "stats", tenant: "a", terms: []string{"x"}, wantN: 10, wantDF: map[string]int{"x": 3}},
			{do: "stats", tenant: "b", terms: []string{"x"}, wantN: 2, wantDF: map[string]int{"x": 1}, wantAsk: []string{"b:all", "b:x"}},
		}},
		{"a write of this process is seen at once", []step{
			{do: "stats", tenant: "a", terms: []string{"x"}, wantN: 10, wantDF: map[string]int{"x": 3}, wantAsk: []string{"a:all", "a:x"}},
			{do: "serverAdds", tenant: "a"},
			{do: "write", tenant: "a"},
			{do: "stats", tenant: "a", terms: []string{"x"}, wantN: 11, wantDF: map[string]int{"x": 4}, wantAsk: []string{"a:all", "a:x"}},
		}},
		{"another process's write is seen after the TTL", []step{
			{do: "stats", tenant: "a", terms: []string{"x"}, wantN: 10, wantDF: map[string]int{"x": 3}, wantAsk: []string{"a:all", "a:x"}},
			{do: "serverAdds", tenant: "a"},
			{do: "stats", tenant: "a", terms: []string{"x"}, after: termStatsTTL - time.Millisecond, wantN: 10, wantDF: map[string]int{"x": 3}},
			{do: "stats", tenant: "a", terms: []string{"x"}, after: termStatsTTL, wantN: 11, wantDF: map[string]int{"x": 4}, wantAsk: []string{"a:all", "a:x"}},
		}},
		{"a dropped class forgets every tenant", []step{
			{do: "stats", tenant: "a", terms: []string{"x"}, wantN: 10, wantDF: map[string]int{"x": 3}, wantAsk: []string{"a:all", "a:x"}},
			{do: "dropAll"},
			{do: "stats", tenant: "a", terms: []string{"x"}, wantN: 10, wantDF: map[string]int{"x": 3}, wantAsk: []string{"a:all", "a:x"}},
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			f := &fakeCounts{
				n:  map[string]int{"a": 10, "b": 2},
				df: map[string]map[string]int{"a": {"x": 3, "z": 7}, "b": {"x": 1}},
			}
			var c termCache
			for i, s := range tc.steps {
				switch s.do {
				case "write":
					c.invalidate([]string{s.tenant})
				case "dropAll":
					c.invalidateAll()
				case "serverAdds":
					f.n[s.tenant]++
					f.df[s.tenant]["x"]++
				case "stats":
					n, df, err := c.stats(ctx, s.tenant, s.terms, now.Add(s.after), f.fetch(s.tenant))
					if err != nil {
						t.Fatalf("step %d: %v", i, err)
					}
					if n != s.wantN || !stdmaps.Equal(df, s.wantDF) {
						t.Errorf("step %d: n %d df %v, want %d %v", i, n, df, s.wantN, s.wantDF)
					}
					if got := f.take(); !slices.Equal(got, s.wantAsk) {
						t.Errorf("step %d: asked %v, want %v", i, got, s.wantAsk)
					}
				}
			}
		})
	}
}

// TestTermCacheWriteDuringFetch: counts read while a write began are
// answered but not kept, so the next search counts again.
func TestTermCacheWriteDuringFetch(t *testing.T) {
	ctx := context.Background()
	now := time.Unix(1_700_000_000, 0)
	var c termCache
	calls := 0
	fetch := func(_ context.Context, _ int, terms []string) (int, map[string]int, error) {
		calls++
		if calls == 1 {
			c.invalidate([]string{"a"}) // a write starts while the counts travel
		}
		return 5, map[string]int{"x": 1}, nil
	}
	for range 2 {
		if n, _, err := c.stats(ctx, "a", []string{"x"}, now, fetch); err != nil || n != 5 {
			t.Fatalf("n %d, %v", n, err)
		}
	}
	if calls != 2 {
		t.Errorf("%d fetches, want 2: counts read across a write were kept", calls)
	}
	if _, _, err := c.stats(ctx, "a", []string{"x"}, now, fetch); err != nil || calls != 2 {
		t.Errorf("third search: %v, %d fetches, want the kept counts", err, calls)
	}
}

// TestTermCacheError: a failed count is the search's error and keeps nothing.
func TestTermCacheError(t *testing.T) {
	ctx := context.Background()
	f := &fakeCounts{fail: errors.New("server down")}
	var c termCache
	if _, _, err := c.stats(ctx, "a", []string{"x"}, time.Now(), f.fetch("a")); err == nil {
		t.Fatal("no error")
	}
	if len(c.tenants) != 0 {
		t.Errorf("kept %v after an error", c.tenants)
	}
}

// TestTermCacheConcurrent runs searches and writes of several tenants at
// once (under -race): every answer is one the server gave at some point,
// and a tenant's answers never come from another tenant.
func TestTermCacheConcurrent(t *testing.T) {
	ctx := context.Background()
	var c termCache
	var wg sync.WaitGroup
	for g := range 8 {
		tenant := fmt.Sprintf("t%d", g%3)
		base := (g % 3) * 1000 // each tenant's counts in a range of its own
		wg.Go(func() {
			for i := range 300 {
				if i%17 == 0 {
					c.invalidate([]string{tenant})
				}
				terms := []string{"x", fmt.Sprint("w", i%40)}
				n, df, err := c.stats(ctx, tenant, terms, time.Now(), func(_ context.Context, _ int, terms []string) (int, map[string]int, error) {
					df := map[string]int{}
					for _, t := range terms {
						df[t] = base + len(t)
					}
					return base + 500, df, nil
				})
				if err != nil {
					t.Error(err)
					return
				}
				if n != base+500 {
					t.Errorf("%s: n %d, want %d", tenant, n, base+500)
					return
				}
				for term, f := range df {
					if f != base+len(term) {
						t.Errorf("%s: df[%s] %d, want %d", tenant, term, f, base+len(term))
						return
					}
				}
			}
		})
	}
	wg.Wait()
}
