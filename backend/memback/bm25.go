package memback

// The keyword leg, written out as plainly as it can be: each memory is
// tokenized into its fields at every search, its statistics counted over the
// memories of the query's scope, and every admitted memory scored. It is the
// same Okapi BM25 the SQLite backend's index computes (internal/bm25 with
// the fields of internal/index), so their scores can be compared:
//
//	score(D) = Σ_{t in Q} idf(t) · tf(t,D)·(k1+1) / (tf(t,D) + k1·(1 − b + b·|D|/avgdl))
//	idf(t)   = ln(1 + (N − n(t) + 0.5) / (n(t) + 0.5))            (Lucene's form, never negative)
//	tf(t,D)  = Σ_f w_f · (occurrences of t in field f of D)
//	|D|      = round(Σ_f l_f · (tokens in field f of D))
//
// with N the number of memories in the query's scope (the whole store
// without one), avgdl their mean |D|, n(t) how many of them hold t, and Q
// the query's tokens, a repeated token counted each time; a token no memory
// of the scope holds adds nothing. The fields f are name, description, text,
// speaker (w 1), context (the text of the memories up to Neighbours before
// and after in the memory's episode, w 0.3) and date (the day the memory
// occurred, when it has a time of its own, w 0.3); l is 1 for each but the
// date, 0. The terms are added in ascending n(t), then term order, as
// internal/bm25 adds them, so that rounding agrees to the last bits or so.
//
// The relevance bound (backend.LegResult.Bound) is Σ_{t in Q} idf(t)·(k1+1),
// a token no memory of the scope holds counted at idf with n(t) = 0. In a
// scope of fewer than RelevanceMinDocs memories, the hits' RelevanceScore and
// the bound are computed with N read as RelevanceMinDocs.

import (
	"cmp"
	"math"
	"slices"

	"github.com/engram-memory/engram/internal/bm25"
	"github.com/engram-memory/engram/internal/index"
	"github.com/engram-memory/engram/internal/tokenize"
	"github.com/engram-memory/engram/memory"
)

// Fields, in the order of Params' weights.
const (
	fieldName = iota
	fieldDescription
	fieldText
	fieldSpeaker
	fieldContext
	fieldDate
	numFields
)

// Params are the keyword leg's parameters.
type Params struct {
	K1, B float64
	// FieldWeights weigh a term's occurrences per field, LengthWeights a
	// field's tokens in |D|: name, description, text, speaker, context, date.
	FieldWeights, LengthWeights [numFields]float64
	// Neighbours is how many memories before and after lend their text to a
	// memory's context field; Dates indexes the date field.
	Neighbours int
	Dates      bool
	Tokenizer  tokenize.Options
	// RelevanceMinDocs is the fewest memories the relevance signal reads a
	// scope as (0: no floor).
	RelevanceMinDocs int
}

// DefaultParams are the SQLite backend's defaults: k1 1.2, b 0.75, its field
// and length weights, context and tokenizer.
func DefaultParams() Params {
	p := Params{K1: bm25.DefaultK1, B: bm25.DefaultB, Neighbours: index.DefaultContext.Neighbours, Dates: index.DefaultContext.Dates,
		Tokenizer: tokenize.DefaultOptions(), RelevanceMinDocs: bm25.RelevanceMinDocs}
	copy(p.FieldWeights[:], index.DefaultFieldWeights())
	copy(p.LengthWeights[:], index.DefaultLengthWeights())
	return p
}

// idf is Lucene's inverse document frequency of a term n of N memories hold.
func idf(N, n int) float64 {
	return math.Log(1 + (float64(N-n)+0.5)/(float64(n)+0.5))
}

// doc is a memory as the keyword leg sees it.
type doc struct {
	m  *memory.Memory
	tf map[string]float64 // weighted term frequency, tf(t,D)
	dl float64            // |D|
}

// analyze tokenizes the memories of mems that lie inside scope into docs.
// The caller holds the lock: a context field reads the episode's other
// memories, whatever their scope's place.
func (b *Backend) analyze(scope map[string]string) []doc {
	return b.analyzeOf(b.view(), scope)
}

func (b *Backend) analyzeOf(mems []*memory.Memory, scope map[string]string) []doc {
	var episodes map[string][]*memory.Memory // by memory.EpisodeKey, in episode order
	if b.p.Neighbours > 0 {
		episodes = map[string][]*memory.Memory{}
		for _, m := range b.mems {
			if ek := m.EpisodeKey(); ek != "" {
				episodes[ek] = append(episodes[ek], m)
			}
		}
		for _, l := range episodes {
			slices.SortFunc(l, memory.EpisodeOrder)
		}
	}
	var out []doc
	for _, m := range mems {
		if !memory.Inside(m.Scope, scope) {
			continue
		}
		var fields [numFields][]string
		fields[fieldName] = b.tok.Tokens(m.Name)
		fields[fieldDescription] = b.tok.Tokens(m.Description)
		fields[fieldText] = b.tok.Tokens(m.Text)
		fields[fieldSpeaker] = b.tok.Tokens(m.Speaker)
		if l := episodes[m.EpisodeKey()]; l != nil {
			before, after := around(l, m, b.p.Neighbours)
			for _, x := range append(slices.Clip(before), after...) {
				fields[fieldContext] = append(fields[fieldContext], b.tok.Tokens(x.Text)...)
			}
		}
		if b.p.Dates && index.HasOwnTime(m) {
			fields[fieldDate] = b.tok.Tokens(index.DateText(m.OccurredAt))
		}
		d := doc{m: m, tf: map[string]float64{}}
		for f, toks := range fields {
			n := 0
			for _, t := range toks {
				if t != "" {
					d.tf[t] += b.p.FieldWeights[f]
					n++
				}
			}
			d.dl += float64(n) * b.p.LengthWeights[f]
		}
		d.dl = math.Round(d.dl)
		out = append(out, d)
	}
	return out
}

// qterm is a query token with how many memories of the scope hold it.
type qterm struct {
	t  string
	df int
}

// stats are a scope's statistics for a query: N, avgdl and the query's
// tokens with their n(t), in the order their terms are added.
type stats struct {
	n     int
	avgdl float64
	terms []qterm
}

func statsOf(docs []doc, query []string) stats {
	s := stats{n: len(docs)}
	var total float64
	for _, d := range docs {
		total += d.dl
	}
	if s.n > 0 {
		s.avgdl = total / float64(s.n)
	}
	for _, t := range query {
		q := qterm{t: t}
		for _, d := range docs {
			if d.tf[t] > 0 {
				q.df++
			}
		}
		s.terms = append(s.terms, q)
	}
	slices.SortStableFunc(s.terms, func(a, b qterm) int {
		if c := cmp.Compare(a.df, b.df); c != 0 {
			return c
		}
		return cmp.Compare(a.t, b.t)
	})
	return s
}

// score is d's BM25 score with idf read over n memories (s.n, or the
// relevance floor); 0 when it holds no query term.
func (p *Params) score(s stats, n int, d doc) float64 {
	var sc float64
	for _, q := range s.terms {
		tf := d.tf[q.t]
		if q.df == 0 || tf == 0 {
			continue
		}
		norm := p.K1 * (1 - p.B)
		if s.avgdl > 0 {
			norm += p.K1 * p.B * d.dl / s.avgdl
		}
		sc += idf(n, q.df) * (p.K1 + 1) * tf / (tf + norm)
	}
	return sc
}

// bound is the relevance bound with idf read over n memories.
func (p *Params) bound(s stats, n int) float64 {
	var ub float64
	for _, q := range s.terms {
		ub += idf(n, q.df) * (p.K1 + 1)
	}
	return ub
}
