package embed

import (
	"unicode"
	"unicode/utf8"

	"github.com/engram-memory/engram/internal/ascii"
)

// Reader is implemented by embedders whose model reads only some writing
// systems: an English model reads the Latin script, and its vector of a
// Chinese text says nothing about the text's meaning (any two such texts
// score alike). The recall pipeline skips the vector leg for a query the
// model does not read, leaves the vectors of memories it does not read out
// of the leg, and counts a cosine towards relevance in proportion to the
// share of each text the model reads (Share).
type Reader interface {
	// Scripts are the scripts the model reads; nil: every script.
	Scripts() Scripts
}

// ScriptsOf is what e's model reads: its Scripts, or nil (every script) for
// an embedder that does not say (a served model is taken to read every
// language).
func ScriptsOf(e Embedder) Scripts {
	if r, ok := e.(Reader); ok {
		return r.Scripts()
	}
	return nil
}

// Unread is what e's model does not read of text ("" when it reads it, and
// for every embedder that does not say which scripts it reads).
func Unread(e Embedder, text string) string {
	if s := ScriptsOf(e); s != nil {
		return s.Unread(text)
	}
	return ""
}

// Share is the share of text's letters e's model reads (Scripts.Share; 1
// for an embedder that does not say which scripts it reads).
func Share(e Embedder, text string) float64 {
	if s := ScriptsOf(e); s != nil {
		return s.Share(text)
	}
	return 1
}

// Scripts is a set of Unicode scripts a model reads. A text is read when
// its letters in those scripts are at least as many as its letters in
// others, a character of a script written without spaces between words
// (Han, Hiragana, Katakana, Hangul, Thai, ...) counting as two letters: an
// English word averages about five letters, a Chinese word fewer than two
// characters. A text with no letter (numbers, punctuation, an identifier
// made of digits) is read.
type Scripts []*unicode.RangeTable

// Latin is the Reader of a model trained on English (or other
// Latin-script) text.
var Latin = Scripts{unicode.Latin}

// scriptNames name the scripts Unread reports, the most common first; a
// letter in none of them is reported as "other".
var scriptNames = []struct {
	name  string
	table *unicode.RangeTable
	dense bool // written without spaces between words: a character counts twice
}{
	{"Han", unicode.Han, true},
	{"Hiragana", unicode.Hiragana, true},
	{"Katakana", unicode.Katakana, true},
	{"Hangul", unicode.Hangul, true},
	{"Cyrillic", unicode.Cyrillic, false},
	{"Arabic", unicode.Arabic, false},
	{"Greek", unicode.Greek, false},
	{"Hebrew", unicode.Hebrew, false},
	{"Devanagari", unicode.Devanagari, false},
	{"Thai", unicode.Thai, true},
	{"Latin", unicode.Latin, false},
}

// Unread implements Reader. It is called on every memory the vector leg
// returns, so it is quick on the common cases: an ASCII text for a reader of
// Latin is read without counting its letters; otherwise ASCII is read a byte
// at a time, and the count stops as soon as the rest of the text cannot
// outweigh what it has read (a character counts at most two letters and
// takes at least three bytes when it does, so no byte left weighs more than
// one letter). unreadReference in the tests is the plain loop it is checked
// against.
func (s Scripts) Unread(text string) string {
	asciiRead := s.readsASCII()
	if asciiRead && ascii.Is(text) {
		return "" // every letter is one s reads
	}
	read, unread := 0, 0
	var counts [16]int // per scriptNames entry, then "other" at len(scriptNames)
	for i := 0; i < len(text); {
		if b := text[i]; b < utf8.RuneSelf {
			i++
			if c := b | 0x20; c < 'a' || c > 'z' {
				continue
			}
			if asciiRead || s.reads(unicode.Latin, rune(b)) {
				read++
				// Only after a letter read: nothing else can make the rest
				// unable to outweigh it.
				if read-unread >= len(text)-i {
					return ""
				}
			} else {
				unread++
				counts[len(scriptNames)-1]++
			}
			continue
		}
		r, n := utf8.DecodeRuneInString(text[i:])
		i += n
		if !unicode.IsLetter(r) {
			continue
		}
		w, k := weigh(r)
		if s.reads(nil, r) {
			read += w
			if read-unread >= len(text)-i {
				return ""
			}
		} else {
			unread += w
			counts[k] += w
		}
	}
	if unread <= read {
		return ""
	}
	return mostUnread(&counts)
}

// Share is the share of text's letters, weighed as Unread weighs them, in
// scripts s reads: 1 for a text with no letter. A text is read (Unread is
// "") exactly when its share is at least one half. A cosine between two
// texts says as much about their meaning as the model read of them: an
// English model reads the Latin words of a Chinese sentence that names a
// tool, and two such sentences score high for their Chinese alone.
//
// It runs on every hit of the vector leg, so it counts the letters beyond
// ASCII first, skipping ASCII bytes: when s reads ASCII letters and every
// other letter, the share is 1 without counting the ASCII ones.
func (s Scripts) Share(text string) float64 {
	asciiRead := s.readsASCII()
	read, all := 0, 0
	for i := 0; i < len(text); {
		if text[i] < utf8.RuneSelf {
			i += ascii.Prefix(text[i:])
			continue
		}
		r, n := utf8.DecodeRuneInString(text[i:])
		i += n
		if !unicode.IsLetter(r) {
			continue
		}
		w, _ := weigh(r)
		all += w
		if s.reads(nil, r) {
			read += w
		}
	}
	if asciiRead && read == all {
		return 1
	}
	for i := 0; i < len(text); i++ {
		if c := text[i] | 0x20; c >= 'a' && c <= 'z' {
			all++
			if asciiRead || s.reads(unicode.Latin, rune(text[i])) {
				read++
			}
		}
	}
	if all == 0 {
		return 1
	}
	return float64(read) / float64(all)
}

// weigh is what a letter beyond ASCII counts for (two in a dense script,
// one elsewhere) and its scriptNames entry (len(scriptNames): other).
func weigh(r rune) (w, k int) {
	for j, sn := range scriptNames {
		if unicode.Is(sn.table, r) {
			if sn.dense {
				return 2, j
			}
			return 1, j
		}
	}
	return 1, len(scriptNames)
}

// mostUnread names the script with the most unread letters in counts (by
// scriptNames entry, then "other"), the first of a tie.
func mostUnread(counts *[16]int) string {
	best := 0
	for i := range len(scriptNames) + 1 {
		if counts[i] > counts[best] {
			best = i
		}
	}
	if best == len(scriptNames) {
		return "other"
	}
	return scriptNames[best].name
}

// readsASCII reports whether s reads every ASCII letter: it holds the Latin
// table itself. Otherwise each ASCII letter is looked up.
func (s Scripts) readsASCII() bool {
	for _, t := range s {
		if t == unicode.Latin {
			return true
		}
	}
	return false
}

// reads reports whether r is in one of s's scripts; known is the script r
// is already known to be in (nil: look it up).
func (s Scripts) reads(known *unicode.RangeTable, r rune) bool {
	for _, t := range s {
		if t == known || unicode.Is(t, r) {
			return true
		}
	}
	return false
}
