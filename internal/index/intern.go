package index

// Interning what many memories share. The index never changes a memory it
// holds (a change replaces the pointer), so memories of one scope can share
// one Scope map and those of one model one Embedding: at a million memories
// of a few scopes, that is a map and a struct fewer a memory (some 350 bytes).

import (
	"encoding/binary"

	"github.com/engram-memory/engram/memory"
)

type embedKey struct {
	model string
	dim   int
}

// embeddingOf returns the shared description (no vector) of model's dim-d
// embeddings.
func (ix *Index) embeddingOf(model string, dim int) *memory.Embedding {
	k := embedKey{model, dim}
	if e := ix.embeds[k]; e != nil {
		return e
	}
	e := &memory.Embedding{Model: model, Dim: dim}
	ix.embeds[k] = e
	return e
}

// internScope returns the shared map equal to scope (nil and empty maps are
// kept as they are: the store tells them apart).
func (ix *Index) internScope(scope map[string]string) map[string]string {
	if len(scope) == 0 {
		return scope
	}
	pairs := make([]string, 0, 2*len(scope))
	for k, v := range scope {
		pairs = append(pairs, k, v)
	}
	sortPairs(pairs)
	var key []byte
	return ix.scopeOf(pairs, &key)
}

// scopeOf returns the shared scope of the key/value pairs (sorted by key),
// building it on first sight; key is scratch space. Lookups allocate nothing.
func (ix *Index) scopeOf(pairs []string, key *[]byte) map[string]string {
	if len(pairs) == 0 {
		return map[string]string{}
	}
	b := (*key)[:0]
	for _, p := range pairs {
		b = binary.AppendUvarint(b, uint64(len(p)))
		b = append(b, p...)
	}
	*key = b
	if s, ok := ix.scopes[string(b)]; ok {
		return s
	}
	s := make(map[string]string, len(pairs)/2)
	for i := 0; i+1 < len(pairs); i += 2 {
		s[pairs[i]] = pairs[i+1]
	}
	ix.scopes[string(b)] = s
	return s
}

// sortPairs sorts key/value pairs by key (insertion sort: scopes have a few).
func sortPairs(p []string) {
	for i := 2; i < len(p); i += 2 {
		for j := i; j >= 2 && p[j] < p[j-2]; j -= 2 {
			p[j], p[j-2] = p[j-2], p[j]
			p[j+1], p[j-1] = p[j-1], p[j+1]
		}
	}
}
