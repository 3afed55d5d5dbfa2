package tokenize

import (
	"sync"
	"sync/atomic"
)

// The term cache maps a folded word to its entry (stem and stopword flag), so that
// each distinct word is stemmed once rather than at every occurrence. Reads, nearly
// all of its traffic once warm, take no lock: each shard publishes an immutable map
// through an atomic pointer. New entries go into a locked map that holds the
// published entries too, and which is published in its turn once lookups have
// missed the published map as many times as it has entries (the sync.Map
// amortisation). A shard that reaches its share of the capacity starts empty again,
// which costs a few recomputed stems and keeps memory flat however large the corpus.

// cacheShards splits the cache so that concurrent writers rarely meet on a lock.
const cacheShards = 64

type termCache struct {
	limit  int // entries per shard
	shards [cacheShards]cacheShard
}

type cacheShard struct {
	read   atomic.Pointer[map[string]entry] // published, never written again; nil when empty
	mu     sync.Mutex
	dirty  map[string]entry // read's entries and newer ones; nil right after publishing
	misses int              // lookups that missed read since it was published
	_      [24]byte         // keep neighbouring shards off one cache line
}

// newTermCache returns a cache holding at most about size entries.
func newTermCache(size int) *termCache {
	return &termCache{limit: max(1, size/cacheShards)}
}

// shard returns the shard for a key hash.
func (c *termCache) shard(h uint32) *cacheShard { return &c.shards[h%cacheShards] }

// get looks key up without locking or allocating; h must be hashBytes(key).
func (c *termCache) get(h uint32, key []byte) (entry, bool) {
	if m := c.shard(h).read.Load(); m != nil {
		e, ok := (*m)[string(key)]
		return e, ok
	}
	return entry{}, false
}

// getLocked looks key up among the entries not yet published, counting the miss.
func (c *termCache) getLocked(h uint32, key []byte) (entry, bool) {
	s := c.shard(h)
	s.mu.Lock()
	e, ok := s.dirty[string(key)]
	s.missLocked()
	s.mu.Unlock()
	return e, ok
}

// put stores e under key; h must be the hash of key.
func (c *termCache) put(h uint32, key string, e entry) {
	s := c.shard(h)
	s.mu.Lock()
	switch {
	case len(s.dirty) >= c.limit || (s.dirty == nil && s.size() >= c.limit):
		s.dirty = make(map[string]entry)
		s.read.Store(nil)
		s.misses = 0
	case s.dirty == nil:
		s.dirty = make(map[string]entry, s.size()+1)
		if m := s.read.Load(); m != nil {
			for k, v := range *m {
				s.dirty[k] = v
			}
		}
	}
	s.dirty[key] = e
	s.mu.Unlock()
}

// missLocked counts a miss of the published map and publishes dirty once the
// misses have paid for the copy that the next put will make.
func (s *cacheShard) missLocked() {
	s.misses++
	if s.dirty == nil || s.misses < len(s.dirty) {
		return
	}
	m := s.dirty
	s.read.Store(&m)
	s.dirty, s.misses = nil, 0
}

// size returns the shard's entry count; the caller holds mu.
func (s *cacheShard) size() int {
	if s.dirty != nil {
		return len(s.dirty)
	}
	if m := s.read.Load(); m != nil {
		return len(*m)
	}
	return 0
}

// len returns the number of cached entries.
func (c *termCache) len() int {
	n := 0
	for i := range c.shards {
		s := &c.shards[i]
		s.mu.Lock()
		n += s.size()
		s.mu.Unlock()
	}
	return n
}

// hashBytes is 32-bit FNV-1a, inline so that a lookup allocates nothing.
func hashBytes(b []byte) uint32 {
	h := uint32(2166136261)
	for _, c := range b {
		h ^= uint32(c)
		h *= 16777619
	}
	return h
}
