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

// maxMemoryText bounds a memory's text read from standard input (the HTTP
// API's body limit).
const maxMemoryText = 8 << 20

func newAdd(e *env) *cobra.Command {
	var f memoryFlags
	c := &cobra.Command{
		Use:   "add TEXT|-",
		Short: "Store one memory and print its id",
		Long: `Store one memory and print its id. TEXT - reads the text from standard input
(for long text, or text that starts with a dash; trailing newlines are dropped).
A memory with the same name, description and text in the same scope as one
already stored is not stored twice: the stored one's id is printed, and a note
says so on stderr.`,
		Example: `  engram add "The deploy key lives in the vault" --type fact --scope project=engram
  pbpaste | engram add - --name "Release runbook"`,
		Args: func(cmd *cobra.Command, a []string) error {
			if len(a) > 1 {
				return usagef("add takes one TEXT, %d given: quote it, or give - to read it from standard input", len(a))
			}
			return args(cobra.ExactArgs(1))(cmd, a)
		},
		RunE: func(cmd *cobra.Command, a []string) error {
			text := a[0]
			if text == "-" {
				b, err := io.ReadAll(io.LimitReader(e.stdin, maxMemoryText+1))
				if err != nil {
					return fmt.Errorf("add: read standard input: %w", err)
				}
				if len(b) > maxMemoryText {
					return usagef("add -: standard input is longer than %d bytes", maxMemoryText)
				}
				if text = strings.TrimRight(string(b), "\r\n"); strings.TrimSpace(text) == "" {
					return usagef("add -: standard input is empty")
				}
			}
			m := &engram.Memory{Text: text, Name: f.name, Description: f.description, Type: f.typ,
				Scene: f.scene, Source: f.source, Tags: f.tags, Favorite: f.favorite}
			scope, err := memory.ParseScope(f.scope...)
			if err != nil {
				return usageError{fmt.Errorf("--scope: %w", err)}
			}
			m.Scope = scope
			if f.metadata != "" {
				m.Metadata = json.RawMessage(f.metadata)
			}
			return e.withNewStore(cmd.Context(), func(db store) error {
				res, err := db.Add(cmd.Context(), m)
				if err != nil {
					return err
				}
				e.warnDeferred(res.Deferred)
				for _, mg := range res.Merged {
					fmt.Fprintf(e.stderr, "engram: not stored again: memory %s already holds this text in this scope\n", mg.ID)
				}
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
