package builtin

import "github.com/engram-memory/engram/embed"

// init registers the built-in models with package embed: each by its name,
// and Default as embed.Builtin, the embedder a store gets when its options
// name none.
func init() {
	embed.Register(embed.Builtin, func() (embed.Embedder, error) { return New(Default) })
	for _, n := range Names() {
		embed.Register(n, func() (embed.Embedder, error) { return New(n) })
	}
}
