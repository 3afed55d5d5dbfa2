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
	return ix.queryBound(query, n, df)
}

// queryBound is the bound with idf read over n documents.
func (ix *Index) queryBound(query []string, n int, df func(uint32) int) float64 {
	var buf [8]qterm
	qts, _ := ix.resolve(query, buf[:0], n, df)
	absent := len(query) - len(qts)
	return bound(qts) + float64(absent)*ix.p.idf(n, 0)*(ix.p.K1+1)
}

// RelevanceMinDocs is the fewest documents the keyword relevance signal reads
// a collection as. In a collection of a few documents BM25's idf says little:
// every word of a one-memory store is in all its documents (idf(1, 1) = 0.29)
// while a query word it lacks weighs idf(1, 0) = 1.39, so a clear match of
// three words out of four scores 0.17 where a few hundred memories give it
// 0.32. Below this size the signal counts the missing documents as holding
// none of the query's terms; ranking is unchanged. It is below the smallest
// store the relevance bars were measured on (a LoCoMo conversation, 369
// turns), so their measurements hold as they were (docs/recall.md).
const RelevanceMinDocs = 256

// RelevanceIn is the keyword relevance signal's parts in domain d (nil: the
// whole index) when d holds fewer than minDocs documents: each of docs'
// score for query and the query's bound, both with idf read over minDocs
// documents (term frequencies and lengths stay d's). ok is false, and nothing
// is computed, when d holds minDocs or more: the signal's parts are then the
// search's scores and QueryBoundIn.
func (ix *Index) RelevanceIn(query []string, d *Domain, docs []uint32, minDocs int) (scores []float64, bnd float64, ok bool) {
	n, totalLen, df := ix.stats(d)
	if n == 0 || n >= minDocs {
		return nil, 0, false
	}
	var buf [8]qterm
	qts, _ := ix.resolve(query, buf[:0], minDocs, df)
	sc := newScorer(&ix.p, float64(totalLen)/float64(n))
	scores = make([]float64, len(docs))
	for i, doc := range docs {
		if int(doc) < len(ix.present) && ix.present[doc] {
			scores[i] = ix.addTerms(doc, qts, sc, 0)
		}
	}
	return scores, ix.queryBound(query, minDocs, df), true
}

// LenIn is the number of documents in domain d (nil: the whole index).
func (ix *Index) LenIn(d *Domain) int {
	n, _, _ := ix.stats(d)
	return n
}
