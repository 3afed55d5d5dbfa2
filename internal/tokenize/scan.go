package tokenize

import (
	"unicode/utf8"

	"github.com/engram-memory/engram/internal/ascii"
)

// The scanner cuts normalised text into chunks (runs of letters, digits, marks,
// apostrophes and identifier joiners) and CJK runs, and turns each into terms:
//
//   - a chunk that is one plain word gives its folded, stemmed word;
//   - any other chunk is an identifier: the folded whole, unstemmed, then its parts
//     (split at joiners and at camelCase humps), each folded and stemmed;
//   - a CJK run gives its overlapping character bigrams, or its one character.
//
// Trailing punctuation is not part of an identifier ("main.go." → main.go), nor is
// leading punctuation, except a flag's dashes ("--dry-run") and a dotfile's dot (".env").

// analyzer holds one AppendTokens call's state.
type analyzer struct {
	t       *Tokenizer
	dst     []string
	stop    bool // drop stopwords
	dropped bool // a stopword was dropped
	ascii   bool // the text being scanned is known to be ASCII
	buf     [MaxTokenBytes]byte
}

// text scans text. ASCII text needs no normalisation; otherwise each field between
// ASCII spaces is normalised only if it holds a non-ASCII byte. Normalisation never
// reaches across an ASCII space, so this equals normalising the whole text, which is
// what reference does.
func (a *analyzer) text(text string, reference bool) {
	if reference {
		a.scan(normalize(text))
		return
	}
	if ascii.Is(text) {
		a.ascii = true
		a.scan(text)
		a.ascii = false
		return
	}
	for i := 0; i < len(text); {
		if isSpace(text[i]) {
			i++
			continue
		}
		j, ascii := i, byte(0)
		for j < len(text) && !isSpace(text[j]) {
			ascii |= text[j]
			j++
		}
		if ascii < 0x80 {
			a.ascii = true
			a.scan(text[i:j])
			a.ascii = false
		} else {
			a.scan(normalize(text[i:j]))
		}
		i = j
	}
}

// isSpace reports whether b is ASCII white space.
func isSpace(b byte) bool {
	return b == ' ' || b == '\t' || b == '\n' || b == '\r' || b == '\v' || b == '\f'
}

// scan emits the terms of normalised text s.
func (a *analyzer) scan(s string) {
	for i := 0; i < len(s); {
		c, w := asciiClass[s[i]&0x7f], 1
		if s[i] >= utf8.RuneSelf {
			c, w = classAtSlow(s, i)
		}
		switch c {
		case clCJK:
			i = a.cjk(s, i)
		case clSep, clMark:
			i += w
		default:
			j := i + w
			for j < len(s) {
				c, w := asciiClass[s[j]&0x7f], 1
				if s[j] >= utf8.RuneSelf {
					c, w = classAtSlow(s, j)
				}
				if c == clSep || c == clCJK {
					break
				}
				j += w
			}
			a.chunk(s[i:j])
			i = j
		}
	}
}

// cjk emits the bigrams of the CJK run starting at s[i] and returns where it ends.
// Combining marks inside the run are skipped.
func (a *analyzer) cjk(s string, i int) int {
	prev, prevEnd, n := 0, 0, 0
	for i < len(s) {
		r, w := runeAt(s, i)
		c := classOf(r)
		if c == clMark {
			i += w
			continue
		}
		if c != clCJK {
			break
		}
		if n > 0 {
			k := copy(a.buf[:], s[prev:prevEnd])
			k += copy(a.buf[k:], s[i:i+w])
			a.emitTerm(a.buf[:k])
		}
		prev, prevEnd, n = i, i+w, n+1
		i += w
	}
	if n == 1 {
		k := copy(a.buf[:], s[prev:prevEnd])
		a.emitTerm(a.buf[:k])
	}
	return i
}

// chunk emits the terms of one chunk: a plain word or an identifier.
func (a *analyzer) chunk(c string) {
	end := len(c)
	for end > 0 {
		r, w := runeBefore(c, end)
		if classOf(r).word() {
			break
		}
		end -= w
	}
	if end == 0 {
		return
	}
	if k := keptSuffix(c, end); k > 0 {
		end += k // c++, c#
	} else if end >= 3 && (c[end-1] == 's' || c[end-1] == 'S') && c[end-2] == '\'' {
		if r, _ := runeBefore(c, end-2); classOf(r).letter() {
			end -= 2 // possessive: user's → user
		}
	}
	start := 0
	for start < end {
		r, w := runeAt(c, start)
		if classOf(r).base() {
			break
		}
		start += w
	}
	if start == end {
		return
	}
	if lead := c[:start]; lead == "." || lead == "-" || lead == "--" {
		if r, _ := runeAt(c, start); lead == "." || classOf(r).letter() {
			start = 0 // .env, --dry-run, -v
		}
	}
	body := c[start:end]
	ps, pe := nextPart(body, 0)
	if ps == 0 && pe == len(body) {
		a.emitTerm(a.fold(body))
		return
	}
	a.emitWhole(body)
	for ps < len(body) {
		a.emitTerm(a.fold(body[ps:pe]))
		ps, pe = nextPart(body, pe)
	}
}

// keptSuffix returns how many of the joiners after c[:end] stay part of the token:
// "++", "+" or "#" straight after a letter, as in c++, g++ and c#.
func keptSuffix(c string, end int) int {
	if end == len(c) {
		return 0
	}
	if r, _ := runeBefore(c, end); !classOf(r).letter() {
		return 0
	}
	switch {
	case c[end] == '+' && end+1 < len(c) && c[end+1] == '+':
		return 2
	case c[end] == '+' || c[end] == '#':
		return 1
	}
	return 0
}

// nextPart finds the first identifier part of s at or after i and returns its
// bounds; ps == len(s) when there is none. A part is a run of letters, digits, marks
// and apostrophes between letters, cut where camelCase starts a new word:
// lower|Upper, digit|Upper and the last capital of an acronym (HTTP|Server).
func nextPart(s string, i int) (ps, pe int) {
	for i < len(s) {
		c, w := asciiClass[s[i]&0x7f], 1
		if s[i] >= utf8.RuneSelf {
			c, w = classAtSlow(s, i)
		}
		if c.base() {
			break
		}
		i += w
	}
	if i == len(s) {
		return i, i
	}
	ps = i
	prev, prevAt, prev2 := clSep, i, clSep
	for i < len(s) {
		c, w := asciiClass[s[i]&0x7f], 1
		if s[i] >= utf8.RuneSelf {
			c, w = classAtSlow(s, i)
		}
		switch {
		case i == ps:
		case c == clMark:
			i += w
			continue
		case c == clApos:
			if prev.letter() && i+w < len(s) {
				if r2, _ := runeAt(s, i+w); classOf(r2).letter() {
					i += w
					continue // don't, o'reilly
				}
			}
			return ps, i
		case !c.base():
			return ps, i
		case c == clUpper && (prev == clLower || prev == clDigit):
			return ps, i
		case c == clLower && prev == clUpper && prev2 == clUpper:
			return ps, prevAt
		}
		prev2, prev, prevAt = prev, c, i
		i += w
	}
	return ps, i
}

// emitTerm appends the term for a folded word, or drops it as a stopword.
func (a *analyzer) emitTerm(key []byte) {
	if len(key) == 0 {
		return
	}
	e := a.t.term(key)
	if e.stop && a.stop {
		a.dropped = true
		return
	}
	a.dst = append(a.dst, e.term)
}

// emitWhole appends a whole identifier, folded but not stemmed.
func (a *analyzer) emitWhole(raw string) {
	if key := a.fold(raw); len(key) > 0 {
		a.dst = append(a.dst, string(key))
	}
}
