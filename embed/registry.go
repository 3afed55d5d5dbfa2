package embed

import (
	"errors"
	"fmt"
	"iter"
	"slices"
	"strings"
	"sync"
)

// Builtin is the name the offline default model registers under: the
// embedder a store gets when its options name none. Package embed/builtin
// registers it (and each built-in model by its own name) in init, so only a
// program that imports it carries the models' weights.
const Builtin = "builtin"

// ErrNotRegistered is returned by Open for a name no imported package
// registered.
var ErrNotRegistered = errors.New("no embedder registered under this name")

var (
	registryMu sync.RWMutex
	registry   = map[string]func() (Embedder, error){}
)

// Register makes an embedder available to Open by name (case-insensitive).
// A package of models calls it from init. Registering a name twice, an empty
// name or a nil function panics: it is a program's mistake, made at start.
func Register(name string, open func() (Embedder, error)) {
	key := strings.ToLower(strings.TrimSpace(name))
	if key == "" || open == nil {
		panic(fmt.Sprintf("embed: Register(%q) with an empty name or a nil function", name))
	}
	registryMu.Lock()
	defer registryMu.Unlock()
	if _, dup := registry[key]; dup {
		panic("embed: Register called twice for " + key)
	}
	registry[key] = open
}

// Registered lists the registered names, sorted.
func Registered() []string {
	registryMu.RLock()
	defer registryMu.RUnlock()
	out := make([]string, 0, len(registry))
	for n := range registry {
		out = append(out, n)
	}
	slices.Sort(out)
	return out
}

// Open returns the embedder registered under name; "" means Builtin.
func Open(name string) (Embedder, error) {
	key := strings.ToLower(strings.TrimSpace(name))
	if key == "" {
		key = Builtin
	}
	registryMu.RLock()
	open := registry[key]
	registryMu.RUnlock()
	if open == nil {
		hint := ""
		if key == Builtin {
			hint = `: import _ "github.com/engram-memory/engram/embed/builtin" for the offline models`
		}
		return nil, fmt.Errorf("embedder %q: %w%s", key, ErrNotRegistered, hint)
	}
	return open()
}

// Each yields every registered embedder by name, in name order, but for
// Builtin (another name for one of them) and any that fails to open: the
// models a program could be switched to.
func Each() iter.Seq2[string, Embedder] {
	return func(yield func(string, Embedder) bool) {
		for _, name := range Registered() {
			if name == Builtin {
				continue
			}
			if e, err := Open(name); err == nil && !yield(name, e) {
				return
			}
		}
	}
}
