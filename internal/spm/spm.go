// Package spm is a SentencePiece unigram tokenizer with a per-character
// normaliser, as XLM-RoBERTa models (multilingual-e5) use it: the text is
// normalised, runs of spaces collapse, words are marked with "▁", and the
// segmentation with the highest total piece score is found by Viterbi.
package spm

import (
	"errors"
	"fmt"
)

// Meta is the SentencePiece word marker, U+2581, that stands for a space.
const Meta = '\u2581'

// Config describes a model. Pieces and Scores are parallel; Norm maps a code
// point to its replacement (possibly none: the character is dropped).
type Config struct {
	Pieces []string
	Scores []float32
	Norm   map[rune][]rune
	// Unknown is the id of a character no piece covers.
	Unknown int32
	// Table, when set, is the pieces' lookup table made ahead by Table,
	// used in place; New builds it otherwise.
	Table string
}

// Tokenizer segments text into piece ids. It is safe for concurrent use.
type Tokenizer struct {
	ids      *table
	scores   []float32
	norm     map[rune][]rune
	unk      int32
	unkScore float32 // a character no piece covers: the lowest score less 10
	maxBytes int     // the longest piece, in bytes
}

// New builds a tokenizer; the first of two identical pieces keeps its id.
func New(c Config) (*Tokenizer, error) {
	if len(c.Pieces) == 0 || len(c.Pieces) != len(c.Scores) {
		return nil, fmt.Errorf("spm: %d pieces and %d scores", len(c.Pieces), len(c.Scores))
	}
	if c.Unknown < 0 || int(c.Unknown) >= len(c.Pieces) {
		return nil, fmt.Errorf("spm: unknown id %d outside 0..%d", c.Unknown, len(c.Pieces)-1)
	}
	t := &Tokenizer{scores: c.Scores, norm: c.Norm, unk: c.Unknown}
	if c.Table != "" {
		tab, longest, err := readTable(c.Pieces, c.Table)
		if err != nil {
			return nil, err
		}
		t.ids, t.maxBytes = tab, longest
	} else {
		slots, mask, n, longest := buildTable(c.Pieces, c.Unknown)
		if n == 0 {
			return nil, errors.New("spm: no usable piece")
		}
		t.ids, t.maxBytes = &table{pieces: c.Pieces, slots: string(slots), mask: mask}, longest
	}
	low := c.Scores[0]
	for _, s := range c.Scores {
		low = min(low, s)
	}
	t.unkScore = low - 10
	return t, nil
}

// Size is the number of piece ids: every id Encode returns is below it.
func (t *Tokenizer) Size() int { return len(t.scores) }

// Encode appends the piece ids of text to dst, with no start or end marker.
// Bytes that are not UTF-8 are read as the code point of their value, as the
// model's reference engine reads them.
func (t *Tokenizer) Encode(dst []int32, text string) []int32 {
	buf, starts := t.normalize(text)
	n := len(starts) - 1
	best := make([]float32, n+1)
	piece := make([]int32, n+1) // best path's last piece into each position; -1: unknown
	from := make([]int32, n+1)
	for i := 1; i <= n; i++ {
		best[i] = -1e30
	}
	for i := 0; i < n; i++ {
		if best[i] <= -1e29 {
			continue
		}
		b := starts[i]
		h, p := fnvOffset, b // the hash of buf[b:p]
		for e := i + 1; e <= n && starts[e]-b <= t.maxBytes; e++ {
			for ; p < starts[e]; p++ {
				h = fnvAdd(h, buf[p])
			}
			id, ok := t.ids.findHash(buf[b:starts[e]], h)
			if !ok {
				continue
			}
			if s := best[i] + t.scores[id]; s > best[e] {
				best[e], piece[e], from[e] = s, id, int32(i)
			}
		}
		if s := best[i] + t.unkScore; s > best[i+1] {
			best[i+1], piece[i+1], from[i+1] = s, -1, int32(i)
		}
	}
	k := len(dst)
	for i := n; i > 0; i = int(from[i]) {
		id := piece[i]
		if id < 0 {
			id = t.unk
		}
		dst = append(dst, id)
	}
	for l, r := k, len(dst)-1; l < r; l, r = l+1, r-1 {
		dst[l], dst[r] = dst[r], dst[l]
	}
	return dst
}

// normalize returns text normalised and marked, as UTF-8, and the byte
// offset of each of its characters followed by its length: every code point
// replaced by its normal form, runs of spaces collapsed to one, a space put
// in front unless one is there, and every space written as Meta.
func (t *Tokenizer) normalize(text string) (buf []byte, starts []int) {
	cps := make([]rune, 0, len(text)+1)
	for i := 0; i < len(text); {
		r, n := decode(text[i:])
		i += n
		if rep, ok := t.norm[r]; ok {
			for _, c := range rep {
				if c != ' ' || len(cps) == 0 || cps[len(cps)-1] != ' ' {
					cps = append(cps, c)
				}
			}
			continue
		}
		if r != ' ' || len(cps) == 0 || cps[len(cps)-1] != ' ' {
			cps = append(cps, r)
		}
	}
	buf = make([]byte, 0, 4*len(cps)+3)
	starts = make([]int, 0, len(cps)+2)
	if len(cps) == 0 || cps[0] != ' ' {
		starts = append(starts, 0)
		buf = encode(buf, Meta)
	}
	for _, r := range cps {
		starts = append(starts, len(buf))
		if r == ' ' {
			r = Meta
		}
		buf = encode(buf, r)
	}
	return buf, append(starts, len(buf))
}

// decode reads one code point from the start of s (not empty) by its lead
// byte alone: continuation bytes are not checked, and a byte that starts no
// sequence that fits is its own value.
func decode(s string) (rune, int) {
	c := rune(s[0])
	switch {
	case c < 0x80:
		return c, 1
	case c>>5 == 0x6 && len(s) >= 2:
		return (c&0x1f)<<6 | rune(s[1])&0x3f, 2
	case c>>4 == 0xe && len(s) >= 3:
		return (c&0x0f)<<12 | (rune(s[1])&0x3f)<<6 | rune(s[2])&0x3f, 3
	case c>>3 == 0x1e && len(s) >= 4:
		return (c&0x07)<<18 | (rune(s[1])&0x3f)<<12 | (rune(s[2])&0x3f)<<6 | rune(s[3])&0x3f, 4
	}
	return c, 1
}

// encode appends r in UTF-8's bit layout, whatever its value (surrogates and
// values past U+10FFFF included: decode can produce them).
func encode(b []byte, r rune) []byte {
	u := uint32(r)
	switch {
	case u < 0x80:
		return append(b, byte(u))
	case u < 0x800:
		return append(b, 0xc0|byte(u>>6), 0x80|byte(u&0x3f))
	case u < 0x10000:
		return append(b, 0xe0|byte(u>>12), 0x80|byte(u>>6&0x3f), 0x80|byte(u&0x3f))
	}
	return append(b, 0xf0|byte(u>>18&0x07), 0x80|byte(u>>12&0x3f), 0x80|byte(u>>6&0x3f), 0x80|byte(u&0x3f))
}
