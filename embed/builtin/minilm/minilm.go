// Package minilm links the built-in model all-MiniLM-L6-v2 (embed/bert,
// 34 MB), the default until bge-small, into a program that imports it, under
// the name builtin.MiniLM: ENGRAM_EMBEDDER=minilm, and the model a store
// embedded with it keeps (engram.Open).
package minilm

import (
	"github.com/engram-memory/engram/embed"
	"github.com/engram-memory/engram/embed/bert"
	"github.com/engram-memory/engram/embed/builtin"
)

func init() {
	builtin.Register(builtin.MiniLM, "all-MiniLM-L6-v2", func() (embed.Embedder, error) { return bert.Default() })
}
