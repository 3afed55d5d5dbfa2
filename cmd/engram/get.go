package main

import (
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"

	"github.com/engram-memory/engram/internal/format"
)

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

func newFavorite(e *env) *cobra.Command {
	var off bool
	c := &cobra.Command{
		Use:   "favorite ID",
		Short: "Mark a memory as a favorite (×1.15 in ranking); --off to unmark",
		Args:  args(cobra.ExactArgs(1)),
		RunE: func(cmd *cobra.Command, a []string) error {
			return e.withStore(cmd.Context(), func(db store) error {
				m, err := db.Favorite(cmd.Context(), a[0], !off)
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
	return c
}

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
