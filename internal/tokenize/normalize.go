package tokenize

// Normalisation makes equal-looking text give equal terms: NFKC (full-width letters,
// ligatures, compatibility forms), removal of the diacritics on Latin, Greek and
// Cyrillic letters (café → cafe), and Unicode case folding (Straße → strasse). It
// decomposes with NFKD, drops the marks, and recomposes with NFC, so that Hangul
// syllables and kana with voicing marks come back whole rather than as jamo or bare
// kana plus a mark. Case folding happens per token, after camelCase has been read.

import (
	"bytes"
	"strings"
	"sync"
	"unicode"
	"unicode/utf8"

	"golang.org/x/text/cases"
	"golang.org/x/text/unicode/norm"

	"github.com/engram-memory/engram/internal/ascii"
)

// folder is Unicode case folding; a Fold caser is stateless and safe to share.
var folder = cases.Fold()

// normalize returns s in NFKC without Latin, Greek and Cyrillic diacritics, with
// Unicode dashes and apostrophes mapped to ASCII and invalid bytes turned into
// spaces. A mark that follows no letter or digit is dropped. Every decision looks
// only at the previous rune, so normalising fields between ASCII spaces one by one
// gives the same result as normalising the whole text.
func normalize(s string) string {
	sc := scratchPool.Get().(*scratch)
	defer scratchPool.Put(sc)
	d := sc.d[:0]
	for sc.it.InitString(norm.NFKD, s); !sc.it.Done(); {
		d = append(d, sc.it.Next()...)
	}
	b := sc.b[:0]
	word, strip := false, false // previous base: a letter or digit; one whose marks go
	changed := false            // b differs from d
	for i := 0; i < len(d); {
		if c := d[i]; c < utf8.RuneSelf {
			b = append(b, c)
			word, strip = asciiClass[c].base(), true
			i++
			continue
		}
		r, w := utf8.DecodeRune(d[i:])
		i += w
		if isCJK(r) { // the common case in CJK text, settled without table searches
			b = append(b, d[i-w:i]...)
			word, strip = true, false
			continue
		}
		if r == utf8.RuneError && w == 1 {
			r, changed = ' ', true
		}
		if unicode.IsMark(r) {
			if word && !(strip && unicode.Is(unicode.Mn, r)) {
				b = utf8.AppendRune(b, r)
			} else {
				changed = true
			}
			continue
		}
		switch r {
		case '\u2010', '\u2011', '\u2012', '\u2013', '\u2212': // hyphens, en dash, minus
			r, changed = '-', true
		case '\u2018', '\u2019', '\u02BC': // curly and modifier apostrophes
			r, changed = '\'', true
		}
		word = unicode.IsLetter(r) || unicode.IsDigit(r)
		strip = unicode.In(r, unicode.Latin, unicode.Greek, unicode.Cyrillic)
		b = utf8.AppendRune(b, r)
	}
	src := b
	if !changed {
		src = d
	}
	o := sc.o[:0]
	for sc.it.Init(norm.NFC, src); !sc.it.Done(); {
		o = append(o, sc.it.Next()...)
	}
	out := compatJamo(o)
	if max(cap(d), cap(b), cap(o)) <= maxScratch { // keep grown buffers, unless huge
		sc.d, sc.b, sc.o = d[:0], b[:0], o[:0]
	}
	return out
}

// maxScratch bounds the buffers a scratch keeps between calls.
const maxScratch = 64 << 10

// scratch holds normalize's state: a normalising iterator (whose reordering buffer
// would otherwise be allocated per call), the NFKD form, the filtered runes, the NFC form.
type scratch struct {
	it      norm.Iter
	d, b, o []byte
}

// scratchPool recycles scratch buffers, so normalising a field allocates only its result.
var scratchPool = sync.Pool{New: func() any { return new(scratch) }}

// jamoCompat maps each conjoining Hangul jamo that NFKD makes of a compatibility
// jamo (ㄱ → U+1100) back to it, derived from the decomposition table itself:
// on first need (a fifth of a millisecond of every process's init otherwise).
var jamoCompat = sync.OnceValue(func() map[rune]rune {
	m := make(map[rune]rune)
	for r := rune(0x3131); r <= 0x318E; r++ {
		d := []rune(norm.NFKD.String(string(r)))
		if len(d) == 1 && d[0] != r {
			if _, dup := m[d[0]]; !dup {
				m[d[0]] = r
			}
		}
	}
	return m
})

// compatJamo returns b as a string, with the conjoining jamo left over after NFC
// (those typed alone, like ㅋㅋ, which compose into no syllable) rewritten as
// compatibility jamo, so that no term holds a conjoining jamo. Syllables themselves
// were recomposed by NFC.
func compatJamo(b []byte) string {
	i := bytes.IndexFunc(b, isConjoiningJamo)
	if i < 0 {
		return string(b)
	}
	out := append(make([]byte, 0, len(b)), b[:i]...)
	for _, r := range string(b[i:]) {
		if c, ok := jamoCompat()[r]; ok {
			r = c
		}
		out = utf8.AppendRune(out, r)
	}
	return string(out)
}

// isConjoiningJamo reports whether r is in one of the conjoining Hangul jamo blocks.
func isConjoiningJamo(r rune) bool {
	return (r >= 0x1100 && r <= 0x11FF) || (r >= 0xA960 && r <= 0xA97F) || (r >= 0xD7B0 && r <= 0xD7FF)
}

// fold writes the index form of one word or identifier into a.buf and returns it:
// case-folded, apostrophes removed, cut to MaxTokenBytes at a rune boundary.
func (a *analyzer) fold(raw string) []byte {
	if a.ascii || ascii.Is(raw) {
		n := 0
		for i := 0; i < len(raw) && n < MaxTokenBytes; i++ {
			c := raw[i]
			if c == '\'' {
				continue
			}
			if 'A' <= c && c <= 'Z' {
				c += 'a' - 'A'
			}
			a.buf[n] = c
			n++
		}
		return a.buf[:n]
	}
	const maxIn = 4 * MaxTokenBytes // folding never needs more input than this
	if len(raw) > maxIn {
		n := maxIn
		for n > 0 && !utf8.RuneStart(raw[n]) {
			n--
		}
		raw = raw[:n]
	}
	f := foldLetters(folder.String(raw))
	n := len(f)
	if n > MaxTokenBytes {
		n = MaxTokenBytes
		for n > 0 && !utf8.RuneStart(f[n]) {
			n--
		}
	}
	return a.buf[:copy(a.buf[:], f[:n])]
}

// foldLetters removes apostrophes and spells the Latin letters that have no
// decomposition, such as ø and æ, the way English text writes them without one.
func foldLetters(s string) string {
	clean := true
	for _, r := range s {
		if r == '\'' || letterFold(r) != "" {
			clean = false
			break
		}
	}
	if clean {
		return s
	}
	var b strings.Builder
	b.Grow(len(s) + 4)
	for _, r := range s {
		switch f := letterFold(r); {
		case r == '\'':
		case f != "":
			b.WriteString(f)
		default:
			b.WriteRune(r)
		}
	}
	return b.String()
}

// letterFold returns the ASCII spelling of a case-folded Latin letter with a stroke
// or ligature, or "" for any other rune.
func letterFold(r rune) string {
	switch r {
	case 'æ':
		return "ae"
	case 'œ':
		return "oe"
	case 'ø':
		return "o"
	case 'ł':
		return "l"
	case 'đ', 'ð':
		return "d"
	case 'þ':
		return "th"
	case 'ħ':
		return "h"
	case 'ŧ':
		return "t"
	case 'ı':
		return "i"
	}
	return ""
}
