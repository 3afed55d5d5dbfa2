package fusion_test

import (
	"fmt"

	"github.com/engram-memory/engram/internal/fusion"
)

// A keyword-only hit (c) is kept, and the memory both legs found (a) wins.
func ExampleRRF() {
	legs := []fusion.Leg{
		{Name: "bm25", Weight: 1, Hits: []fusion.Hit{{ID: "c", Score: 8.1}, {ID: "a", Score: 7.4}}},
		{Name: "vector", Weight: 0.5, Hits: []fusion.Hit{{ID: "a", Score: 0.71}, {ID: "b", Score: 0.66}}},
	}
	for _, f := range fusion.RRF(legs, fusion.DefaultK) {
		fmt.Printf("%s %.4f bm25=%d vector=%d\n", f.ID, f.Score, f.Legs[0].Rank, f.Legs[1].Rank)
	}
	// Output:
	// a 0.0243 bm25=2 vector=1
	// c 0.0164 bm25=1 vector=0
	// b 0.0081 bm25=0 vector=2
}

// The second memory repeats the first, so MMR lets the distinct third one in.
func ExampleMMR() {
	cands := []fusion.Candidate{
		{ID: "mysql-user", Relevance: 0.9, Vector: []float32{1, 0}},
		{ID: "mysql-user-copy", Relevance: 0.88, Vector: []float32{1, 0}},
		{ID: "grant-syntax", Relevance: 0.86, Vector: []float32{0, 1}},
		{ID: "backup-cron", Relevance: 0.4, Vector: []float32{0, 1}},
	}
	for _, p := range fusion.MMR(cands, fusion.DefaultLambda, 2) {
		fmt.Printf("%s pre-rank %d redundancy %.2f\n", p.ID, p.PreRank, p.Redundancy)
	}
	// Output:
	// mysql-user pre-rank 1 redundancy 0.00
	// grant-syntax pre-rank 3 redundancy 0.00
}
