package bm25

// QueryBound is the denominator of Engram's keyword relevance signal: the most
// a document could score if the index held every query term, counting a term
// the index lacks at the weight of a term no document contains, idf(N, 0)·(k1+1).
// Unlike UpperBound, a query about a topic the store lacks cannot reach a high
// ratio by matching its one common word: its unmatched words stay in the bound.
func (ix *Index) QueryBound(query []string) float64 {
	var buf [8]qterm
	qts, _ := ix.resolve(query, buf[:0])
	absent := len(query) - len(qts)
	return bound(qts) + float64(absent)*ix.p.idf(ix.n, 0)*(ix.p.K1+1)
}
