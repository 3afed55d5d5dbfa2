package mirror

import (
	"slices"
	"strings"

	"github.com/engram-memory/engram/internal/index"
)

// A leg's top k must not depend on the document numbers the index gave its
// memories, which differ between an index loaded from a snapshot and replayed
// and one rebuilt from the rows: when several memories tie at the k-th score,
// which of them make the cut would otherwise follow the numbering (and with it
// the candidate pool, and a fusion that normalises over the pool). So a leg is
// asked for one hit more than it returns; when that hit ties with the k-th,
// the whole tie is fetched and cut by memory key instead. The common case
// costs one extra hit.

// topByKey returns the best k of what search(n) (the best n, best first)
// finds, with a tie at the k-th score broken by memory key.
func topByKey[H any](ix *index.Index, k int, search func(n int) []H, score func(H) float64, doc func(H) uint32) []H {
	if k <= 0 {
		return nil
	}
	n := k + 1
	hits := search(n)
	for len(hits) == n && score(hits[n-1]) == score(hits[k-1]) {
		n *= 2
		hits = search(n)
	}
	if len(hits) <= k {
		return hits
	}
	cut := score(hits[k-1])
	lo := k - 1
	for lo > 0 && score(hits[lo-1]) == cut {
		lo--
	}
	hi := k
	for hi < len(hits) && score(hits[hi]) == cut {
		hi++
	}
	if hi == k {
		return hits[:k] // nothing tied across the cut
	}
	tie := hits[lo:hi]
	slices.SortFunc(tie, func(a, b H) int {
		return strings.Compare(ix.Doc(doc(a)).Key(), ix.Doc(doc(b)).Key())
	})
	return hits[:k]
}
