package bm25

import (
	"cmp"
	"slices"

	"github.com/engram-memory/engram/internal/docset"
)

// Search computes exact top-k BM25 (every returned score is the full sum
// over query terms, never an estimate) while touching as little as it can:
// a small allow set is scored document by document, and otherwise rare
// terms are walked first so that the long lists of common terms can often be
// restricted to the candidates already found (MaxScore, Turtle & Flood 1995).

// probeCost is the cost of scoring one term for one document by a galloping
// search in the term's (doc-ordered) list, in units of one posting visited.
const probeCost = 8

// Search ranks the documents matching any query term and returns the best k,
// best first, ties broken by Doc ascending. A term repeated in the query
// counts each time; terms absent from the index contribute nothing; only
// documents with a positive score are returned. allow, when non-nil, is
// applied before ranking: documents outside it are never scored, so a small
// scope inside a large index still gets every match it has. k <= 0 returns
// nil.
//
// All strategies are exact and give bit-identical scores, because each sums
// a document's term contributions in one canonical order (rarest term first):
// document-at-a-time over allow when allow is small relative to the postings
// involved, else term-at-a-time into a pooled dense accumulator, rarest term
// first; once the k-th best partial score exceeds what the remaining terms
// could give a document not yet seen, those terms are added to the
// candidates only.
func (ix *Index) Search(query []string, allow *docset.Set, k int) []Hit {
	return ix.SearchIn(query, nil, allow, k)
}

// SearchIn is Search scored against the statistics of domain d (nil: the
// whole index) instead of the whole index's; allow must lie inside d.Docs.
func (ix *Index) SearchIn(query []string, d *Domain, allow *docset.Set, k int) []Hit {
	if k <= 0 || ix.n == 0 {
		return nil
	}
	if !d.whole() && allow == nil {
		allow = d.Docs
	}
	n, totalLen, df := ix.stats(d)
	if n == 0 {
		return nil
	}
	var buf [8]qterm
	qts, postingsTouched := ix.resolve(query, buf[:0], n, df)
	if len(qts) == 0 {
		return nil
	}
	sc := newScorer(&ix.p, float64(totalLen)/float64(n))
	if allow != nil && allow.Len()*len(qts)*probeCost < postingsTouched {
		return ix.searchAllowed(qts, sc, allow, k)
	}
	return ix.searchPostings(qts, sc, allow, k, true)
}

// Score returns doc's score for query and whether doc is indexed; it equals
// the Score Search reports for doc.
func (ix *Index) Score(doc uint32, query []string) (float64, bool) {
	if int(doc) >= len(ix.present) || !ix.present[doc] {
		return 0, false
	}
	var buf [8]qterm
	qts, _ := ix.resolve(query, buf[:0], ix.n, ix.wholeDF)
	return ix.addTerms(doc, qts, newScorer(&ix.p, ix.avgdl()), 0), true
}

// wholeDF is a term's document frequency in the whole index.
func (ix *Index) wholeDF(id uint32) int { return ix.lists[id].df }

// UpperBound returns a score no document can exceed for query: the sum over
// query terms present in the index of idf·(k1+1), since tf/(tf+norm) < 1.
func (ix *Index) UpperBound(query []string) float64 {
	var buf [8]qterm
	qts, _ := ix.resolve(query, buf[:0], ix.n, ix.wholeDF)
	return bound(qts)
}

// bound sums the terms' weights, each the most that term can add to a score.
func bound(qts []qterm) float64 {
	var ub float64
	for _, q := range qts {
		ub += q.w
	}
	return ub
}

// qterm is a query term found in the index with its weight w = idf·(k1+1).
type qterm struct {
	id uint32
	df int
	w  float64
}

// resolve maps query terms to ids and weights in a collection of n documents
// where term id is in df(id) of them, drops absent ones, sorts them into the
// canonical order (document frequency ascending, then term), and counts the
// postings they would visit. The order depends only on the collection's
// content, so two indexes holding the same documents score them
// bit-identically whatever their history.
func (ix *Index) resolve(query []string, dst []qterm, n int, df func(uint32) int) ([]qterm, int) {
	total := 0
	for _, t := range query {
		id, ok := ix.terms.find(ix.names, t)
		if !ok {
			continue
		}
		f := df(id)
		if f == 0 {
			continue // no document of the collection holds it
		}
		dst = append(dst, qterm{id: id, df: f, w: ix.p.idf(n, f) * (ix.p.K1 + 1)})
		total += ix.lists[id].size()
	}
	slices.SortFunc(dst, func(a, b qterm) int {
		if c := cmp.Compare(a.df, b.df); c != 0 {
			return c
		}
		return cmp.Compare(ix.names[a.id], ix.names[b.id])
	})
	return dst, total
}

// addTerms adds the contributions of qts to doc's partial score s, in order,
// finding doc in each term's list by binary search.
func (ix *Index) addTerms(doc uint32, qts []qterm, sc scorer, s float64) float64 {
	norm := sc.norm(ix.docLen[doc])
	for _, q := range qts {
		if c, ok := ix.lists[q.id].get(doc); ok {
			s += term(q.w, ix.tfAt(q.id, doc, c), norm)
		}
	}
	return s
}

// seek returns the first index i >= from with docs[i] >= d, galloping from
// from, so a walk over ascending d costs O(log gap) a step.
func seek(docs []uint32, from int, d uint32) int {
	if from >= len(docs) || docs[from] >= d {
		return from
	}
	lo, step := from, 1 // docs[lo] < d
	hi := lo + step
	for hi < len(docs) && docs[hi] < d {
		lo = hi
		step <<= 1
		hi = lo + step
	}
	hi = min(hi, len(docs))
	i, _ := slices.BinarySearch(docs[lo+1:hi], d)
	return lo + 1 + i
}

// searchAllowed scores each allowed document directly, merging the allow
// set (ascending) with each term's list: one cursor per term moves to the
// next allowed document, skipping whole blocks by their last docs.
func (ix *Index) searchAllowed(qts []qterm, sc scorer, allow *docset.Set, k int) []Hit {
	top := topK{k: k}
	var buf [8]cursor
	curs := buf[:0]
	for _, q := range qts {
		curs = append(curs, newCursor(&ix.lists[q.id]))
	}
	allow.ForEach(func(d uint32) bool {
		if int(d) >= len(ix.present) {
			return false
		}
		if !ix.present[d] {
			return true
		}
		norm := sc.norm(ix.docLen[d])
		var s float64
		for qi, q := range qts {
			if c := &curs[qi]; c.seek(d) {
				s += term(q.w, ix.tfAt(q.id, d, c.code()), norm)
			}
		}
		if s > 0 {
			top.push(Hit{Doc: d, Score: s})
		}
		return true
	})
	return top.sorted()
}

// accumulator is per-search scratch: a dense partial score per document, the
// documents whose score became non-zero, and a heap for threshold checks.
type accumulator struct {
	acc     []float64
	touched []uint32
	heap    []Hit
}

// searchPostings walks the query terms' inverted lists in canonical order,
// accumulating scores. With prune, it stops once no document outside the
// candidates seen so far can reach the top k, and finish completes the
// candidates' scores with the remaining terms.
func (ix *Index) searchPostings(qts []qterm, sc scorer, allow *docset.Set, k int, prune bool) []Hit {
	a, _ := ix.scratch.Get().(*accumulator)
	if a == nil {
		a = &accumulator{}
	}
	if len(a.acc) < len(ix.docLen) {
		a.acc = make([]float64, len(ix.docLen))
		// Written before it is read (fresh memory is zero already): a page
		// read first is the shared zero page, and the write that follows
		// faults again to copy it, flushing the TLB of every core the
		// process runs on (perf: 0.9% of a CLI search's CPU in those IPIs).
		clear(a.acc)
	}
	remaining := 0
	for _, q := range qts {
		remaining += ix.lists[q.id].size()
	}
	acc, touched := a.acc, a.touched[:0]
	for i, q := range qts {
		l := &ix.lists[q.id]
		touched = ix.accumulate(acc, touched, l, q, sc, allow)
		remaining -= l.size()
		rest := qts[i+1:]
		if prune && len(rest) > 0 && len(touched) >= k && len(touched) < remaining &&
			a.kthBest(acc, touched, k) > bound(rest)*(1+1e-9) {
			ix.finish(acc, touched, rest, sc)
			break
		}
	}

	top := topK{k: k, hits: make([]Hit, 0, min(k, len(touched)))}
	for _, d := range touched {
		s := acc[d]
		acc[d] = 0 // reset for reuse
		top.push(Hit{Doc: d, Score: s})
	}
	a.touched = touched[:0]
	ix.scratch.Put(a)
	return top.sorted()
}

// finish adds the remaining terms' contributions, in canonical order, to the
// candidates only (the documents with a non-zero accumulator): per term,
// either by merging the candidates (sorted once) with the inverted list,
// galloping, or, when the list is the shorter walk, by scanning it and
// skipping non-candidates.
func (ix *Index) finish(acc []float64, touched []uint32, rest []qterm, sc scorer) {
	sorted := false
	for _, q := range rest {
		l := &ix.lists[q.id]
		if len(touched)*probeCost < l.size() {
			if !sorted {
				slices.Sort(touched)
				sorted = true
			}
			c := newCursor(l)
			for _, d := range touched {
				if c.seek(d) {
					acc[d] += term(q.w, ix.tfAt(q.id, d, c.code()), sc.norm(ix.docLen[d]))
				} else if c.done() {
					break
				}
			}
			continue
		}
		var one [1]block
		for _, blk := range l.blocks(&one) {
			codes := blk.codes[:len(blk.docs)]
			for i, d := range blk.docs {
				if acc[d] != 0 {
					tf := ix.tfTab[codes[i]]
					if tf == 0 {
						tf = ix.bigTF[tfKey(q.id, d)]
					}
					acc[d] += term(q.w, tf, sc.norm(ix.docLen[d]))
				}
			}
		}
	}
}

// accumulate adds one term's contribution w·tf/(tf+norm) to every posting's
// document (those in allow, when allow is non-nil), recording first touches.
// Every contribution is > 0 (Params' bounds rule out underflow), so a zero
// accumulator means untouched and touched holds no duplicates.
func (ix *Index) accumulate(acc []float64, touched []uint32, l *postings, q qterm, sc scorer, allow *docset.Set) []uint32 {
	docLen, tab, w := ix.docLen, &ix.tfTab, q.w
	var one [1]block
	for _, blk := range l.blocks(&one) {
		docs := blk.docs
		codes := blk.codes[:len(docs)]
		if allow == nil {
			for i, d := range docs {
				tf := tab[codes[i]]
				if tf == 0 { // escaped
					tf = ix.bigTF[tfKey(q.id, d)]
				}
				s := term(w, tf, sc.norm(docLen[d]))
				if acc[d] == 0 {
					touched = append(touched, d)
				}
				acc[d] += s
			}
			continue
		}
		for i, d := range docs {
			if !allow.Has(d) {
				continue
			}
			tf := tab[codes[i]]
			if tf == 0 {
				tf = ix.bigTF[tfKey(q.id, d)]
			}
			s := term(w, tf, sc.norm(docLen[d]))
			if acc[d] == 0 {
				touched = append(touched, d)
			}
			acc[d] += s
		}
	}
	return touched
}

// kthBest returns the k-th best partial score among the touched documents
// (len(touched) >= k), a lower bound on the k-th best final score.
func (a *accumulator) kthBest(acc []float64, touched []uint32, k int) float64 {
	top := topK{k: k, hits: a.heap[:0]}
	for _, d := range touched {
		top.push(Hit{Doc: d, Score: acc[d]})
	}
	a.heap = top.hits[:0]
	if len(top.hits) < k {
		return 0
	}
	return top.hits[0].Score
}
