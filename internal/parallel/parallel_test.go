package parallel

import (
	"sync"
	"testing"
)

// Every item of [0, n) is run exactly once, by the part Split says, for any
// number of parts (more parts than items included).
func TestSplitCovers(t *testing.T) {
	for _, parts := range []int{-1, 0, 1, 2, 3, 7} {
		for n := 0; n < 40; n++ {
			var mu sync.Mutex
			seen := make([]int, n)
			part := make([]int, n)
			Split(parts, n, func(w, lo, hi int) {
				mu.Lock()
				defer mu.Unlock()
				for i := lo; i < hi; i++ {
					seen[i]++
					part[i] = w
				}
			})
			for i, c := range seen {
				if c != 1 {
					t.Fatalf("parts=%d n=%d: item %d run %d times", parts, n, i, c)
				}
				if p, w := max(parts, 1), part[i]; i < w*n/p || i >= (w+1)*n/p {
					t.Fatalf("parts=%d n=%d: item %d in part %d", parts, n, i, part[i])
				}
			}
		}
	}
}
