package embed

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"sync"
	"testing"
)

var bg = context.Background()

func TestLRUEviction(t *testing.T) {
	type op struct {
		put  bool
		key  string
		want bool // for gets: whether present
	}
	for _, tc := range []struct {
		name     string
		capacity int
		ops      []op
		wantLen  int
	}{
		{"oldest evicted", 2, []op{{true, "a", false}, {true, "b", false}, {true, "c", false},
			{false, "a", false}, {false, "b", true}, {false, "c", true}}, 2},
		{"get refreshes", 2, []op{{true, "a", false}, {true, "b", false}, {false, "a", true}, {true, "c", false},
			{false, "b", false}, {false, "a", true}, {false, "c", true}}, 2},
		{"put refreshes", 2, []op{{true, "a", false}, {true, "b", false}, {true, "a", false}, {true, "c", false},
			{false, "a", true}, {false, "b", false}}, 2},
		{"capacity one", 1, []op{{true, "a", false}, {true, "b", false}, {false, "a", false}, {false, "b", true}}, 1},
		{"capacity zero stores nothing", 0, []op{{true, "a", false}, {false, "a", false}}, 0},
		{"negative capacity stores nothing", -3, []op{{true, "a", false}, {false, "a", false}}, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			l := NewLRU(tc.capacity)
			for i, o := range tc.ops {
				if o.put {
					if err := l.PutEmbedding(bg, "m", o.key, []float32{float32(i)}); err != nil {
						t.Fatal(err)
					}
					continue
				}
				if _, ok, _ := l.GetEmbedding(bg, "m", o.key); ok != o.want {
					t.Fatalf("op %d: get %q present=%v, want %v", i, o.key, ok, o.want)
				}
			}
			if l.Len() != tc.wantLen {
				t.Fatalf("Len %d, want %d", l.Len(), tc.wantLen)
			}
		})
	}
}

func TestLRUCopiesAndUpdates(t *testing.T) {
	l := NewLRU(4)
	v := []float32{1, 2}
	_ = l.PutEmbedding(bg, "m", "h", v)
	v[0] = 9
	got, _, _ := l.GetEmbedding(bg, "m", "h")
	if got[0] != 1 {
		t.Fatal("Put did not copy")
	}
	got[1] = 9
	if again, _, _ := l.GetEmbedding(bg, "m", "h"); again[1] != 2 {
		t.Fatal("Get did not copy")
	}
	_ = l.PutEmbedding(bg, "m", "h", []float32{3})
	if again, _, _ := l.GetEmbedding(bg, "m", "h"); !slices.Equal(again, []float32{3}) || l.Len() != 1 {
		t.Fatal("Put did not replace")
	}
	if _, ok, _ := l.GetEmbedding(bg, "other", "h"); ok {
		t.Fatal("keys not separated by model")
	}
	if err := l.PutEmbedding(bg, "m", "e", nil); err == nil {
		t.Fatal("empty vector accepted")
	}
}

// refLRU is the brute-force reference: keys in recency order, newest last.
type refLRU struct {
	capacity int
	keys     []string
	vals     map[string]float32
}

func (r *refLRU) get(k string) (float32, bool) {
	i := slices.Index(r.keys, k)
	if i < 0 {
		return 0, false
	}
	r.keys = append(slices.Delete(r.keys, i, i+1), k)
	return r.vals[k], true
}

func (r *refLRU) put(k string, v float32) {
	if r.capacity <= 0 {
		return
	}
	if i := slices.Index(r.keys, k); i >= 0 {
		r.keys = slices.Delete(r.keys, i, i+1)
	} else if len(r.keys) >= r.capacity {
		delete(r.vals, r.keys[0])
		r.keys = r.keys[1:]
	}
	r.keys = append(r.keys, k)
	r.vals[k] = v
}

// checkAgainstRef replays ops (pairs of bytes: op/key, value) on both caches.
func checkAgainstRef(t testing.TB, capacity int, ops []byte) {
	t.Helper()
	l, ref := NewLRU(capacity), &refLRU{capacity: capacity, vals: map[string]float32{}}
	for i := 0; i+1 < len(ops); i += 2 {
		k := fmt.Sprint(ops[i] % 16)
		if ops[i]&0x80 != 0 {
			v := float32(ops[i+1]) + 1
			if err := l.PutEmbedding(bg, "m", k, []float32{v}); err != nil {
				t.Fatal(err)
			}
			ref.put(k, v)
			continue
		}
		got, ok, _ := l.GetEmbedding(bg, "m", k)
		want, wantOK := ref.get(k)
		if ok != wantOK || ok && got[0] != want {
			t.Fatalf("op %d get %s: got %v,%v want %v,%v", i/2, k, got, ok, want, wantOK)
		}
		if l.Len() != len(ref.keys) {
			t.Fatalf("op %d: Len %d, want %d", i/2, l.Len(), len(ref.keys))
		}
	}
}

func TestLRUMatchesReference(t *testing.T) {
	for _, capacity := range []int{0, 1, 2, 3, 5, 8, 16, 20} {
		t.Run(fmt.Sprintf("cap=%d", capacity), func(t *testing.T) {
			rng := rand.New(rand.NewPCG(uint64(capacity), 7))
			for range 50 {
				ops := make([]byte, 400)
				for i := range ops {
					ops[i] = byte(rng.UintN(256))
				}
				checkAgainstRef(t, capacity, ops)
			}
		})
	}
}

func FuzzLRU(f *testing.F) {
	f.Add(uint8(2), []byte{0x81, 1, 0x82, 2, 0x83, 3, 1, 0, 2, 0})
	f.Fuzz(func(t *testing.T, capacity uint8, ops []byte) {
		checkAgainstRef(t, int(capacity%20), ops)
	})
}

func TestLRUConcurrent(t *testing.T) {
	l := NewLRU(32)
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Go(func() {
			for i := range 2000 {
				k := fmt.Sprint((g*7 + i) % 64)
				if i%3 == 0 {
					_ = l.PutEmbedding(bg, "m", k, []float32{float32(len(k))})
				} else if v, ok, _ := l.GetEmbedding(bg, "m", k); ok && v[0] != float32(len(k)) {
					t.Errorf("key %s holds %v", k, v)
				}
			}
		})
	}
	wg.Wait()
	if l.Len() > 32 {
		t.Fatalf("Len %d over capacity", l.Len())
	}
}
