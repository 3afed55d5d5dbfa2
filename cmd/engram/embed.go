package main

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/engram-memory/engram"
	"github.com/engram-memory/engram/internal/format"
)

func init() { register(newEmbed) }

func newEmbed(e *env) *cobra.Command {
	return &cobra.Command{
		Use:   "embed TEXT",
		Short: "Print TEXT's embedding as a JSON array (the model id goes to stderr)",
		Long: `Print TEXT's embedding as a JSON array. The model id goes to stderr, and after it,
for a built-in transformer that does not multiply in fp32, its precision, or why
the one $ENGRAM_BERT_PRECISION asks for is not used here.`,
		Args: args(cobra.ExactArgs(1)),
		RunE: func(cmd *cobra.Command, a []string) error {
			opts, err := optionsFromEnv()
			if err != nil {
				return err
			}
			emb := opts.Embedder
			if emb == nil && !opts.NoEmbedder {
				if emb, err = engram.BuiltinEmbedder(); err != nil {
					return err
				}
			}
			if emb == nil {
				return usagef("embed: no embedder (ENGRAM_EMBEDDER=none)")
			}
			vecs, err := emb.Embed(cmd.Context(), []string{a[0]})
			if err != nil {
				return fmt.Errorf("embedder %s: %w", emb.Model(), err)
			}
			if len(vecs) != 1 || vecs[0] == nil {
				return usagef("embed: %s has no vector for this text (no known word)", emb.Model())
			}
			fmt.Fprintln(e.stderr, emb.Model())
			// A built-in transformer at another precision than fp32, or
			// asked for one this machine or model cannot use, says which.
			if p, ok := emb.(interface{ Precision() string }); ok && p.Precision() != "fp32" {
				fmt.Fprintln(e.stderr, "precision", p.Precision())
			}
			return format.JSON(e.stdout, vecs[0], true)
		},
	}
}
