// Package excerpt picks the passage of a long text that best matches a query,
// so that a delivery within a character budget shows the part of a memory
// that answers, marked as cut, instead of leaving the memory out.
package excerpt

// The passage is a run of whole words of at most the room given, ellipses
// included. Among every such run (one starting at each word) it takes the one
// holding the most distinct query terms, then the most query-term
// occurrences, then one that starts a sentence, then the one whose first
// match comes soonest after its start (no idle lead-in), then the earliest.
// Terms are the tokenizer's (stemmed, stopwords dropped, identifiers whole
// and in parts), so a passage matches the query as the BM25 leg does. With no
// query term in the text (a memory found by meaning alone), or no query, it
// is the text's beginning.

import (
	"strings"
	"sync"
	"unicode"
	"unicode/utf8"

	"github.com/engram-memory/engram/internal/tokenize"
	"github.com/engram-memory/engram/memory"
)

// Ellipsis marks where a passage was cut from its text.
const Ellipsis = "…"

// maxPiece is the longest run of non-space runes taken as one word: longer
// runs (unspaced scripts, URLs, base64) are cut into pieces of this size so
// that a window can still hold a part of them.
const maxPiece = 24

// Query is a query's terms, ready to excerpt many texts with.
type Query struct {
	tok   *tokenize.Tokenizer
	terms map[string]bool
}

// ForPrompt tokenizes text as the BM25 leg does by default (tokenize's
// default options): the query an injection picks its passages with.
func ForPrompt(text string) *Query { return NewQuery(defaultTokenizer(), text) }

var defaultTokenizer = sync.OnceValue(func() *tokenize.Tokenizer { return tokenize.New(tokenize.DefaultOptions()) })

// NewQuery tokenizes text with tok. A nil tokenizer or an empty text gives a
// query without terms: every passage is the text's beginning.
func NewQuery(tok *tokenize.Tokenizer, text string) *Query {
	q := &Query{tok: tok, terms: map[string]bool{}}
	if tok != nil {
		for _, t := range tok.Tokens(text) {
			q.terms[t] = true
		}
	}
	return q
}

// ForTerms is a query of index terms already made (a long query's kept
// terms, memory.Reduced.Kept), matched against texts tokenized by tok.
func ForTerms(tok *tokenize.Tokenizer, terms []string) *Query {
	q := &Query{tok: tok, terms: make(map[string]bool, len(terms))}
	for _, t := range terms {
		q.terms[t] = true
	}
	return q
}

// ForResponse is the query a search's results are excerpted with: its
// query's terms by tok, or a long query's kept terms (so that a huge prompt
// is not tokenized again).
func ForResponse(tok *tokenize.Tokenizer, query string, reduced *memory.Reduced) *Query {
	if reduced != nil {
		return ForTerms(tok, reduced.Kept)
	}
	return NewQuery(tok, query)
}

// DefaultTokenizer is the tokenizer ForPrompt uses.
func DefaultTokenizer() *tokenize.Tokenizer { return defaultTokenizer() }

// piece is one word of the text: its byte span, whether a sentence starts at
// it, and the query terms it holds (indexes into a per-text list).
type piece struct {
	start, end int // byte offsets into the folded text
	runes      int
	sentence   bool
	terms      []int
}

// Passage returns the best passage of text within room runes, ellipses
// included, whitespace folded to single spaces; text itself (folded) when it
// fits. A room too small for one word gives the first room runes of it.
func (q *Query) Passage(text string, room int) string {
	text = strings.Join(strings.Fields(text), " ")
	n := utf8.RuneCountInString(text)
	if n <= room {
		return text
	}
	if room <= 0 {
		return ""
	}
	pieces, nterms := q.pieces(text)
	best, bestEnd := -1, -1
	if nterms > 0 {
		best, bestEnd = q.best(pieces, nterms, room)
	}
	if best < 0 {
		best, bestEnd = 0, lead(pieces, room)
	}
	if bestEnd <= best { // not even the first word fits: cut it
		return cut(text, room-1) + Ellipsis
	}
	var b strings.Builder
	if best > 0 {
		b.WriteString(Ellipsis)
	}
	b.WriteString(text[pieces[best].start:pieces[bestEnd-1].end])
	if bestEnd < len(pieces) {
		b.WriteString(Ellipsis)
	}
	return b.String()
}

// best slides a window of whole pieces over the text and returns the best
// window [start, end) holding at least one query term, or -1 when none does.
func (q *Query) best(pieces []piece, nterms, room int) (int, int) {
	counts := make([]int, nterms)
	distinct, occ := 0, 0
	bestStart, bestEnd := -1, -1
	var bestScore score
	end, width := 0, 0 // window [start, end); width in runes with the spaces between pieces
	for start := range pieces {
		if end < start {
			end, width = start, 0
		}
		for end < len(pieces) {
			w := width + pieces[end].runes
			if end > start {
				w++ // the space before it
			}
			if w+marks(start, end+1, len(pieces)) > room {
				break
			}
			width = w
			for _, t := range pieces[end].terms {
				if counts[t] == 0 {
					distinct++
				}
				counts[t]++
				occ++
			}
			end++
		}
		if end == start {
			continue
		}
		if distinct > 0 {
			sc := score{distinct: distinct, occ: occ, sentence: pieces[start].sentence, lead: leadIn(pieces, start, end)}
			if bestStart < 0 || sc.better(bestScore) {
				bestStart, bestEnd, bestScore = start, end, sc
			}
		}
		// Drop the first piece before the window moves on.
		for _, t := range pieces[start].terms {
			counts[t]--
			if counts[t] == 0 {
				distinct--
			}
			occ--
		}
		width -= pieces[start].runes
		if end > start+1 {
			width-- // its space
		}
	}
	return bestStart, bestEnd
}

// score orders windows: more distinct query terms, then more occurrences,
// then a sentence start, then a shorter lead-in before the first match.
type score struct {
	distinct, occ int
	sentence      bool
	lead          int
}

func (a score) better(b score) bool {
	switch {
	case a.distinct != b.distinct:
		return a.distinct > b.distinct
	case a.occ != b.occ:
		return a.occ > b.occ
	case a.sentence != b.sentence:
		return a.sentence
	}
	return a.lead < b.lead
}

// leadIn is the runes of the window [start, end) before its first piece
// holding a query term.
func leadIn(pieces []piece, start, end int) int {
	n := 0
	for k := start; k < end && len(pieces[k].terms) == 0; k++ {
		n += pieces[k].runes + 1
	}
	return n
}

// marks is how many ellipses the window [start, end) of n pieces carries.
func marks(start, end, n int) int {
	m := 0
	if start > 0 {
		m++
	}
	if end < n {
		m++
	}
	return m
}

// lead is the end of the longest run of whole pieces from the first that
// fits in room with its trailing ellipsis (0 when the first does not fit).
func lead(pieces []piece, room int) int {
	end, w := 0, 0
	for end < len(pieces) {
		nw := w + pieces[end].runes
		if end > 0 {
			nw++
		}
		if nw+marks(0, end+1, len(pieces)) > room {
			break
		}
		w = nw
		end++
	}
	return end
}

// pieces splits folded text (single spaces) into words, long runs cut, and
// marks the query terms each holds and where sentences start.
func (q *Query) pieces(text string) ([]piece, int) {
	var out []piece
	termIDs := map[string]int{}
	sentence := true
	for i := 0; i < len(text); {
		j := strings.IndexByte(text[i:], ' ')
		if j < 0 {
			j = len(text)
		} else {
			j += i
		}
		word := text[i:j]
		for len(word) > 0 {
			k, r := 0, 0
			for k < len(word) && r < maxPiece {
				_, size := utf8.DecodeRuneInString(word[k:])
				k += size
				r++
			}
			p := piece{start: i, end: i + k, runes: r, sentence: sentence}
			if len(q.terms) > 0 {
				seen := map[int]bool{}
				for _, t := range q.tok.Tokens(word[:k]) {
					if !q.terms[t] {
						continue
					}
					id, ok := termIDs[t]
					if !ok {
						id = len(termIDs)
						termIDs[t] = id
					}
					if !seen[id] {
						seen[id] = true
						p.terms = append(p.terms, id)
					}
				}
			}
			out = append(out, p)
			sentence = endsSentence(word[:k])
			i += k
			word = word[k:]
		}
		i = j + 1
	}
	return out, len(termIDs)
}

// endsSentence reports whether a word closes a sentence: it ends in . ! ? or
// their full-width forms (a closing quote or bracket may follow).
func endsSentence(w string) bool {
	w = strings.TrimRightFunc(w, func(r rune) bool {
		return unicode.Is(unicode.Pe, r) || unicode.Is(unicode.Pf, r) || r == '"' || r == '\''
	})
	r, _ := utf8.DecodeLastRuneInString(w)
	switch r {
	case '.', '!', '?', '。', '！', '？':
		return true
	}
	return false
}

// cut is the first n runes of s.
func cut(s string, n int) string {
	if n <= 0 {
		return ""
	}
	i := 0
	for k := 0; k < n && i < len(s); k++ {
		_, size := utf8.DecodeRuneInString(s[i:])
		i += size
	}
	return s[:i]
}
