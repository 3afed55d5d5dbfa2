package wordpiece

import (
	"encoding/binary"
	"errors"
	"fmt"
	"strings"
	"unsafe"
)

// table finds a vocabulary token's id by its kind (word-initial, or a
// continuation, looked up without its "##") and text: open addressing over
// the vocabulary with a fixed hash, one array of slots. Its bytes are the
// same in every process, so a model's can be made once (Table) and kept
// next to it, and a process reads them where they lie instead of hashing
// the vocabulary again (BERT's 30,522 tokens: a few milliseconds of CPU and
// fresh pages in every CLI call that embeds).
type table struct {
	vocab []string
	// slots are little-endian uint32s: id+1 of the token in each slot, 0
	// for empty. A table read from Table's bytes (readTable) points into
	// them, often read-only memory: only a table newTable made is written.
	slots []byte
	mask  uint64
}

// tableMagic starts a table's bytes (Table): its format.
const tableMagic = "WPT1"

// tableHeader is the size of what precedes a table's slots: the magic, the
// vocabulary size, the longest keys of each kind and the slot count.
const tableHeader = 4 + 4*4

func newTable(vocab []string) *table {
	n := 16
	for n < 2*len(vocab) {
		n *= 2
	}
	return &table{vocab: vocab, slots: make([]byte, 4*n), mask: uint64(n - 1)}
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

// hashKey hashes a key 8 bytes at a time with fixed constants (a
// multiply-xorshift mix), so that tables are the same in every process.
func hashKey[S string | []byte](cont bool, k S) uint64 {
	h := uint64(len(k))*0x9E3779B97F4A7C15 + 1
	if cont {
		h ^= 0x5bd1e9955bd1e995
	}
	i := 0
	for ; i+8 <= len(k); i += 8 {
		x := uint64(k[i]) | uint64(k[i+1])<<8 | uint64(k[i+2])<<16 | uint64(k[i+3])<<24 |
			uint64(k[i+4])<<32 | uint64(k[i+5])<<40 | uint64(k[i+6])<<48 | uint64(k[i+7])<<56
		h = (h ^ x) * 0xff51afd7ed558ccd
		h ^= h >> 32
	}
	var x uint64
	for j := len(k) - 1; j >= i; j-- {
		x = x<<8 | uint64(k[j])
	}
	h = (h ^ x) * 0xc4ceb9fe1a85ec53
	return h ^ h>>29 // the low bits index the slots: fold the high ones in
}

// slot returns slot i's entry: an id+1, or 0.
func (t *table) slot(i uint64) uint32 { return binary.LittleEndian.Uint32(t.slots[4*i:]) }

// add puts token id in the table; it reports false, adding nothing, when a
// token of the same kind and text is there already. Only for a table being
// built (newTable): it writes the slots in place.
func (t *table) add(id int32) bool {
	cont, k := key(t.vocab[id])
	for i := hashKey(cont, k) & t.mask; ; i = (i + 1) & t.mask {
		s := t.slot(i)
		if s == 0 {
			binary.LittleEndian.PutUint32(t.slots[4*i:], uint32(id)+1)
			return true
		}
		if c, o := key(t.vocab[s-1]); c == cont && o == k {
			return false
		}
	}
}

// find returns the id of the token of the kind and text k.
func (t *table) find(cont bool, k string) (int32, bool) {
	i := hashKey(cont, k) & t.mask
	for range t.mask + 1 { // every slot at most: only a spoilt table read in has no empty one
		s := t.slot(i)
		if s == 0 || int(s) > len(t.vocab) {
			return 0, false
		}
		if tok := t.vocab[s-1]; cont && len(tok) == len(k)+len(continuation) && isCont(tok) && tok[len(continuation):] == k ||
			!cont && tok == k && !isCont(tok) {
			return int32(s - 1), true
		}
		i = (i + 1) & t.mask
	}
	return 0, false
}

// findBytes is find for a key in bytes (no allocation).
func (t *table) findBytes(cont bool, k []byte) (int32, bool) {
	i := hashKey(cont, k) & t.mask
	for range t.mask + 1 {
		s := t.slot(i)
		if s == 0 || int(s) > len(t.vocab) {
			return 0, false
		}
		if tok := t.vocab[s-1]; cont && len(tok) == len(k)+len(continuation) && isCont(tok) && tok[len(continuation):] == string(k) ||
			!cont && tok == string(k) && !isCont(tok) {
			return int32(s - 1), true
		}
		i = (i + 1) & t.mask
	}
	return 0, false
}

// Table returns the lookup table of a vocabulary, for Config.Table: what New
// builds, as bytes to keep next to the model. It fails as New does on an
// empty or duplicate token.
func Table(vocab []string) (string, error) {
	t, maxInit, maxCont, err := buildTable(vocab)
	if err != nil {
		return "", err
	}
	var b []byte
	b = append(b, tableMagic...)
	for _, v := range []int{len(vocab), maxInit, maxCont, int(t.mask + 1)} {
		b = binary.LittleEndian.AppendUint32(b, uint32(v))
	}
	return string(append(b, t.slots...)), nil
}

// buildTable builds the table of vocab and measures its longest keys.
func buildTable(vocab []string) (t *table, maxInit, maxCont int, err error) {
	t = newTable(vocab)
	for i, tok := range vocab {
		if tok == "" {
			return nil, 0, 0, fmt.Errorf("wordpiece: vocabulary entry %d is empty", i)
		}
		if !t.add(int32(i)) {
			return nil, 0, 0, fmt.Errorf("wordpiece: vocabulary entry %d %q is a duplicate", i, tok)
		}
		if cont, k := key(tok); cont {
			maxCont = max(maxCont, len(k))
		} else {
			maxInit = max(maxInit, len(k))
		}
	}
	return t, maxInit, maxCont, nil
}

// errTable is what a table that does not fit its vocabulary fails with.
var errTable = errors.New("wordpiece: the lookup table is not this vocabulary's")

// readTable is the table Table wrote for vocab, read in place: its header is
// checked against the vocabulary's size, the slots are trusted to be that
// vocabulary's (a caller passes only a table made for it and checked by a
// test, as for the model file itself; an entry out of range reads as empty).
func readTable(vocab []string, b string) (t *table, maxInit, maxCont int, err error) {
	if len(b) < tableHeader || b[:4] != tableMagic {
		return nil, 0, 0, errTable
	}
	raw := unsafe.Slice(unsafe.StringData(b), len(b)) // read only
	u := func(i int) uint32 { return binary.LittleEndian.Uint32(raw[4+4*i:]) }
	n, slots := int(u(0)), int(u(3))
	if n != len(vocab) || slots < 2*n || slots&(slots-1) != 0 || len(b) != tableHeader+4*slots {
		return nil, 0, 0, fmt.Errorf("%w: %d tokens in %d slots of %d bytes, the vocabulary has %d", errTable, n, slots, len(b)-tableHeader, len(vocab))
	}
	return &table{vocab: vocab, slots: raw[tableHeader:], mask: uint64(slots - 1)}, int(u(1)), int(u(2)), nil
}
