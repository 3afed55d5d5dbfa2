package tokenize

import (
	"unicode"
	"unicode/utf8"
)

// class is what a rune means to the scanner.
type class uint8

const (
	clSep    class = iota // separates tokens: space, punctuation, symbols, emoji
	clLower               // lower-case letter
	clUpper               // upper-case letter
	clLetter              // letter without case (Lo, Lm, Lt)
	clDigit               // decimal digit
	clMark                // combining mark; continues the word before it
	clJoin                // joins identifier parts: _ - . / \ @ = : + & #
	clApos                // apostrophe: inside a word ("don't") or a separator
	clCJK                 // Han, Hiragana, Katakana or Hangul: bigrammed
)

// letter reports whether c is a letter of any case.
func (c class) letter() bool { return c >= clLower && c <= clLetter }

// base reports whether c can start a word: a letter or a digit.
func (c class) base() bool { return c >= clLower && c <= clDigit }

// word reports whether c belongs inside a word: a base or a mark.
func (c class) word() bool { return c >= clLower && c <= clMark }

// asciiClass classifies the ASCII runes without a table search.
var asciiClass = func() (t [utf8.RuneSelf]class) {
	for r := 'a'; r <= 'z'; r++ {
		t[r] = clLower
	}
	for r := 'A'; r <= 'Z'; r++ {
		t[r] = clUpper
	}
	for r := '0'; r <= '9'; r++ {
		t[r] = clDigit
	}
	for _, r := range `_-./\@=:+&#` {
		t[r] = clJoin
	}
	t['\''] = clApos
	return t
}()

// classOf classifies r. Unicode dashes and curly apostrophes never reach it:
// normalisation maps them to their ASCII forms first.
func classOf(r rune) class {
	if r < utf8.RuneSelf {
		return asciiClass[r]
	}
	return classOfRune(r)
}

// classOfRune classifies a non-ASCII rune; classOf stays small enough to inline.
func classOfRune(r rune) class {
	switch {
	case isCJK(r):
		return clCJK
	case unicode.IsLower(r):
		return clLower
	case unicode.IsUpper(r):
		return clUpper
	case unicode.IsLetter(r):
		return clLetter
	case unicode.IsDigit(r):
		return clDigit
	case unicode.IsMark(r):
		return clMark
	}
	return clSep
}

// katakanaLong is the prolonged sound mark (ー), script Common but part of katakana words.
const katakanaLong = '\u30FC'

// isCJK reports whether r is bigrammed rather than split on spaces.
func isCJK(r rune) bool {
	switch {
	case r < 0x1100:
		return false
	case r >= 0x4E00 && r <= 0x9FFF, r >= 0xAC00 && r <= 0xD7A3: // unified Han, Hangul syllables
		return true
	}
	return r == katakanaLong || unicode.In(r, unicode.Han, unicode.Hiragana, unicode.Katakana, unicode.Hangul)
}

// runeAt decodes the rune at s[i:], with the ASCII case inline.
func runeAt(s string, i int) (rune, int) {
	if c := s[i]; c < utf8.RuneSelf {
		return rune(c), 1
	}
	return utf8.DecodeRuneInString(s[i:])
}

// runeBefore decodes the rune that ends at s[:i].
func runeBefore(s string, i int) (rune, int) {
	if c := s[i-1]; c < utf8.RuneSelf {
		return rune(c), 1
	}
	return utf8.DecodeLastRuneInString(s[:i])
}

// classAtSlow classifies the multi-byte rune at s[i:] and returns its width. Hot
// loops classify ASCII bytes through asciiClass themselves and call this otherwise.
func classAtSlow(s string, i int) (class, int) {
	r, w := utf8.DecodeRuneInString(s[i:])
	return classOf(r), w
}
