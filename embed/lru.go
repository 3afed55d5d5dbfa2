package embed

import (
	"container/list"
	"context"
	"errors"
	"slices"
	"sync"
)

// LRU is an in-memory Cache holding at most a fixed number of vectors, evicting
// the least recently used. It stores and returns copies, so callers may modify
// what they pass in or get back. It is safe for concurrent use.
type LRU struct {
	mu       sync.Mutex
	capacity int
	items    map[lruKey]*list.Element
	order    *list.List // front is the most recently used; values are *lruEntry
}

type lruKey struct{ model, hash string }

type lruEntry struct {
	key lruKey
	vec []float32
}

var _ Cache = (*LRU)(nil)

// NewLRU returns an empty LRU holding up to capacity vectors. A capacity below
// one gives a cache that stores nothing.
func NewLRU(capacity int) *LRU {
	capacity = max(capacity, 0)
	return &LRU{
		capacity: capacity,
		items:    make(map[lruKey]*list.Element, min(capacity, 1<<16)),
		order:    list.New(),
	}
}

// GetEmbedding returns a copy of the vector for (model, hash), marking it
// recently used. It never fails.
func (l *LRU) GetEmbedding(_ context.Context, model, hash string) ([]float32, bool, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	el, ok := l.items[lruKey{model, hash}]
	if !ok {
		return nil, false, nil
	}
	l.order.MoveToFront(el)
	return slices.Clone(el.Value.(*lruEntry).vec), true, nil
}

// PutEmbedding stores a copy of v for (model, hash), evicting the least
// recently used vector when full. An empty v is an error.
func (l *LRU) PutEmbedding(_ context.Context, model, hash string, v []float32) error {
	if len(v) == 0 {
		return errors.New("lru cache: empty vector")
	}
	if l.capacity == 0 {
		return nil
	}
	k := lruKey{model, hash}
	vec := slices.Clone(v)
	l.mu.Lock()
	defer l.mu.Unlock()
	if el, ok := l.items[k]; ok {
		el.Value.(*lruEntry).vec = vec
		l.order.MoveToFront(el)
		return nil
	}
	if l.order.Len() >= l.capacity {
		oldest := l.order.Back()
		l.order.Remove(oldest)
		delete(l.items, oldest.Value.(*lruEntry).key)
	}
	l.items[k] = l.order.PushFront(&lruEntry{key: k, vec: vec})
	return nil
}

// Len returns the number of vectors held.
func (l *LRU) Len() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.order.Len()
}
