package weaviate

import (
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/engram-memory/engram/internal/bm25"
	"github.com/engram-memory/engram/internal/tokenize"
	"github.com/engram-memory/engram/memory"
)

// TestBM25AgainstEngram compares Weaviate's BM25 (with the Engram
// tokenizer) with Engram's own index (internal/bm25, Lucene IDF, k1 1.2,
// b 0.75, one weight per field) over the same memories: every query finds
// the same memories with the same scores, to float32 precision, whether
// memories have a name and description or only a text.
func TestBM25AgainstEngram(t *testing.T) {
	words := strings.Fields("alpha beta gamma delta epsilon zeta eta theta iota kappa lambda tasks_claim main.go running runs ran")
	r := rand.New(rand.NewPCG(3, 4))
	sentence := func(n int) string {
		w := make([]string, n)
		for i := range w {
			w[i] = words[int(math.Floor(math.Pow(r.Float64(), 2)*float64(len(words))))]
		}
		return strings.Join(w, " ")
	}
	for _, withFields := range []bool{false, true} {
		t.Run(fmt.Sprintf("name_and_description=%v", withFields), func(t *testing.T) {
			s := openTest(t, nil)
			ctx := ctxT(t)
			tok := tokenize.New(tokenize.DefaultOptions())
			ref := bm25.New(bm25.DefaultParams(3))
			var mems []*memory.Memory
			for i := range 200 {
				m := mem(fmt.Sprintf("d%03d", i), sentence(3+r.IntN(25)), func(m *memory.Memory) {
					if withFields {
						m.Name = sentence(1 + r.IntN(3))
						m.Description = sentence(r.IntN(8))
					}
				})
				mems = append(mems, m)
				ref.Add(uint32(i), [][]string{tok.Tokens(m.Name), tok.Tokens(m.Description), tok.Tokens(m.Text)})
			}
			put(t, s, mems...)
			worst, topAgree := 0.0, 0
			queries := []string{"alpha", "zeta theta", "tasks_claim", "running kappa lambda", "main.go iota", "eta eta beta", "alpha zebrafish"}
			b := &Backend{s: s}
			for _, q := range queries {
				// The keyword relevance bound, from Weaviate's counts, is
				// Engram's QueryBound over the same memories.
				bound, err := b.bound(ctx, q, nil)
				if err != nil {
					t.Fatal(err)
				}
				if want := ref.QueryBound(tok.Tokens(q)); math.Abs(bound-want) > 1e-9*want {
					t.Errorf("%q: bound %v, Engram's %v", q, bound, want)
				}
				hits, err := s.BM25(ctx, LegQuery{Text: q, K: 200})
				if err != nil {
					t.Fatal(err)
				}
				want := ref.Search(tok.Tokens(q), nil, 200)
				if len(hits) != len(want) {
					t.Errorf("%q: %d hits, Engram %d", q, len(hits), len(want))
					continue
				}
				if len(hits) > 0 && hits[0].Memory.ID == mems[want[0].Doc].ID {
					topAgree++
				}
				refScore := map[string]float64{}
				for _, h := range want {
					refScore[mems[h.Doc].ID] = h.Score
				}
				for _, h := range hits {
					rel := math.Abs(h.Score-refScore[h.Memory.ID]) / refScore[h.Memory.ID]
					worst = max(worst, rel)
				}
			}
			if worst > 1e-5 || topAgree != len(queries) {
				t.Errorf("scores differ from Engram's by up to %.2g (want float32 agreement); top hit agrees on %d of %d queries",
					worst, topAgree, len(queries))
			}
		})
	}
}
