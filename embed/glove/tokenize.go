package glove

// Tokenisation matches the GloVe vocabulary, which is lower-case and
// diacritic-free: text is folded (NFD, combining marks dropped), split into
// runs of letters and digits, and each run lower-cased. A run the vocabulary
// lacks as a whole ("getUserName") is split at case changes ("get", "user",
// "name"); snake_case and kebab-case split at their punctuation anyway.

import (
	"unicode"
	"unicode/utf8"

	"golang.org/x/text/unicode/norm"
)

// run is one run of letters and digits: its lower-cased bytes and the byte
// offsets inside it where a camel-case part begins (never 0).
type run struct {
	word   []byte
	splits []int
}

// charClass of a rune inside a run, for camel-case boundaries.
const (
	clsNone = iota
	clsLower
	clsUpper
	clsDigit
)

// scanner holds the state of one scan; its rune method consumes folded runes
// and hands each finished run to fn.
type scanner struct {
	buf            []byte
	splits         []int
	prev, prevPrev int
	prevStart      int // offset in buf of the previous rune
	fn             func(r run)
}

// scanRuns calls fn for every run of text. buf and splits are scratch space,
// grown and returned for reuse; fn must not keep the slices it is given.
// Decomposable runes are replaced by their NFD decomposition from the
// normalisation tables, rune by rune, so folding allocates nothing.
func scanRuns(text string, buf []byte, splits []int, fn func(r run)) ([]byte, []int) {
	s := scanner{buf: buf[:0], splits: splits[:0]}
	for i := 0; i < len(text); {
		if c := text[i]; c < utf8.RuneSelf {
			s.rune(rune(c), fn)
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(text[i:])
		if d := norm.NFD.PropertiesString(text[i : i+size]).Decomposition(); len(d) > 0 {
			for _, dr := range string(d) {
				s.rune(dr, fn)
			}
		} else {
			s.rune(r, fn)
		}
		i += size
	}
	s.flush(fn)
	return s.buf, s.splits
}

func (s *scanner) flush(fn func(r run)) {
	if len(s.buf) > 0 {
		fn(run{word: s.buf, splits: s.splits})
	}
	s.buf, s.splits = s.buf[:0], s.splits[:0]
	s.prev, s.prevPrev = clsNone, clsNone
}

func (s *scanner) rune(r rune, fn func(r run)) {
	var cls int
	switch {
	case 'a' <= r && r <= 'z':
		cls = clsLower
	case 'A' <= r && r <= 'Z':
		cls = clsUpper
		r += 'a' - 'A'
	case '0' <= r && r <= '9':
		cls = clsDigit
	case r < utf8.RuneSelf:
		s.flush(fn)
		return
	case unicode.Is(unicode.Mn, r):
		return // a combining mark: fold it away
	case unicode.IsUpper(r):
		cls = clsUpper
		r = unicode.ToLower(r)
	case unicode.IsLetter(r):
		cls = clsLower
	case unicode.IsDigit(r):
		cls = clsDigit
	default:
		s.flush(fn)
		return
	}
	start := len(s.buf)
	switch {
	case cls == clsUpper && (s.prev == clsLower || s.prev == clsDigit):
		s.splits = append(s.splits, start) // camel|Case
	case cls == clsLower && s.prev == clsUpper && s.prevPrev == clsUpper && s.prevStart > 0:
		if n := len(s.splits); n == 0 || s.splits[n-1] != s.prevStart {
			s.splits = append(s.splits, s.prevStart) // HTTP|Server
		}
	}
	s.buf = utf8.AppendRune(s.buf, r)
	s.prevPrev, s.prev, s.prevStart = s.prev, cls, start
}
