package main

import (
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"

	"github.com/engram-memory/engram"
)

func init() { register(newTouch) }

func newTouch(e *env) *cobra.Command {
	var within []string
	c := &cobra.Command{
		Use:   "touch ID...",
		Short: "Record a use of memories (raises their demand boost)",
		Long:  "Record a use of each memory, as a relevant delivery would: it raises the memory's\ndemand boost and its place in a briefing. " + idsRule,
		Args:  args(cobra.MinimumNArgs(1)),
		RunE: func(cmd *cobra.Command, a []string) error {
			return e.withStoreWithin(cmd.Context(), within, func(db store) error {
				var touched, missing []string
				for _, id := range a {
					err := db.Touch(cmd.Context(), id)
					if errors.Is(err, engram.ErrNotFound) {
						missing = append(missing, id)
						continue
					}
					if err != nil {
						return err
					}
					touched = append(touched, id)
				}
				out := map[string]any{"touched": len(touched)}
				if missing != nil {
					out["missing"] = missing
				}
				err := e.out(out, func(w io.Writer) error {
					if len(touched) == 0 {
						return nil
					}
					_, err := fmt.Fprintf(w, "touched %s\n", strings.Join(touched, " "))
					return err
				})
				if err != nil {
					return err
				}
				return missingError("touch", "touched", missing)
			})
		},
	}
	addWithin(c, &within)
	return c
}
