package main

import (
	"context"
	"fmt"
	"github.com/engram-memory/engram/backend/sqlite"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/engram-memory/engram"
	"github.com/engram-memory/engram/embed"
	_ "github.com/engram-memory/engram/embed/builtin" // the default embedder of the stores it opens
	"github.com/engram-memory/engram/internal/bm25"
	"github.com/engram-memory/engram/internal/eval"
	"github.com/engram-memory/engram/internal/index"
	"github.com/engram-memory/engram/internal/tokenize"
	"github.com/engram-memory/engram/memory"
)

// Kinds of query, by what the store holds for them.
const (
	kindAnswerable  = "answerable" // LoCoMo categories 1–4 against their conversation
	kindAdversarial = "adversarial"
	kindSciFact     = "scifact" // SciFact queries against SciFact (answerable, second data set)
	kindAbsentSF    = "absent:scifact→locomo"
	kindAbsentLC    = "absent:locomo→scifact"
)

// cand is one candidate the pipeline returned, with the evidence of both legs.
type cand struct {
	ID     string
	BM25   float64 // 0 when the BM25 leg did not return it
	Cos    float64
	HasCos bool
	Rel    float64 // the pipeline's explain.relevance
}

// sample is one query's outcome and the statistics the signal variants need.
type sample struct {
	Kind  string
	Gold  map[string]int
	Cands []cand
	// Present holds idf·(k1+1) of each query token the store holds; Absent
	// counts the tokens it does not, each worth AbsentW = idf(df=0)·(k1+1).
	Present []float64
	Absent  int
	AbsentW float64
	K1      float64
	// StoreFloor is the mean cosine of random pairs of the store's memories;
	// QueryMedian the median cosine of the query to every memory.
	StoreFloor, QueryMedian float64
}

// store is one corpus loaded into a real engram.DB, plus the term statistics
// and vectors the tool needs to compute signal variants beside the pipeline.
type store struct {
	name  string
	db    *engram.DB
	tok   *tokenize.Tokenizer
	bm    *bm25.Index
	emb   embed.Embedder
	vecs  [][]float32
	floor float64
}

// openStore loads docs into a fresh DB file under dir.
func openStore(ctx context.Context, dir, name string, docs []*memory.Memory) (*store, error) {
	path := filepath.Join(dir, strings.NewReplacer("/", "_", "→", "_").Replace(name)+".db")
	_ = os.Remove(path)
	db, err := engram.Open(ctx, path, engram.Options{SQLite: sqlite.Options{NoSnapshot: true}}) // throwaway stores
	if err != nil {
		return nil, fmt.Errorf("open %s: %w", name, err)
	}
	const batch = 1000
	for i := 0; i < len(docs); i += batch {
		if _, err := db.Add(ctx, docs[i:min(i+batch, len(docs))]...); err != nil {
			db.Close()
			return nil, fmt.Errorf("add to %s: %w", name, err)
		}
	}
	s := &store{name: name, db: db, tok: tokenize.New(tokenize.DefaultOptions()),
		bm: bm25.New(bm25.DefaultParams(index.NumFields)), emb: db.Embedder()}
	texts := make([]string, len(docs))
	for i, m := range docs {
		s.bm.Add(uint32(i), [][]string{s.tok.Tokens(m.Name), s.tok.Tokens(m.Description), s.tok.Tokens(m.Text)})
		texts[i] = m.EmbedText()
	}
	if s.emb != nil {
		if s.vecs, err = s.emb.Embed(ctx, texts); err != nil {
			db.Close()
			return nil, fmt.Errorf("embed %s: %w", name, err)
		}
		s.floor = pairFloor(s.vecs, 4000)
	}
	return s, nil
}

// pairFloor is the mean cosine of n random pairs of distinct vectors (fixed seed).
func pairFloor(vecs [][]float32, n int) float64 {
	var live [][]float32
	for _, v := range vecs {
		if v != nil {
			live = append(live, v)
		}
	}
	if len(live) < 2 {
		return 0
	}
	r := rand.New(rand.NewPCG(1, 2))
	sum := 0.0
	for range n {
		i, j := r.IntN(len(live)), r.IntN(len(live)-1)
		if j >= i {
			j++
		}
		sum += dot(live[i], live[j])
	}
	return sum / float64(n)
}

func dot(a, b []float32) float64 {
	s := 0.0
	for i := range a {
		s += float64(a[i]) * float64(b[i])
	}
	return s
}

// ask runs one query through the pipeline (limit pool, no bar, no use recorded)
// and gathers the statistics for the variants.
func (s *store) ask(ctx context.Context, kind string, c eval.Case, pool int) (sample, error) {
	resp, err := s.db.Search(ctx, memory.Query{Query: c.Text, Limit: pool, NoRecord: true})
	if err != nil {
		return sample{}, fmt.Errorf("%s: query %s: %w", s.name, c.ID, err)
	}
	p := s.bm.Params()
	n := s.bm.Len()
	sm := sample{Kind: kind, Gold: c.Gold, K1: p.K1, StoreFloor: s.floor,
		AbsentW: math.Log(1+(float64(n)+0.5)/0.5) * (p.K1 + 1)}
	for _, t := range s.tok.Tokens(c.Text) {
		if w := s.bm.UpperBound([]string{t}); w > 0 {
			sm.Present = append(sm.Present, w)
		} else {
			sm.Absent++
		}
	}
	for _, r := range resp.Results {
		cd := cand{ID: r.ID, Rel: r.Explain.Relevance}
		if b := r.Explain.BM25; b != nil {
			cd.BM25 = b.Score
		}
		if v := r.Explain.Vector; v != nil {
			cd.Cos, cd.HasCos = v.Cosine, true
		}
		sm.Cands = append(sm.Cands, cd)
	}
	if s.emb != nil && len(s.vecs) > 0 {
		qv, err := embed.EmbedQuery(ctx, s.emb, []string{c.Text})
		if err == nil && len(qv) == 1 && qv[0] != nil {
			cos := make([]float64, 0, len(s.vecs))
			for _, v := range s.vecs {
				if v != nil {
					cos = append(cos, dot(qv[0], v))
				}
			}
			slices.Sort(cos)
			sm.QueryMedian = cos[len(cos)/2]
		}
	}
	return sm, nil
}
