package index

// QueryBound is the keyword relevance signal's denominator for a query text:
// the BM25 score of a full match if the store held every query term (see
// bm25.Index.QueryBound).
func (ix *Index) QueryBound(query string) float64 { return ix.bm.QueryBound(ix.tok.Tokens(query)) }
