// Package multilingual links the built-in model multilingual-e5-small
// (embed/e5, 72 MB) into a program that imports it, under the name
// builtin.Multilingual: ENGRAM_EMBEDDER=multilingual.
package multilingual

import (
	"github.com/engram-memory/engram/embed"
	"github.com/engram-memory/engram/embed/builtin"
	"github.com/engram-memory/engram/embed/e5"
)

func init() {
	builtin.Register(builtin.Multilingual, "multilingual-e5-small", func() (embed.Embedder, error) { return e5.Default() })
}
