package wordpiece

import "sort"

// How the uncased BERT normaliser (clean text, CJK split, NFD accent
// stripping, lower-casing) and pre-tokenizer treat one code point. The tables
// in tables.go are generated from Hugging Face tokenizers itself, so the
// result does not depend on the Unicode version of Go's own tables.

type kind uint8

const (
	kindKeep    kind = iota // unchanged (not in any span)
	kindRemove              // control, format and private-use characters, U+0000, U+FFFD
	kindSpace               // whitespace: ends a word
	kindIsolate             // CJK ideographs: a word of their own
	kindMap                 // replaced by its entry in mapped (lower-cased, accents stripped)
	kindHangul              // a Hangul syllable: decomposed into its jamo
)

type span struct {
	lo, hi rune
	kind   kind
}

type runeRange struct{ lo, hi rune }

type mapping struct {
	r  rune
	to string
}

// ASCII classes, looked up without a search.
const (
	asciiLetter uint8 = iota // part of a word; asciiLower holds its lower-case form
	asciiRemove
	asciiSpace
	asciiPunct
)

var (
	asciiClass [128]uint8
	asciiLower [128]byte
)

func init() {
	for c := rune(0); c < 128; c++ {
		b := byte(c)
		switch kindOf(c) {
		case kindRemove:
			asciiClass[c] = asciiRemove
		case kindSpace:
			asciiClass[c] = asciiSpace
		case kindMap:
			to := mappedTo(c)
			if len(to) != 1 || to[0] >= 128 || inPunct(rune(to[0])) {
				panic("wordpiece: ASCII mapping that is not a letter's case") // tables.go is broken
			}
			b = to[0]
		case kindKeep:
			// The normaliser keeps ' ' (it turns every other space into one);
			// the pre-tokenizer splits on it.
			if c == ' ' {
				asciiClass[c] = asciiSpace
			} else if inPunct(c) {
				asciiClass[c] = asciiPunct
			}
		default:
			panic("wordpiece: unexpected kind for an ASCII character")
		}
		asciiLower[c] = b
	}
}

// kindOf returns what the normaliser does to r.
func kindOf(r rune) kind {
	i := sort.Search(len(spans), func(i int) bool { return spans[i].hi >= r })
	if i < len(spans) && spans[i].lo <= r {
		return spans[i].kind
	}
	return kindKeep
}

// mappedTo returns the replacement of a kindMap code point.
func mappedTo(r rune) string {
	i := sort.Search(len(mapped), func(i int) bool { return mapped[i].r >= r })
	if i < len(mapped) && mapped[i].r == r {
		return mapped[i].to
	}
	return string(r) // not reached for a kindMap code point
}

// isPunct reports whether the pre-tokenizer splits r off as its own word.
func isPunct(r rune) bool {
	if r < 128 {
		return asciiClass[r] == asciiPunct
	}
	return inPunct(r)
}

// inPunct searches the punctuation table.
func inPunct(r rune) bool {
	i := sort.Search(len(punct), func(i int) bool { return punct[i].hi >= r })
	return i < len(punct) && punct[i].lo <= r
}

// Hangul syllable decomposition (Unicode §3.12), the NFD the normaliser applies.
const (
	hangulBase  = 0xAC00
	jamoLead    = 0x1100
	jamoVowel   = 0x1161
	jamoTail    = 0x11A7
	vowelCount  = 21
	tailCount   = 28
	blockLength = vowelCount * tailCount
)

// hangul returns the jamo of syllable r; tail is 0 when it has none.
func hangul(r rune) (lead, vowel, tail rune) {
	s := r - hangulBase
	lead = jamoLead + s/blockLength
	vowel = jamoVowel + (s%blockLength)/tailCount
	if t := s % tailCount; t != 0 {
		tail = jamoTail + t
	}
	return lead, vowel, tail
}
