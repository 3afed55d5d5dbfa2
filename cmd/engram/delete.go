package main

import (
	"fmt"
	"io"

	"github.com/spf13/cobra"
)

func init() { register(newDelete) }

func newDelete(e *env) *cobra.Command {
	return &cobra.Command{
		Use:   "delete ID...",
		Short: "Delete memories",
		Args:  args(cobra.MinimumNArgs(1)),
		RunE: func(cmd *cobra.Command, a []string) error {
			return e.withStore(cmd.Context(), func(db store) error {
				n, err := db.Delete(cmd.Context(), a...)
				if err != nil {
					return err
				}
				return e.out(map[string]int{"deleted": n}, func(w io.Writer) error {
					_, err := fmt.Fprintf(w, "deleted %d\n", n)
					return err
				})
			})
		},
	}
}
