package weaviate

import (
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/engram-memory/engram/internal/bm25"
	"github.com/engram-memory/engram/internal/index"
	"github.com/engram-memory/engram/internal/tokenize"
	"github.com/engram-memory/engram/memory"
)

// engramIndex is the built-in backend's BM25 over copies of mems:
// internal/index with the default field weights, length weights and
// context, as backend/sqlite indexes them.
func engramIndex(mems []*memory.Memory) *index.Index {
	p := bm25.DefaultParams(index.NumFields)
	p.FieldWeights, p.LengthWeights = index.DefaultFieldWeights(), index.DefaultLengthWeights()
	ix := index.New(tokenize.New(tokenize.DefaultOptions()), p)
	ix.SetContext(index.DefaultContext)
	ix.BeginBatch()
	for _, m := range mems {
		c := *m // the index keeps and changes what it is given
		c.Embedding = nil
		ix.Put(&c)
	}
	ix.EndBatch()
	return ix
}

// TestFieldWeightsFitTheLayout: the terms property holds name,
// description, text and speaker as one field, which is Engram's BM25 only
// while each of them has weight 1 and length weight 1 (object.go, pTerms).
// Changing those weights in internal/index needs a layout here with a
// property per field.
func TestFieldWeightsFitTheLayout(t *testing.T) {
	w, lw := index.DefaultFieldWeights(), index.DefaultLengthWeights()
	for _, f := range []int{index.FieldName, index.FieldDescription, index.FieldText, index.FieldSpeaker} {
		if w[f] != 1 || lw[f] != 1 {
			t.Errorf("field %d has weight %v and length weight %v: the terms property assumes 1 and 1", f, w[f], lw[f])
		}
	}
}

// TestBM25AgainstEngram compares Weaviate's BM25 (with the Engram
// tokenizer) with Engram's own index (internal/index: Lucene IDF, k1 1.2,
// b 0.75, its six fields with their weights, each memory's day in its date
// field) over the same memories, in no episode: every query finds the same
// memories with the same scores, to float32 precision, and the same
// keyword relevance bound, whether memories have a name, description and
// speaker or only a text. None of the queries names a day: a day's words
// score differently on the two backends (TestBM25Properties).
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
		t.Run(fmt.Sprintf("name_description_speaker=%v", withFields), func(t *testing.T) {
			s := openTest(t, nil)
			ctx := ctxT(t)
			var mems []*memory.Memory
			for i := range 200 {
				m := mem(fmt.Sprintf("d%03d", i), sentence(3+r.IntN(25)), func(m *memory.Memory) {
					m.OccurredAt = t0.Add(-time.Duration(r.IntN(1000)) * time.Hour)
					if withFields {
						m.Name = sentence(1 + r.IntN(3))
						m.Description = sentence(r.IntN(8))
						m.Speaker = []string{"", "lambda", "Kappa Zeta"}[i%3]
					}
				})
				mems = append(mems, m)
			}
			ref := engramIndex(mems)
			put(t, s, mems...)
			worst, topAgree := 0.0, 0
			queries := []string{"alpha", "zeta theta", "tasks_claim", "running kappa lambda", "main.go iota", "eta eta beta", "alpha zebrafish"}
			b := &Backend{s: s}
			for _, q := range queries {
				want, wantBound := ref.BM25(q, nil, nil, 200)
				// The keyword relevance bound, from Weaviate's counts, is
				// Engram's over the same memories.
				bound, err := b.bound(ctx, q, nil)
				if err != nil {
					t.Fatal(err)
				}
				if math.Abs(bound-wantBound) > 1e-9*wantBound {
					t.Errorf("%q: bound %v, Engram's %v", q, bound, wantBound)
				}
				hits, err := s.BM25(ctx, LegQuery{Text: q, K: 200})
				if err != nil {
					t.Fatal(err)
				}
				if len(hits) != len(want) {
					t.Errorf("%q: %d hits, Engram %d", q, len(hits), len(want))
					continue
				}
				refScore := map[string]float64{}
				for _, h := range want {
					refScore[ref.Doc(h.Doc).ID] = h.Score
				}
				// The same top hit, or one tied with it (ties have no order).
				if len(hits) > 0 && refScore[hits[0].Memory.ID] == want[0].Score {
					topAgree++
				} else if len(hits) > 0 {
					t.Logf("%q: top %s (Engram's score %v), Engram's top %s %v", q, hits[0].Memory.ID, refScore[hits[0].Memory.ID], ref.Doc(want[0].Doc).ID, want[0].Score)
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
