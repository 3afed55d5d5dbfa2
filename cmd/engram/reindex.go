package main

import (
	"github.com/spf13/cobra"

	"github.com/engram-memory/engram"
)

func init() { register(newReindex) }

func newReindex(e *env) *cobra.Command {
	var force bool
	c := &cobra.Command{
		Use:   "reindex",
		Short: "Embed memories that lack a vector from the current model (--force: all)",
		Long: `Embed memories that lack a vector from the current model (--force: all).
The current model is $ENGRAM_EMBEDDER's; with none named, the store's own
(the built-in model its vectors come from), else the default. A reindex
records its model as the store's before it starts, so
ENGRAM_EMBEDDER=bge-small engram reindex moves a store embedded with
all-MiniLM-L6-v2 (the default until bge-small) to the default for good, even
if it is cut short.`,
		Args: args(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := e.localOnly("reindex"); err != nil {
				return err
			}
			return e.withDB(cmd.Context(), func(db *engram.DB) error {
				res, err := db.Reindex(cmd.Context(), force, e.progressBar("reindex"))
				if err != nil {
					return err
				}
				return e.outf(res, "reindexed with %s: %d checked, %d embedded, %d without a vector\n",
					res.Model, res.Checked, res.Embedded, res.NoVector)
			})
		},
	}
	c.Flags().BoolVar(&force, "force", false, "re-embed every memory")
	return c
}
