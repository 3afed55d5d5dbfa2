// Package wordpiece is BERT's uncased WordPiece tokenizer, giving the same ids
// as Hugging Face tokenizers: special-token literals split off the raw text,
// the BERT normaliser and pre-tokenizer, greedy longest-match WordPiece with
// "##" continuations and [UNK], and truncation.
package wordpiece

import (
	"errors"
	"fmt"
	"strings"
	"sync"
	"unicode/utf8"
)

// DefaultMaxWordChars is the longest word, in characters, WordPiece splits;
// a longer one becomes the unknown token (BERT's max_input_chars_per_word).
const DefaultMaxWordChars = 100

// continuation prefixes every vocabulary entry that continues a word.
const continuation = "##"

// Config describes a vocabulary and how texts become ids.
type Config struct {
	// Vocab lists the tokens; a token's id is its index.
	Vocab []string
	// Unknown is the token of a word WordPiece cannot split (e.g. "[UNK]").
	Unknown string
	// Special are literals matched in the raw text before anything else
	// (Hugging Face's added tokens, e.g. "[CLS]"): each becomes its own id.
	Special []string
	// Prefix and Suffix are put around every text ("[CLS]", "[SEP]"), or "" for none.
	Prefix, Suffix string
	// MaxLen is the most ids a text gets, Prefix and Suffix included; 0 means no limit.
	MaxLen int
	// MaxWordChars bounds the words WordPiece splits; 0 means DefaultMaxWordChars.
	MaxWordChars int
	// DropUnknown leaves the unknown token out of the output, after
	// truncation (as model2vec's static models do).
	DropUnknown bool
	// Table is Table(Vocab), made ahead and kept with the model, or "" to
	// build it here. It is used in place (it may be read-only memory, such
	// as a string embedded in the binary), trusted to be Vocab's: pass only
	// one a test checks against the vocabulary it was made for.
	Table string
}

// Tokenizer turns text into ids. It is safe for concurrent use.
type Tokenizer struct {
	vocab          []string
	pieces         *table // word-initial and continuation pieces
	maxInit        int    // longest key of initial, in bytes
	maxCont        int    // longest key of cont, in bytes
	unk            int32
	prefix, suffix int32 // -1: none
	special        []special
	specialFirst   string // the first bytes of the special literals
	maxLen         int
	maxWordChars   int
	dropUnk        bool

	pool sync.Pool // *scratch
}

type special struct {
	text string
	id   int32
}

type scratch struct {
	word   []byte
	pieces []int32
}

// New builds a tokenizer; every token Config names must be in Vocab.
func New(c Config) (*Tokenizer, error) {
	if len(c.Vocab) == 0 {
		return nil, errors.New("wordpiece: empty vocabulary")
	}
	if len(c.Vocab) > 1<<31-1 {
		return nil, fmt.Errorf("wordpiece: vocabulary of %d tokens is too large", len(c.Vocab))
	}
	t := &Tokenizer{
		vocab:        c.Vocab,
		maxLen:       c.MaxLen,
		maxWordChars: c.MaxWordChars,
		dropUnk:      c.DropUnknown,
		prefix:       -1,
		suffix:       -1,
	}
	if t.maxWordChars == 0 {
		t.maxWordChars = DefaultMaxWordChars
	}
	if t.maxWordChars < 0 || t.maxLen < 0 {
		return nil, fmt.Errorf("wordpiece: negative limit (MaxLen %d, MaxWordChars %d)", c.MaxLen, c.MaxWordChars)
	}
	var err error
	if c.Table != "" {
		t.pieces, t.maxInit, t.maxCont, err = readTable(c.Vocab, c.Table)
	} else {
		t.pieces, t.maxInit, t.maxCont, err = buildTable(c.Vocab)
	}
	if err != nil {
		return nil, err
	}
	lookup := func(what, tok string) (int32, error) {
		id, ok := t.pieces.find(key(tok))
		if !ok {
			return 0, fmt.Errorf("wordpiece: %s token %q is not in the vocabulary", what, tok)
		}
		return id, nil
	}
	if t.unk, err = lookup("unknown", c.Unknown); err != nil {
		return nil, err
	}
	if c.Prefix != "" {
		if t.prefix, err = lookup("prefix", c.Prefix); err != nil {
			return nil, err
		}
	}
	if c.Suffix != "" {
		if t.suffix, err = lookup("suffix", c.Suffix); err != nil {
			return nil, err
		}
	}
	if t.maxLen > 0 && t.maxLen < t.fixed()+1 {
		return nil, fmt.Errorf("wordpiece: MaxLen %d leaves no room for text", t.maxLen)
	}
	for _, s := range c.Special {
		id, err := lookup("special", s)
		if err != nil {
			return nil, err
		}
		t.special = append(t.special, special{s, id})
		if !strings.Contains(t.specialFirst, s[:1]) {
			t.specialFirst += s[:1]
		}
	}
	return t, nil
}

// fixed is the number of ids every text gets besides its own.
func (t *Tokenizer) fixed() int {
	n := 0
	if t.prefix >= 0 {
		n++
	}
	if t.suffix >= 0 {
		n++
	}
	return n
}

// Len is the vocabulary size: every id is in [0, Len()).
func (t *Tokenizer) Len() int { return len(t.vocab) }

// Token returns the token of id, or "" if id is out of range.
func (t *Tokenizer) Token(id int32) string {
	if id < 0 || int(id) >= len(t.vocab) {
		return ""
	}
	return t.vocab[id]
}

// MaxLen is the configured limit on a text's ids (0: none).
func (t *Tokenizer) MaxLen() int { return t.maxLen }

// Encode appends the ids of text to dst and returns it, cut at MaxLen.
// Invalid UTF-8 bytes count as U+FFFD, which the normaliser removes.
func (t *Tokenizer) Encode(dst []int32, text string) []int32 { return t.encode(dst, text, t.maxLen) }

// EncodeUpTo is Encode with limit in place of MaxLen (0: none), for callers
// that split a long text into several model-sized windows themselves.
func (t *Tokenizer) EncodeUpTo(dst []int32, text string, limit int) []int32 {
	return t.encode(dst, text, max(limit, 0))
}

func (t *Tokenizer) encode(dst []int32, text string, maxLen int) []int32 {
	sc, _ := t.pool.Get().(*scratch)
	if sc == nil {
		sc = &scratch{word: make([]byte, 0, 64), pieces: make([]int32, 0, 32)}
	}
	e := encoder{t: t, sc: sc, out: dst, budget: -1}
	if t.prefix >= 0 {
		e.out = append(e.out, t.prefix)
	}
	if maxLen > 0 {
		e.budget = max(maxLen-t.fixed(), 0)
	}
	for text != "" && e.budget != 0 {
		seg, sp, rest := t.nextSpecial(text)
		e.segment(seg)
		if sp != nil && e.budget != 0 {
			e.emit(sp.id)
		}
		text = rest
	}
	if t.suffix >= 0 {
		e.out = append(e.out, t.suffix)
	}
	t.pool.Put(sc)
	return e.out
}

// nextSpecial splits text at its leftmost special literal (the longest one
// there): the text before it, the literal (nil if none) and the rest.
func (t *Tokenizer) nextSpecial(text string) (string, *special, string) {
	if len(t.special) == 0 {
		return text, nil, ""
	}
	for i := 0; i < len(text); {
		j := strings.IndexAny(text[i:], t.specialFirst)
		if j < 0 {
			break
		}
		i += j
		var best *special
		for k := range t.special {
			s := &t.special[k]
			if strings.HasPrefix(text[i:], s.text) && (best == nil || len(s.text) > len(best.text)) {
				best = s
			}
		}
		if best != nil {
			return text[:i], best, text[i+len(best.text):]
		}
		i++
	}
	return text, nil, ""
}

// encoder is the state of one Encode call.
type encoder struct {
	t      *Tokenizer
	sc     *scratch
	out    []int32
	budget int // ids still allowed (Unknown counted even when dropped); -1: no limit
	chars  int // characters in sc.word
}

// emit appends one id, if the budget allows.
func (e *encoder) emit(id int32) {
	if e.budget == 0 {
		return
	}
	if e.budget > 0 {
		e.budget--
	}
	if id == e.t.unk && e.t.dropUnk {
		return
	}
	e.out = append(e.out, id)
}

// segment normalises and pre-tokenizes text between special literals.
func (e *encoder) segment(s string) {
	e.sc.word = e.sc.word[:0]
	e.chars = 0
	for i := 0; i < len(s) && e.budget != 0; {
		c := s[i]
		if c < utf8.RuneSelf {
			i++
			switch asciiClass[c] {
			case asciiLetter:
				e.sc.word = append(e.sc.word, asciiLower[c])
				e.chars++
			case asciiSpace:
				e.flush()
			case asciiPunct:
				e.flush()
				e.sc.word = append(e.sc.word, c)
				e.chars = 1
				e.flush()
			}
			continue
		}
		r, n := utf8.DecodeRuneInString(s[i:])
		i += n
		switch kindOf(r) {
		case kindKeep:
			e.char(r)
		case kindRemove:
		case kindSpace:
			e.flush()
		case kindIsolate:
			e.flush()
			e.sc.word = utf8.AppendRune(e.sc.word, r)
			e.chars = 1
			e.flush()
		case kindMap:
			for _, m := range mappedTo(r) {
				e.char(m)
			}
		case kindHangul:
			l, v, tail := hangul(r)
			e.char(l)
			e.char(v)
			if tail != 0 {
				e.char(tail)
			}
		}
	}
	e.flush()
}

// char adds one normalised character: a space ends the word, punctuation is
// a word of its own, anything else extends the word.
func (e *encoder) char(r rune) {
	switch {
	case r == ' ':
		e.flush()
	case isPunct(r):
		e.flush()
		e.sc.word = utf8.AppendRune(e.sc.word, r)
		e.chars = 1
		e.flush()
	default:
		e.sc.word = utf8.AppendRune(e.sc.word, r)
		e.chars++
	}
}

// flush runs WordPiece on the pending word.
func (e *encoder) flush() {
	w := e.sc.word
	if len(w) == 0 {
		return
	}
	chars := e.chars
	e.sc.word = w[:0]
	e.chars = 0
	if e.budget == 0 {
		return
	}
	if chars > e.t.maxWordChars {
		e.emit(e.t.unk)
		return
	}
	pieces, ok := e.t.split(e.sc.pieces[:0], w)
	e.sc.pieces = pieces[:0]
	if !ok {
		e.emit(e.t.unk)
		return
	}
	for _, id := range pieces {
		e.emit(id)
	}
}

// split is greedy longest-match-first WordPiece: it appends the pieces of w
// to dst, or reports false if some part of w matches no piece.
func (t *Tokenizer) split(dst []int32, w []byte) ([]int32, bool) {
	for start := 0; start < len(w); {
		cont, longest := start > 0, t.maxInit
		if cont {
			longest = t.maxCont
		}
		end := min(len(w), start+longest)
		found := false
		for ; end > start; end-- {
			if end < len(w) && !utf8.RuneStart(w[end]) {
				continue
			}
			if id, ok := t.pieces.findBytes(cont, w[start:end]); ok {
				dst = append(dst, id)
				found = true
				break
			}
		}
		if !found {
			return dst, false
		}
		start = end
	}
	return dst, true
}
