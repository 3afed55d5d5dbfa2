package bm25

// Per-domain statistics. BM25 scores a document against its collection: the
// number of documents N, their mean length, and each query term's document
// frequency. When a search is confined to a domain (one tenant's scope), the
// collection is that domain, so nothing outside it moves a score inside it:
// a tenant cannot learn another's vocabulary from its own scores (DESIGN §8).
// The statistics are computed exactly from the domain's documents, cached per
// domain until the index next changes: N and the lengths by one pass over the
// domain, a document frequency by intersecting the term's postings with it
// (or probing the domain's documents when those are fewer).

import (
	"sync"

	"github.com/engram-memory/engram/internal/docset"
)

// Domain is the collection a search's statistics come from. The zero Domain,
// or one with nil Docs, is the whole index.
type Domain struct {
	// Key names the domain for the statistics cache (such as the scope it
	// compiles); "" disables caching.
	Key string
	// Docs are the domain's documents; nil means every document.
	Docs *docset.Set
}

// whole reports whether d is the whole index.
func (d *Domain) whole() bool { return d == nil || d.Docs == nil }

// domainStats are a domain's statistics as of one index generation.
type domainStats struct {
	gen      uint64
	n        int
	totalLen int64
	df       map[uint32]int // term id → documents of the domain holding it
}

// statsCache holds the statistics of recently searched domains.
type statsCache struct {
	mu sync.Mutex
	m  map[string]*domainStats
}

// Cache bounds: domains kept, and terms per domain.
const (
	maxCachedDomains = 1024
	maxCachedTerms   = 1 << 14
)

// stats returns the statistics of d (n, total length) and a df function for
// it. The caller holds the index's read lock.
func (ix *Index) stats(d *Domain) (n int, totalLen int64, df func(id uint32) int) {
	if d.whole() {
		return ix.n, ix.totalLen, func(id uint32) int { return ix.lists[id].df }
	}
	var ds *domainStats
	if d.Key != "" {
		ix.cache.mu.Lock()
		ds = ix.cache.m[d.Key]
		if ds != nil && ds.gen != ix.gen {
			ds = nil
		}
		ix.cache.mu.Unlock()
	}
	if ds == nil {
		ds = &domainStats{gen: ix.gen, df: map[uint32]int{}}
		d.Docs.ForEach(func(doc uint32) bool {
			if int(doc) >= len(ix.present) {
				return false
			}
			if ix.present[doc] {
				ds.n++
				ds.totalLen += int64(ix.docLen[doc])
			}
			return true
		})
		if d.Key != "" {
			ix.cache.mu.Lock()
			if ix.cache.m == nil || len(ix.cache.m) >= maxCachedDomains {
				ix.cache.m = map[string]*domainStats{}
			}
			ix.cache.m[d.Key] = ds
			ix.cache.mu.Unlock()
		}
	}
	docs, size := d.Docs, ds.n
	return ds.n, ds.totalLen, func(id uint32) int {
		if d.Key != "" {
			ix.cache.mu.Lock()
			v, ok := ds.df[id]
			ix.cache.mu.Unlock()
			if ok {
				return v
			}
		}
		v := ix.dfIn(id, docs, size)
		if d.Key != "" {
			ix.cache.mu.Lock()
			if len(ds.df) >= maxCachedTerms {
				clear(ds.df)
			}
			ds.df[id] = v
			ix.cache.mu.Unlock()
		}
		return v
	}
}

// dfIn counts the documents of docs (size of them indexed) that hold term id
// in any field, as the whole index's df does: by walking the term's postings
// when they are the shorter walk and every holder has a posting, else by
// probing each domain document's term list.
func (ix *Index) dfIn(id uint32, docs *docset.Set, size int) int {
	l := &ix.lists[id]
	n := 0
	if sz := l.size(); l.df == sz && sz <= size*probeCost {
		var one [1]block
		for _, blk := range l.blocks(&one) {
			for _, doc := range blk.docs {
				if docs.Has(doc) {
					n++
				}
			}
		}
		return n
	}
	docs.ForEach(func(doc uint32) bool {
		if int(doc) >= len(ix.present) {
			return false
		}
		if ix.present[doc] {
			if findTerm(ix.docTerms[doc], id) {
				n++
			}
		}
		return true
	})
	return n
}

// DocFreqIn returns the number of documents in domain d (nil: the whole
// index) and, for each of terms, how many of them hold it (0 for a term the
// index lacks). A long query's reduction ranks its terms by it.
func (ix *Index) DocFreqIn(terms []string, d *Domain) (int, []int) {
	n, _, df := ix.stats(d)
	out := make([]int, len(terms))
	for i, t := range terms {
		if id, ok := ix.terms.find(ix.names, t); ok {
			out[i] = df(id)
		}
	}
	return n, out
}
