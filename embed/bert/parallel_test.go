package bert

import "testing"

func TestParallelCovers(t *testing.T) {
	for _, workers := range []int{1, 2, 5} {
		for n := 0; n < 40; n++ {
			seen := make([]int, n)
			parallel(workers, n, 3, func(lo, hi int) {
				for i := lo; i < hi; i++ {
					seen[i]++
				}
			})
			for i, c := range seen {
				if c != 1 {
					t.Fatalf("workers=%d n=%d: item %d run %d times", workers, n, i, c)
				}
			}
		}
	}
}
