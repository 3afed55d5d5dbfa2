package main

import (
	"github.com/spf13/cobra"
)

func init() { register(newExport) }

func newExport(e *env) *cobra.Command {
	return &cobra.Command{
		Use:   "export",
		Short: "Write every memory as JSONL to stdout (import restores it exactly)",
		Args:  args(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, _ []string) error {
			return e.withStore(cmd.Context(), func(db store) error { return db.Export(cmd.Context(), e.stdout) })
		},
	}
}
