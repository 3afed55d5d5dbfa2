package bm25

// The term dictionary: term → id by open addressing over the ids, the names
// themselves kept in Index.names. A slot is 8 bytes (32 bits of the term's
// hash and id+1), against about 40 for a Go map entry, and a lookup compares
// hash bits before it compares a name. Deletion shifts the following run
// back, so no tombstones build up under churn.

import "hash/maphash"

// dict maps the live terms of names to their ids.
type dict struct {
	seed  maphash.Seed
	slots []uint64 // hash<<32 | id+1; 0 is an empty slot; len a power of two
	n     int      // live entries
	weak  uint32   // tests: when non-zero, hashes are masked to these bits
}

func newDict(capacity int) dict {
	d := dict{seed: maphash.MakeSeed()}
	d.resize(capacity)
	return d
}

// hash32 is the 32 bits of t's hash a slot keeps; its low bits pick the home.
func (d *dict) hash32(t string) uint32 {
	h := uint32(maphash.String(d.seed, t) >> 32)
	if d.weak != 0 {
		h &= d.weak
	}
	return h
}

// resize rebuilds the table for at least capacity entries at load <= 3/4.
func (d *dict) resize(capacity int) {
	size := 8
	for size*3 < capacity*4 {
		size <<= 1
	}
	old := d.slots
	d.slots = make([]uint64, size)
	// Written before the probes read it: a fresh page read first maps the
	// zero page and faults again at the first write, with a TLB flush on
	// every core (0.08 s of CPU at 1M memories).
	clear(d.slots)
	mask := uint32(size - 1)
	for _, e := range old {
		if e == 0 {
			continue
		}
		i := uint32(e>>32) & mask
		for d.slots[i] != 0 {
			i = (i + 1) & mask
		}
		d.slots[i] = e
	}
}

// find returns t's id.
func (d *dict) find(names []string, t string) (uint32, bool) {
	if d.n == 0 {
		return 0, false
	}
	h := d.hash32(t)
	mask := uint32(len(d.slots) - 1)
	for i := h & mask; ; i = (i + 1) & mask {
		e := d.slots[i]
		if e == 0 {
			return 0, false
		}
		if uint32(e>>32) == h {
			if id := uint32(e) - 1; names[id] == t {
				return id, true
			}
		}
	}
}

// insert adds t (absent) with id.
func (d *dict) insert(t string, id uint32) {
	if (d.n+1)*4 > len(d.slots)*3 {
		d.resize(2 * (d.n + 1))
	}
	h := d.hash32(t)
	mask := uint32(len(d.slots) - 1)
	i := h & mask
	for d.slots[i] != 0 {
		i = (i + 1) & mask
	}
	d.slots[i] = uint64(h)<<32 | uint64(id+1)
	d.n++
}

// remove deletes t, which has id, shifting back the entries after it that
// may move closer to their home slot.
func (d *dict) remove(t string, id uint32) {
	mask := uint32(len(d.slots) - 1)
	want := uint64(id + 1)
	i := d.hash32(t) & mask
	for uint32(d.slots[i]) != uint32(want) {
		if d.slots[i] == 0 {
			return // absent
		}
		i = (i + 1) & mask
	}
	for j := (i + 1) & mask; d.slots[j] != 0; j = (j + 1) & mask {
		home := uint32(d.slots[j]>>32) & mask
		// Move j's entry into the hole at i unless its home lies in (i, j].
		if (j-home)&mask >= (j-i)&mask {
			d.slots[i] = d.slots[j]
			i = j
		}
	}
	d.slots[i] = 0
	d.n--
	if len(d.slots) > 64 && d.n*8 < len(d.slots) {
		d.resize(2 * d.n)
	}
}

// add inserts t with id unless t is already present, reporting whether it
// inserted: one walk finds both t and the slot it would take.
func (d *dict) add(names []string, t string, id uint32) bool {
	if (d.n+1)*4 > len(d.slots)*3 {
		d.resize(2 * (d.n + 1))
	}
	h := d.hash32(t)
	mask := uint32(len(d.slots) - 1)
	i := h & mask
	for ; d.slots[i] != 0; i = (i + 1) & mask {
		if e := d.slots[i]; uint32(e>>32) == h && names[uint32(e)-1] == t {
			return false
		}
	}
	d.slots[i] = uint64(h)<<32 | uint64(id+1)
	d.n++
	return true
}
