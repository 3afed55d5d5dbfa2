package bm25

import "slices"

// Hit is a ranked document.
type Hit struct {
	Doc   uint32  // the caller's document number
	Score float64 // BM25 score, > 0
}

// worse orders hits from worst to best: lower score, then higher doc number.
func worse(a, b Hit) bool {
	return a.Score < b.Score || (a.Score == b.Score && a.Doc > b.Doc)
}

// topK keeps the best k hits in a min-heap whose root is the worst kept.
type topK struct {
	k    int
	hits []Hit
}

// push offers h, keeping it if there is room or it beats the worst kept.
func (t *topK) push(h Hit) {
	if len(t.hits) < t.k {
		t.hits = append(t.hits, h)
		for i := len(t.hits) - 1; i > 0; {
			p := (i - 1) / 2
			if !worse(t.hits[i], t.hits[p]) {
				break
			}
			t.hits[i], t.hits[p] = t.hits[p], t.hits[i]
			i = p
		}
		return
	}
	if !worse(t.hits[0], h) {
		return
	}
	t.hits[0] = h
	n := len(t.hits)
	for i := 0; ; {
		c := 2*i + 1
		if c >= n {
			break
		}
		if c+1 < n && worse(t.hits[c+1], t.hits[c]) {
			c++
		}
		if !worse(t.hits[c], t.hits[i]) {
			break
		}
		t.hits[i], t.hits[c] = t.hits[c], t.hits[i]
		i = c
	}
}

// sorted returns the kept hits best first, or nil if there are none.
func (t *topK) sorted() []Hit {
	if len(t.hits) == 0 {
		return nil
	}
	slices.SortFunc(t.hits, func(a, b Hit) int {
		switch {
		case worse(b, a):
			return -1
		case worse(a, b):
			return 1
		}
		return 0
	})
	return t.hits
}
