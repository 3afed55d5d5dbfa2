package main

import (
	"github.com/spf13/cobra"

	"github.com/engram-memory/engram/internal/format"
)

func init() { register(newGet) }

func newGet(e *env) *cobra.Command {
	return &cobra.Command{
		Use:   "get ID",
		Short: "Print one memory (JSON)",
		Args:  args(cobra.ExactArgs(1)),
		RunE: func(cmd *cobra.Command, a []string) error {
			return e.withStore(cmd.Context(), func(db store) error {
				m, err := db.Get(cmd.Context(), a[0])
				if err != nil {
					return err
				}
				return format.JSON(e.stdout, m, false)
			})
		},
	}
}
