// Package tokenize turns memory text and queries into the index terms of the BM25 leg:
// normalised, case- and diacritic-folded words, identifiers kept whole and split into
// their parts, CJK runs as character bigrams, English words stemmed and stopwords dropped.
package tokenize

import (
	"github.com/kljensen/snowball/english"
)

// MaxTokenBytes caps one term; a longer word or identifier is cut at a rune boundary.
const MaxTokenBytes = 64

// DefaultCacheSize is the term cache's capacity in entries when Options.CacheSize is zero.
const DefaultCacheSize = 1 << 16

// Options selects the English-specific stages. The zero value folds and splits but
// neither stems nor drops stopwords; DefaultOptions turns both on.
type Options struct {
	// Stem reduces English words to their Snowball stems ("running" → "run").
	Stem bool
	// Stopwords drops common English words ("the", "of"), unless that would leave a
	// text with no terms at all.
	Stopwords bool
	// CacheSize bounds the term (stem) cache in entries: 0 means DefaultCacheSize,
	// a negative value disables the cache.
	CacheSize int
}

// DefaultOptions returns stemming and stopword removal both on.
func DefaultOptions() Options { return Options{Stem: true, Stopwords: true} }

// Tokenizer produces index terms. It is safe for concurrent use; index and query
// text must go through tokenizers with equal Options to share terms.
type Tokenizer struct {
	opts  Options
	cache *termCache // nil when disabled
}

// New returns a tokenizer with the given options.
func New(opts Options) *Tokenizer {
	t := &Tokenizer{opts: opts}
	switch {
	case opts.CacheSize == 0:
		t.cache = newTermCache(DefaultCacheSize)
	case opts.CacheSize > 0:
		t.cache = newTermCache(opts.CacheSize)
	}
	return t
}

// Options returns the options the tokenizer was made with.
func (t *Tokenizer) Options() Options { return t.opts }

// Tokens returns the index terms of text in text order, repeats kept: plain words
// folded and stemmed, identifiers (tasks_claim, getUserName, main.go, a@b.io) as the
// folded whole followed by their stemmed parts, CJK runs as character bigrams.
func (t *Tokenizer) Tokens(text string) []string {
	if text == "" {
		return nil
	}
	out := t.AppendTokens(make([]string, 0, len(text)/6+1), text)
	if len(out) == 0 {
		return nil
	}
	return out
}

// AppendTokens appends the index terms of text to dst and returns the extended slice.
func (t *Tokenizer) AppendTokens(dst []string, text string) []string {
	return t.appendTokens(dst, text, false)
}

// appendTokens runs the analysis; reference forces the plain path (normalise the
// whole text, then scan it) that the fast paths are tested against.
func (t *Tokenizer) appendTokens(dst []string, text string, reference bool) []string {
	start := len(dst)
	a := analyzer{t: t, dst: dst, stop: t.opts.Stopwords}
	a.text(text, reference)
	if a.stop && a.dropped && len(a.dst) == start {
		// Only stopwords: keep them, so "The Who" still has terms.
		a.dst, a.stop, a.dropped = a.dst[:start], false, false
		a.text(text, reference)
	}
	return a.dst
}

// entry is what the term cache holds for one folded word.
type entry struct {
	term string // the index term: the stem, or the word itself
	stop bool   // the word is an English stopword
}

// term returns the cache entry for a folded word, computing and caching it on a miss.
func (t *Tokenizer) term(key []byte) entry {
	if t.cache == nil {
		return t.compute(string(key))
	}
	h := hashBytes(key)
	if e, ok := t.cache.get(h, key); ok {
		return e
	}
	if e, ok := t.cache.getLocked(h, key); ok {
		return e
	}
	k := string(key)
	e := t.compute(k)
	t.cache.put(h, k, e)
	return e
}

// compute stems and classifies one folded word. Only plain a–z words are English
// candidates; anything else (digits, other scripts, CJK bigrams) is its own term.
func (t *Tokenizer) compute(word string) entry {
	e := entry{term: word}
	if !isAZ(word) {
		return e
	}
	e.stop = isStopword(word)
	if t.opts.Stem && len(word) > 2 {
		if s := english.Stem(word, true); s != "" && len(s) <= MaxTokenBytes && isAZ(s) {
			e.term = s
		}
	}
	return e
}

// isAZ reports whether s is non-empty and only lower-case ASCII letters.
func isAZ(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < 'a' || s[i] > 'z' {
			return false
		}
	}
	return true
}
