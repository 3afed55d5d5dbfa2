package vector

import "slices"

// topK keeps the k best hits offered to it: a binary min-heap whose root is
// the worst hit kept, so a new hit costs one comparison unless it gets in.
// "Best" is higher cosine, then lower Doc, the order Search returns.
type topK struct {
	k int
	h []Hit
}

func newTopK(k int) *topK { return &topK{k: k, h: make([]Hit, 0, k)} }

// worse reports whether a ranks below b.
func worse(a, b Hit) bool {
	return a.Cosine < b.Cosine || (a.Cosine == b.Cosine && a.Doc > b.Doc)
}

// offer considers one hit.
func (t *topK) offer(x Hit) {
	if len(t.h) < t.k {
		t.h = append(t.h, x)
		t.up(len(t.h) - 1)
		return
	}
	if !worse(t.h[0], x) {
		return
	}
	t.h[0] = x
	t.down(0)
}

// floor returns the cosine a hit must reach to possibly get in, and whether
// the heap is full (when it is not, every hit gets in).
func (t *topK) floor() (float32, bool) {
	if len(t.h) < t.k {
		return 0, false
	}
	return t.h[0].Cosine, true
}

func (t *topK) up(i int) {
	h := t.h
	for i > 0 {
		p := (i - 1) / 2
		if !worse(h[i], h[p]) {
			return
		}
		h[i], h[p] = h[p], h[i]
		i = p
	}
}

func (t *topK) down(i int) {
	h := t.h
	n := len(h)
	for {
		l := 2*i + 1
		if l >= n {
			return
		}
		m := l
		if r := l + 1; r < n && worse(h[r], h[l]) {
			m = r
		}
		if !worse(h[m], h[i]) {
			return
		}
		h[i], h[m] = h[m], h[i]
		i = m
	}
}

// mergeBest returns the k best of the heaps' hits, best first.
func mergeBest(k int, heaps []*topK) []Hit {
	total := 0
	for _, t := range heaps {
		total += len(t.h)
	}
	out := make([]Hit, 0, total)
	for _, t := range heaps {
		out = append(out, t.h...)
	}
	slices.SortFunc(out, func(a, b Hit) int {
		switch {
		case worse(b, a):
			return -1
		case worse(a, b):
			return 1
		}
		return 0
	})
	if len(out) > k {
		out = out[:k:k]
	}
	return out
}
