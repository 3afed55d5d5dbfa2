package wordpiece

import (
	"hash/maphash"
	"strings"
)

// table finds a vocabulary token's id by its kind (word-initial, or a
// continuation, looked up without its "##") and text: open addressing over
// the vocabulary, one slice of ids built in one pass. It replaces two Go
// maps of strings, which took a few milliseconds of every process to build
// (BERT's 30,522 tokens) before its first query.
type table struct {
	vocab []string
	slots []int32 // id+1 of the token in each slot, 0 for empty
	mask  uint64
	seed  maphash.Seed
}

func newTable(vocab []string) *table {
	n := 16
	for n < 2*len(vocab) {
		n *= 2
	}
	return &table{vocab: vocab, slots: make([]int32, n), mask: uint64(n - 1), seed: maphash.MakeSeed()}
}

// isCont reports whether a vocabulary token continues a word ("##x").
func isCont(tok string) bool {
	return len(tok) > len(continuation) && strings.HasPrefix(tok, continuation)
}

// key is the text a token is looked up by: without "##" for a continuation.
func key(tok string) (cont bool, k string) {
	if isCont(tok) {
		return true, tok[len(continuation):]
	}
	return false, tok
}

func (t *table) hash(cont bool, k string) uint64 {
	h := maphash.String(t.seed, k)
	if cont {
		h = h*0x9E3779B97F4A7C15 + 1
	}
	return h
}

// add puts token id in the table; it reports false, adding nothing, when a
// token of the same kind and text is there already.
func (t *table) add(id int32) bool {
	cont, k := key(t.vocab[id])
	for i := t.hash(cont, k) & t.mask; ; i = (i + 1) & t.mask {
		s := t.slots[i]
		if s == 0 {
			t.slots[i] = id + 1
			return true
		}
		if c, o := key(t.vocab[s-1]); c == cont && o == k {
			return false
		}
	}
}

// find returns the id of the token of the kind and text k.
func (t *table) find(cont bool, k string) (int32, bool) {
	for i := t.hash(cont, k) & t.mask; ; i = (i + 1) & t.mask {
		s := t.slots[i]
		if s == 0 {
			return 0, false
		}
		tok := t.vocab[s-1]
		if cont {
			if len(tok) == len(k)+len(continuation) && isCont(tok) && tok[len(continuation):] == k {
				return s - 1, true
			}
		} else if tok == k && !isCont(tok) {
			return s - 1, true
		}
	}
}

// findBytes is find for a key in bytes (no allocation).
func (t *table) findBytes(cont bool, k []byte) (int32, bool) {
	h := maphash.Bytes(t.seed, k)
	if cont {
		h = h*0x9E3779B97F4A7C15 + 1
	}
	for i := h & t.mask; ; i = (i + 1) & t.mask {
		s := t.slots[i]
		if s == 0 {
			return 0, false
		}
		tok := t.vocab[s-1]
		if cont {
			if len(tok) == len(k)+len(continuation) && isCont(tok) && tok[len(continuation):] == string(k) {
				return s - 1, true
			}
		} else if tok == string(k) && !isCont(tok) {
			return s - 1, true
		}
	}
}
