package main

import (
	"github.com/spf13/cobra"

	"github.com/engram-memory/engram/internal/format"
	"github.com/engram-memory/engram/memory"
)

func init() { register(newGet) }

func newGet(e *env) *cobra.Command {
	var vector bool
	var within []string
	c := &cobra.Command{
		Use:   "get ID",
		Short: "Print one memory (JSON)",
		Long:  "Print one memory as JSON, every field; its embedding shows the model and the\ndimension, and --vector adds the vector itself.",
		Args:  args(cobra.ExactArgs(1)),
		RunE: func(cmd *cobra.Command, a []string) error {
			return e.withStoreWithin(cmd.Context(), within, func(db store) error {
				m, err := db.Get(cmd.Context(), a[0])
				if err != nil {
					return err
				}
				if emb := m.Embedding; emb != nil && !vector {
					c := *m
					c.Embedding = &memory.Embedding{Model: emb.Model, Dim: emb.Dim}
					m = &c
				}
				return format.JSON(e.stdout, m, false)
			})
		},
	}
	c.Flags().BoolVar(&vector, "vector", false, "also print the embedding's vector")
	addWithin(c, &within)
	return viaDaemon(c)
}
