package main

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"

	"github.com/engram-memory/engram"
	"github.com/engram-memory/engram/memory"
)

// memoryFlags are the fields add and update take as flags.
type memoryFlags struct {
	name, description, typ, scene, source, metadata string
	scope, tags                                     []string
	favorite                                        bool
}

func (f *memoryFlags) register(c *cobra.Command) {
	c.Flags().StringVar(&f.name, "name", "", "short title")
	c.Flags().StringVar(&f.description, "description", "", "one-line summary")
	c.Flags().StringVar(&f.typ, "type", "", "type: fact, person, event, preference, instruction… (default note)")
	c.Flags().StringVar(&f.scene, "scene", "", "context the memory belongs to")
	c.Flags().StringVar(&f.source, "source", "", "where it came from")
	c.Flags().StringVar(&f.metadata, "metadata", "", "JSON object of extra fields")
	c.Flags().StringArrayVar(&f.scope, "scope", nil, "scope key=value (repeatable, or k=v,k=v)")
	c.Flags().StringArrayVar(&f.tags, "tag", nil, "tag (repeatable)")
}

func init() { register(newAdd) }

func newAdd(e *env) *cobra.Command {
	var f memoryFlags
	c := &cobra.Command{
		Use:   "add TEXT",
		Short: "Store one memory and print its id",
		Args:  args(cobra.ExactArgs(1)),
		RunE: func(cmd *cobra.Command, a []string) error {
			m := &engram.Memory{Text: a[0], Name: f.name, Description: f.description, Type: f.typ,
				Scene: f.scene, Source: f.source, Tags: f.tags, Favorite: f.favorite}
			scope, err := memory.ParseScope(f.scope...)
			if err != nil {
				return usageError{fmt.Errorf("--scope: %w", err)}
			}
			m.Scope = scope
			if f.metadata != "" {
				m.Metadata = json.RawMessage(f.metadata)
			}
			return e.withStore(cmd.Context(), func(db store) error {
				res, err := db.Add(cmd.Context(), m)
				if err != nil {
					return err
				}
				e.warnDeferred(res.Deferred)
				return e.out(res, func(w io.Writer) error {
					_, err := fmt.Fprintln(w, strings.Join(res.IDs, "\n"))
					return err
				})
			})
		},
	}
	f.register(c)
	c.Flags().BoolVar(&f.favorite, "favorite", false, "mark as a favorite")
	return c
}
