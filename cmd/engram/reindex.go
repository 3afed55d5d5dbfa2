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
		Args:  args(cobra.NoArgs),
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
