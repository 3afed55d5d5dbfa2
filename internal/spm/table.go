package spm

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math/bits"
)

// The piece lookup: piece → id in a fixed open-addressing hash (FNV-1a,
// linear probing, at most half full) of little-endian uint32 slots holding
// id+1, 0 for empty. New builds it from the pieces, or uses one Table made
// ahead, in place: an XLM-R vocabulary has 250,002 pieces, and hashing them
// into a Go map took about 30 ms of every process that embedded a query.

const (
	tableMagic  = "SPT1"
	tableHeader = len(tableMagic) + 3*4 // magic, pieces, longest piece in bytes, slots
)

// errTable is what a table that does not fit its pieces fails with.
var errTable = errors.New("spm: the lookup table is not this vocabulary's")

type table struct {
	pieces []string
	slots  string // 4 bytes a slot
	mask   uint64
}

// fnv is FNV-1a, 64-bit: fixed, so that a table made ahead stays valid.
func fnv[S string | []byte](s S) uint64 {
	h := fnvOffset
	for i := 0; i < len(s); i++ {
		h = fnvAdd(h, s[i])
	}
	return h
}

// fnvOffset is FNV-1a's hash of no bytes; fnvAdd extends a hash by a byte,
// so the hashes of a string's prefixes come one from the other.
const fnvOffset = uint64(14695981039346656037)

func fnvAdd(h uint64, c byte) uint64 { return (h ^ uint64(c)) * 1099511628211 }

func (t *table) slot(i uint64) uint32 {
	s := t.slots[4*i : 4*i+4]
	return uint32(s[0]) | uint32(s[1])<<8 | uint32(s[2])<<16 | uint32(s[3])<<24
}

// find returns the id of piece k. An entry out of range reads as empty, and
// a probe ends after every slot, so a damaged table cannot run away.
func (t *table) find(k []byte) (int32, bool) { return t.findHash(k, fnv(k)) }

// findHash is find with k's hash, fnv(k), known.
func (t *table) findHash(k []byte, h uint64) (int32, bool) {
	i := h & t.mask
	for range t.mask + 1 {
		v := t.slot(i)
		if v == 0 || int(v-1) >= len(t.pieces) {
			return 0, false
		}
		if t.pieces[v-1] == string(k) {
			return int32(v - 1), true
		}
		i = (i + 1) & t.mask
	}
	return 0, false
}

// buildTable hashes the usable pieces (not empty, not the unknown piece,
// the first of duplicates) and returns the slots, how many it holds and the
// longest piece in bytes (at least 1).
func buildTable(pieces []string, unknown int32) (slots []byte, mask uint64, n, longest int) {
	usable, longest := 0, 1
	for i, p := range pieces {
		longest = max(longest, len(p))
		if p != "" && int32(i) != unknown {
			usable++
		}
	}
	size := uint64(1) << bits.Len(uint(2*max(usable, 1)-1)) // at least twice the pieces
	mask = size - 1
	slots = make([]byte, 4*size)
	for i, p := range pieces {
		if p == "" || int32(i) == unknown {
			continue
		}
		j := fnv(p) & mask
		for {
			v := binary.LittleEndian.Uint32(slots[4*j:])
			if v == 0 {
				binary.LittleEndian.PutUint32(slots[4*j:], uint32(i)+1)
				n++
				break
			}
			if pieces[v-1] == p {
				break // a duplicate: the first keeps its id
			}
			j = (j + 1) & mask
		}
	}
	return slots, mask, n, longest
}

// Table returns the lookup table New builds for pieces and the unknown id,
// as bytes to keep next to the model (Config.Table).
func Table(pieces []string, unknown int32) string {
	slots, mask, _, longest := buildTable(pieces, unknown)
	var b []byte
	b = append(b, tableMagic...)
	for _, v := range []int{len(pieces), longest, int(mask + 1)} {
		b = binary.LittleEndian.AppendUint32(b, uint32(v))
	}
	return string(append(b, slots...))
}

// readTable is the table Table wrote for pieces, read in place, and the
// longest piece it records: the header is checked against the pieces'
// number and the slots' size; the slots are trusted to be these pieces'
// (a caller passes only a table made for them and checked by a test, as
// for the model file itself).
func readTable(pieces []string, b string) (*table, int, error) {
	if len(b) < tableHeader || b[:len(tableMagic)] != tableMagic {
		return nil, 0, fmt.Errorf("%w: %d bytes without its %q header", errTable, len(b), tableMagic)
	}
	h := []byte(b[len(tableMagic):tableHeader])
	n, longest, size := binary.LittleEndian.Uint32(h), binary.LittleEndian.Uint32(h[4:]), binary.LittleEndian.Uint32(h[8:])
	if int(n) != len(pieces) || size == 0 || size&(size-1) != 0 || uint64(len(b)-tableHeader) != 4*uint64(size) || longest == 0 {
		return nil, 0, fmt.Errorf("%w: %d pieces and %d slots in %d bytes, for %d pieces", errTable, n, size, len(b), len(pieces))
	}
	return &table{pieces: pieces, slots: b[tableHeader:], mask: uint64(size) - 1}, int(longest), nil
}
