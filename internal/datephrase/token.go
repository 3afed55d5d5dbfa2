package datephrase

// The tokenizer cuts a text into runs of ASCII letters and digits, single
// punctuation marks and single other runes (Han characters, fullwidth digits),
// remembering for each whether whitespace precedes it. English rules walk these
// tokens; Chinese rules start at them and read the text itself.

import (
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// tokKind is what a token is to the English rules.
type tokKind uint8

const (
	tokOther   tokKind = iota // nothing a rule reads: letters mixed with digits, "T10"
	tokWord                   // ASCII letters
	tokNum                    // ASCII digits
	tokOrd                    // digits with an ordinal suffix: 9th, 1st
	tokDecade                 // digits with a plural s: 1990s, 90s
	tokQuarter                // q1 … q4
	tokPunct                  // one punctuation mark; curly quotes and dashes folded to ASCII
	tokWide                   // one other non-ASCII rune
)

// maxNumDigits bounds the digit runs read as numbers: no date part or count
// needs more, and longer runs never overflow.
const maxNumDigits = 6

// maxWordLen is the longest vocabulary word ("seventeenth"); longer words are not looked up.
const maxWordLen = 11

type token struct {
	start, end int
	val        int // the digits' value (tokNum, tokOrd, tokDecade, tokQuarter); -1 past maxNumDigits
	digits     int // leading digits
	lex        lex // the vocabulary entry of a tokWord
	kind       tokKind
	punct      byte // the mark of a tokPunct
	space      bool // whitespace or the start of the text precedes it
	glued      bool // a tokNum directly followed by a Han character, as in "2023年": Chinese, not English
}

// bytesPerToken sizes the token slice once from the text's length: a Han
// character is three bytes and a token; English averages a token per four to
// five bytes.
const bytesPerToken = 3

func tokenize(text string) []token {
	toks := make([]token, 0, len(text)/bytesPerToken+1)
	space := true
	for i := 0; i < len(text); {
		c := text[i]
		switch {
		case c >= utf8.RuneSelf:
			r, size := utf8.DecodeRuneInString(text[i:])
			switch p := foldPunct(r); {
			case unicode.IsSpace(r):
				space = true
			case p != 0:
				toks = append(toks, token{start: i, end: i + size, kind: tokPunct, punct: p, space: space})
				space = false
			default:
				if n := len(toks); n > 0 && toks[n-1].end == i && toks[n-1].kind == tokNum && unicode.Is(unicode.Han, r) {
					toks[n-1].glued = true
				}
				toks = append(toks, token{start: i, end: i + size, kind: tokWide, space: space})
				space = false
			}
			i += size
		case isSpaceByte(c):
			space = true
			i++
		case isAlnum(c):
			j := alnumEnd(text, i)
			toks = append(toks, classify(text[i:j], i, space))
			space = false
			i = j
		default:
			toks = append(toks, token{start: i, end: i + 1, kind: tokPunct, punct: c, space: space})
			space = false
			i++
		}
	}
	return toks
}

// alnumEnd is the end of the run of ASCII letters and digits at i. A run of
// digits stops before a T and a digit, so that "2023-02-09T10:00" ends its date
// at "09".
func alnumEnd(s string, i int) int {
	j, onlyDigits := i, true
	for ; j < len(s) && isAlnum(s[j]); j++ {
		if isDigit(s[j]) {
			continue
		}
		if onlyDigits && j > i && (s[j] == 'T' || s[j] == 't') && j+1 < len(s) && isDigit(s[j+1]) {
			break
		}
		onlyDigits = false
	}
	return j
}

// classify makes the token of the alphanumeric run s at start.
func classify(s string, start int, space bool) token {
	t := token{start: start, end: start + len(s), space: space, val: -1}
	nd := 0
	for nd < len(s) && isDigit(s[nd]) {
		nd++
	}
	t.digits = nd
	switch {
	case nd == len(s):
		t.kind, t.val = tokNum, digitValue(s)
	case nd > 0:
		t.val = digitValue(s[:nd])
		switch suffix := s[nd:]; {
		case strings.EqualFold(suffix, "st"), strings.EqualFold(suffix, "nd"),
			strings.EqualFold(suffix, "rd"), strings.EqualFold(suffix, "th"):
			t.kind = tokOrd
		case strings.EqualFold(suffix, "s"):
			t.kind = tokDecade
		}
	case len(s) == 2 && (s[0] == 'q' || s[0] == 'Q') && s[1] >= '1' && s[1] <= '4':
		t.kind, t.val = tokQuarter, int(s[1]-'0')
	case allLetters(s):
		t.kind, t.lex = tokWord, lookupWord(s)
	}
	return t
}

// digitValue is the value of the digits s, or -1 when there are more than maxNumDigits.
func digitValue(s string) int {
	if len(s) > maxNumDigits {
		return -1
	}
	v, err := strconv.Atoi(s)
	if err != nil {
		return -1
	}
	return v
}

// lookupWord finds the ASCII word s, in any case, in the vocabulary.
func lookupWord(s string) lex {
	if len(s) > maxWordLen {
		return lex{}
	}
	var buf [maxWordLen]byte
	for i := range len(s) {
		c := s[i]
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		buf[i] = c
	}
	return lookup(string(buf[:len(s)]))
}

// foldPunct maps the typographic marks English dates use to their ASCII
// forms: curly apostrophes ('90s), dashes (2020–2023) and the fullwidth comma.
// Other runes give 0.
func foldPunct(r rune) byte {
	switch r {
	case '\u2018', '\u2019', '\u02bc':
		return '\''
	case '\u2010', '\u2011', '\u2012', '\u2013', '\u2014', '\u2212':
		return '-'
	case '\uff0c':
		return ','
	}
	return 0
}

func isDigit(c byte) bool { return '0' <= c && c <= '9' }

func isLetter(c byte) bool { return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' }

func isAlnum(c byte) bool { return isDigit(c) || isLetter(c) }

func isSpaceByte(c byte) bool {
	switch c {
	case ' ', '\t', '\n', '\v', '\f', '\r':
		return true
	}
	return false
}

func allLetters(s string) bool {
	for i := range len(s) {
		if !isLetter(s[i]) {
			return false
		}
	}
	return true
}
