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

func init() { register(newUpdate) }

func newUpdate(e *env) *cobra.Command {
	var f memoryFlags
	var text string
	var fav string
	var within []string
	c := &cobra.Command{
		Use:   "update ID",
		Short: "Change a memory's fields (only the flags given)",
		Long: `Change a memory's fields: only the flags given. --favorite marks it as a
favorite, --favorite=false unmarks it (as engram favorite ID [--off] does).`,
		Args: func(cmd *cobra.Command, a []string) error {
			// "--favorite true", the first spelling, leaves its value as an argument.
			if len(a) == 2 && cmd.Flags().Changed("favorite") && fav == "true" {
				if _, err := parseBool(a[1]); err == nil {
					return nil
				}
			}
			return args(cobra.ExactArgs(1))(cmd, a)
		},
		RunE: func(cmd *cobra.Command, a []string) error {
			if len(a) == 2 {
				fav = a[1]
			}
			var p engram.Patch
			str := func(name string, v *string) *string {
				if cmd.Flags().Changed(name) {
					return v
				}
				return nil
			}
			p.Text = str("text", &text)
			p.Name = str("name", &f.name)
			p.Description = str("description", &f.description)
			p.Type = str("type", &f.typ)
			p.Scene = str("scene", &f.scene)
			p.Source = str("source", &f.source)
			if cmd.Flags().Changed("scope") {
				scope, err := memory.ParseScope(f.scope...)
				if err != nil {
					return usageError{fmt.Errorf("--scope: %w", err)}
				}
				p.Scope = &scope
			}
			if cmd.Flags().Changed("tag") {
				p.Tags = &f.tags
			}
			if cmd.Flags().Changed("metadata") {
				raw := json.RawMessage(f.metadata)
				p.Metadata = &raw
			}
			p.Episode = str("episode", &f.episode)
			p.Speaker = str("speaker", &f.speaker)
			p.Supersedes = str("supersedes", &f.supersedes)
			if cmd.Flags().Changed("seq") {
				p.Seq = &f.seq
			}
			if cmd.Flags().Changed("at") {
				at, err := f.occurredAt()
				if err != nil {
					return err
				}
				if at.IsZero() {
					return usagef("--at: give a time")
				}
				p.OccurredAt = &at
			}
			if cmd.Flags().Changed("favorite") {
				on, err := parseBool(fav)
				if err != nil {
					return usageError{fmt.Errorf("--favorite: %w", err)}
				}
				p.Favorite = &on
			}
			if p.Empty() {
				return usagef("update %s: no field to change: give at least one of --text, --name, --type, --tag, --favorite, … (engram help update)", a[0])
			}
			return e.withStoreWithin(cmd.Context(), within, func(db store) error {
				m, err := db.Update(cmd.Context(), a[0], p)
				if err != nil {
					return err
				}
				return e.out(m, func(w io.Writer) error { _, err := fmt.Fprintln(w, m.ID); return err })
			})
		},
	}
	f.register(c)
	// The memory flags' defaults are add's: an update changes only what it is given.
	c.Flags().Lookup("type").Usage = "new type: fact, person, event, preference, instruction…"
	c.Flags().Lookup("at").Usage = "new time it happened or was said: RFC 3339, YYYY-MM-DD, or an age such as 3d"
	c.Flags().StringVar(&text, "text", "", "new text")
	c.Flags().StringVar(&fav, "favorite", "", "mark as a favorite (--favorite=false: unmark)")
	c.Flags().Lookup("favorite").NoOptDefVal = "true"
	addWithin(c, &within)
	return c
}

func parseBool(s string) (bool, error) {
	switch strings.ToLower(s) {
	case "true", "yes", "on", "1":
		return true, nil
	case "false", "no", "off", "0":
		return false, nil
	}
	return false, fmt.Errorf("%q is not true or false", s)
}
