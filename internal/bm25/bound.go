package bm25

// QueryBound is the denominator of Engram's keyword relevance signal: the most
// a document could score if the index held every query term, counting a term
// the index lacks at the weight of a term no document contains, idf(N, 0)·(k1+1).
// Unlike UpperBound, a query about a topic the store lacks cannot reach a high
// ratio by matching its one common word: its unmatched words stay in the bound.
func (ix *Index) QueryBound(query []string) float64 { return ix.QueryBoundIn(query, nil) }

// QueryBoundIn is QueryBound in domain d (nil: the whole index): a term no
// document of d holds counts as absent.
func (ix *Index) QueryBoundIn(query []string, d *Domain) float64 {
	n, _, df := ix.stats(d)
	var buf [8]qterm
	qts, _ := ix.resolve(query, buf[:0], n, df)
	absent := len(query) - len(qts)
	return bound(qts) + float64(absent)*ix.p.idf(n, 0)*(ix.p.K1+1)
}
