// Package calibrate estimates, without labels, how much a store's vector leg
// can be trusted: it makes pseudo-queries from the store's own memories, whose
// source memory is the known answer, runs them at a sweep of vector weights and
// picks the weight that ranks the sources best (highest MRR).
package calibrate

import (
	"math/rand/v2"
	"strings"
	"unicode"

	"github.com/engram-memory/engram/memory"
)

// Methods of making pseudo-queries.
const (
	// MethodHeldOut takes a sentence out of the memory: the pseudo-query is
	// what was taken, and the memory is searched without it, so the query
	// shares the memory's topic but not its exact words, as a real question
	// does. A one-sentence memory gives a MethodPartial query. The default.
	MethodHeldOut = "heldout"
	// MethodSpan takes a span of words and leaves the memory whole. Every query
	// word is in its answer verbatim, which favours BM25; kept for comparison.
	MethodSpan = "span"
	// MethodPartial takes a span of words as the pseudo-query and removes every
	// other one of them from the memory: query and answer share about half their
	// words, as a real question and its answer often do.
	MethodPartial = "partial"
	// MethodName asks with the memory's name or description and searches the
	// memory without them; memories with neither are skipped.
	MethodName = "name"
)

// Methods lists the methods in the order tools show them.
var Methods = []string{MethodHeldOut, MethodPartial, MethodSpan, MethodName}

// Pseudo is one pseudo-query and the memory that answers it.
type Pseudo struct {
	Query  string
	Target string
}

// Set is a method's pseudo-queries with the memories they need changed: for a
// held-out method, each target without the words its query took away. The
// caller searches a copy of the store where Edited replaces those memories.
type Set struct {
	Method  string
	Queries []Pseudo
	Edited  map[string]*memory.Memory
}

// minWords is the fewest words a memory needs to give a pseudo-query: the
// query gets at least minQuery of them and the memory keeps as many.
const (
	minWords = 8
	minQuery = 3
)

// Make draws up to n pseudo-queries by method from mems, in an order fixed by
// seed. Memories too short for the method are skipped; fewer than n come back
// when too few qualify. mems are not modified.
func Make(mems []*memory.Memory, method string, n int, seed uint64) Set {
	set := Set{Method: method, Edited: map[string]*memory.Memory{}}
	r := rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
	order := r.Perm(len(mems))
	for _, i := range order {
		if len(set.Queries) == n {
			break
		}
		m := mems[i]
		var q string
		var edited *memory.Memory
		switch method {
		case MethodHeldOut:
			q, edited = holdOut(m, r)
		case MethodSpan:
			q = span(m, r)
		case MethodPartial:
			q, edited = partial(m, r)
		case MethodName:
			q, edited = holdOutName(m)
		}
		if q == "" {
			continue
		}
		set.Queries = append(set.Queries, Pseudo{Query: q, Target: m.ID})
		if edited != nil {
			set.Edited[m.ID] = edited
		}
	}
	return set
}

// holdOut takes one sentence out of a memory of several; a one-sentence
// memory gives a partial pseudo-query instead (taking a span wholly out of a
// short memory leaves too little to find it by: MRR near 0 on LoCoMo turns).
func holdOut(m *memory.Memory, r *rand.Rand) (string, *memory.Memory) {
	if len(strings.Fields(m.Text)) < minWords {
		return "", nil
	}
	sents := Sentences(m.Text)
	if len(sents) >= 2 {
		i := r.IntN(len(sents))
		q := sents[i]
		rest := strings.Join(append(append([]string(nil), sents[:i]...), sents[i+1:]...), " ")
		if len(strings.Fields(q)) >= minQuery && len(strings.Fields(rest)) >= minQuery {
			e := *m
			e.Text = rest
			e.Embedding = nil
			return q, &e
		}
	}
	return partial(m, r)
}

// span is a verbatim span of about 40% of the memory's words, memory unchanged.
func span(m *memory.Memory, r *rand.Rand) string {
	words := strings.Fields(m.Text)
	if len(words) < minWords {
		return ""
	}
	k := max(minQuery, len(words)*2/5)
	start := r.IntN(len(words) - k + 1)
	return strings.Join(words[start:start+k], " ")
}

// partial is a span of about 40% of the memory's words; the memory loses
// every other word of it, starting with the first.
func partial(m *memory.Memory, r *rand.Rand) (string, *memory.Memory) {
	words := strings.Fields(m.Text)
	if len(words) < minWords {
		return "", nil
	}
	k := max(minQuery, len(words)*2/5)
	start := r.IntN(len(words) - k + 1)
	rest := make([]string, 0, len(words))
	for i, w := range words {
		if i < start || i >= start+k || (i-start)%2 == 1 {
			rest = append(rest, w)
		}
	}
	e := *m
	e.Text = strings.Join(rest, " ")
	e.Embedding = nil
	return strings.Join(words[start:start+k], " "), &e
}

// holdOutName asks with the name (else the description) and leaves the memory
// its text only.
func holdOutName(m *memory.Memory) (string, *memory.Memory) {
	q := strings.TrimSpace(m.Name)
	if len(strings.Fields(q)) < minQuery {
		q = strings.TrimSpace(m.Description)
	}
	if len(strings.Fields(q)) < minQuery || len(strings.Fields(m.Text)) < minQuery {
		return "", nil
	}
	e := *m
	e.Name, e.Description, e.Embedding = "", "", nil
	return q, &e
}

// Sentences splits text after '.', '!' or '?' followed by a space; it keeps
// the punctuation and drops empty pieces.
func Sentences(text string) []string {
	var out []string
	rs := []rune(text)
	start := 0
	for i, c := range rs {
		if (c == '.' || c == '!' || c == '?') && (i+1 == len(rs) || unicode.IsSpace(rs[i+1])) {
			if s := strings.TrimSpace(string(rs[start : i+1])); s != "" {
				out = append(out, s)
			}
			start = i + 1
		}
	}
	if s := strings.TrimSpace(string(rs[start:])); s != "" {
		out = append(out, s)
	}
	return out
}
