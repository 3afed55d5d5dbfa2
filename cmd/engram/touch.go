package main

import (
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"
)

func init() { register(newTouch) }

func newTouch(e *env) *cobra.Command {
	return &cobra.Command{
		Use:   "touch ID...",
		Short: "Record a use of memories (raises their demand boost)",
		Args:  args(cobra.MinimumNArgs(1)),
		RunE: func(cmd *cobra.Command, a []string) error {
			return e.withStore(cmd.Context(), func(db store) error {
				if err := db.Touch(cmd.Context(), a...); err != nil {
					return err
				}
				return e.out(map[string]int{"touched": len(a)}, func(w io.Writer) error {
					_, err := fmt.Fprintf(w, "touched %s\n", strings.Join(a, " "))
					return err
				})
			})
		},
	}
}
