// Package bgesmall links the built-in model bge-small-en-v1.5 (embed/bert,
// 55 MB) into a program that imports it, under the name builtin.BGESmall:
// ENGRAM_EMBEDDER=bge-small.
package bgesmall

import (
	"github.com/engram-memory/engram/embed"
	"github.com/engram-memory/engram/embed/bert"
	"github.com/engram-memory/engram/embed/builtin"
)

func init() {
	builtin.Register(builtin.BGESmall, "bge-small-en-v1.5", func() (embed.Embedder, error) { return bert.DefaultBGESmall() })
}
