package memory

import (
	"encoding/json"
	"fmt"
	"sort"
	"strings"
)

// Ids are per-scope namespaces (DESIGN §8): a memory is named by its id within
// its scope, so the same id in two scopes is two memories, and a tenant's id
// never collides with, reveals or blocks another tenant's. Key is that name.
//
// By id, a caller with scope S addresses the memory with that id whose scope
// is exactly S when there is one (its own namespace), else the only memory with
// that id inside S (a parent scope reaches a child's memory); when several lie
// inside S, in different scopes below it, and none is S's own, the id is
// ambiguous (ErrAmbiguous) and the caller names a narrower scope. Writes with
// a full memory (Add, import) name its scope and so are never ambiguous.

// ErrAmbiguous is returned for an id that names several memories inside the
// caller's scope, none of them in the scope itself. It wraps ErrInvalid.
var ErrAmbiguous = errorsJoin(ErrInvalid, "ambiguous id")

// Pick applies the id rule to the scopes of the memories that hold id: the
// index of the one whose scope is exactly scope, else of the only one inside
// scope, else -1 (none). Several inside and none exact is ErrAmbiguous.
// Every backend resolves ids with it, so the rule is written once.
func Pick(id string, scope map[string]string, scopes []map[string]string) (int, error) {
	own := ScopeJSON(scope)
	found, inside := -1, 0
	for i, sc := range scopes {
		if ScopeJSON(sc) == own {
			return i, nil
		}
		if Inside(sc, scope) {
			found, inside = i, inside+1
		}
	}
	if inside > 1 {
		return -1, fmt.Errorf("memory %s: %w: %d memories inside scope %s have this id, none in that scope itself; name the scope of the one meant",
			id, ErrAmbiguous, inside, own)
	}
	return found, nil
}

// ScopeJSON is a scope's canonical text: a JSON object with the keys sorted,
// exactly as encoding/json writes the map ("{}" for none). Two scopes are equal
// when their ScopeJSON is; stores key memories by (id, ScopeJSON).
func ScopeJSON(scope map[string]string) string {
	if len(scope) == 0 {
		return "{}"
	}
	var b strings.Builder
	writeScopeJSON(&b, "", scope)
	return b.String()
}

// writeScopeJSON writes prefix and ScopeJSON(scope) to b, in one allocation.
func writeScopeJSON(b *strings.Builder, prefix string, scope map[string]string) {
	if len(scope) == 0 {
		b.Grow(len(prefix) + 2)
		b.WriteString(prefix)
		b.WriteString("{}")
		return
	}
	var small [4]string
	keys := small[:0]
	n := 2
	for k, v := range scope {
		keys = append(keys, k)
		n += len(k) + len(v) + 6
	}
	if len(keys) > 1 {
		sort.Strings(keys)
	}
	b.Grow(len(prefix) + n)
	b.WriteString(prefix)
	b.WriteByte('{')
	for i, k := range keys {
		if i > 0 {
			b.WriteByte(',')
		}
		writeJSONString(b, k)
		b.WriteByte(':')
		writeJSONString(b, scope[k])
	}
	b.WriteByte('}')
}

// writeJSONString writes s as encoding/json does: plain printable ASCII as it
// is, anything else through the encoder itself (HTML-escaped, invalid UTF-8
// replaced), so the result is byte for byte json.Marshal's.
func writeJSONString(b *strings.Builder, s string) {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c < 0x20 || c > 0x7e || c == '"' || c == '\\' || c == '<' || c == '>' || c == '&' {
			enc, _ := json.Marshal(s)
			b.Write(enc)
			return
		}
	}
	b.WriteByte('"')
	b.WriteString(s)
	b.WriteByte('"')
}

// Key is the store-wide name of the memory with id in scope: the id, a NUL
// (which no id holds) and ScopeJSON(scope). Keys sort by id, then scope.
func Key(id string, scope map[string]string) string {
	var b strings.Builder
	writeScopeJSON(&b, id+"\x00", scope)
	return b.String()
}

// Key is the memory's store-wide name (see the package function Key).
func (m *Memory) Key() string { return Key(m.ID, m.Scope) }

// SplitKey returns a key's id and scope text.
func SplitKey(key string) (id, scopeJSON string) {
	id, scopeJSON, _ = strings.Cut(key, "\x00")
	return id, scopeJSON
}

// Inside reports whether a memory of scope have lies inside scope want: it
// carries every key=value of want.
func Inside(have, want map[string]string) bool {
	for k, v := range want {
		if x, ok := have[k]; !ok || x != v {
			return false
		}
	}
	return true
}

type wrapped struct {
	base error
	msg  string
}

func (e *wrapped) Error() string { return e.base.Error() + ": " + e.msg }
func (e *wrapped) Unwrap() error { return e.base }

func errorsJoin(base error, msg string) error { return &wrapped{base: base, msg: msg} }
