package main

import (
	"fmt"
	"io"

	"github.com/engram-memory/engram"
	"github.com/spf13/cobra"
)

func init() { register(newFavorite) }

func newFavorite(e *env) *cobra.Command {
	var off bool
	var within []string
	c := &cobra.Command{
		Use:   "favorite ID",
		Short: "Mark a memory as a favorite (×1.15 in ranking); --off to unmark",
		Args:  args(cobra.ExactArgs(1)),
		RunE: func(cmd *cobra.Command, a []string) error {
			return e.withStoreWithin(cmd.Context(), within, func(db store) error {
				on := !off
				m, err := db.Update(cmd.Context(), a[0], engram.Patch{Favorite: &on})
				if err != nil {
					return err
				}
				return e.out(m, func(w io.Writer) error {
					_, err := fmt.Fprintf(w, "%s favorite=%v\n", m.ID, m.Favorite)
					return err
				})
			})
		},
	}
	c.Flags().BoolVar(&off, "off", false, "remove the mark")
	addWithin(c, &within)
	return c
}
