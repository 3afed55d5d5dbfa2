package main

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/engram-memory/engram"
	"github.com/engram-memory/engram/internal/when"
	"github.com/engram-memory/engram/memory"
)

// memoryFlags are the fields add and update take as flags.
type memoryFlags struct {
	name, description, typ, scene, source, metadata string
	scope, tags                                     []string
	favorite                                        bool
	episode, speaker, supersedes, at                string
	seq                                             int64
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
	c.Flags().StringVar(&f.episode, "episode", "", "the conversation, session or task it belongs to (inside its scope)")
	c.Flags().Int64Var(&f.seq, "seq", 0, "its position in the episode (with --episode; the same episode and seq again replaces it)")
	c.Flags().StringVar(&f.speaker, "speaker", "", "who said or wrote it: user, assistant, a name")
	c.Flags().StringVar(&f.at, "at", "", "when it happened or was said: RFC 3339, YYYY-MM-DD, or an age such as 3d (default: now)")
	c.Flags().StringVar(&f.supersedes, "supersedes", "", "the id of the memory (in the same scope) this one replaces as the current truth")
}

// occurredAt parses --at.
func (f *memoryFlags) occurredAt() (time.Time, error) {
	if f.at == "" {
		return time.Time{}, nil
	}
	t, err := when.Parse(f.at, time.Now())
	if err != nil {
		return time.Time{}, usagef("--at: %v", err)
	}
	return t, nil
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
says so on stderr.

A turn of a conversation names its --episode, its --seq (position), its
--speaker and when it was said (--at); without an id its id is EPISODE:SEQ,
so adding the same turn again replaces it. --supersedes ID marks the memory
as the new truth replacing ID: searches return only the current one (see
search --as-of and engram history).`,
		Example: `  engram add "The deploy key lives in the vault" --type fact --scope project=engram
  pbpaste | engram add - --name "Release runbook"
  engram add "They're called Peruvian Lilies." --episode chat-7 --seq 4 --speaker Caroline --at 2023-05-08
  engram add "Moved to Lisbon" --supersedes 01JB2X... --at 2024-03-01`,
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
			at, err := f.occurredAt()
			if err != nil {
				return err
			}
			if cmd.Flags().Changed("seq") && f.episode == "" {
				return usagef("--seq %d needs --episode", f.seq)
			}
			m := &engram.Memory{Text: text, Name: f.name, Description: f.description, Type: f.typ,
				Scene: f.scene, Source: f.source, Tags: f.tags, Favorite: f.favorite,
				Episode: f.episode, Seq: f.seq, Speaker: f.speaker, OccurredAt: at, Supersedes: f.supersedes}
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
					fmt.Fprintln(e.stderr, mergeNote(mg))
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

// mergeNote tells what became of a memory merged into one that already held
// its text: what it added, and what of it was not applied.
func mergeNote(mg engram.Merge) string {
	var b strings.Builder
	fmt.Fprintf(&b, "engram: not stored again: memory %s already holds this text in this scope", mg.ID)
	var added []string
	if len(mg.Tags) > 0 {
		added = append(added, "tags "+strings.Join(mg.Tags, ", "))
	}
	if mg.Favorite {
		added = append(added, "favorite")
	}
	if len(mg.Metadata) > 0 {
		added = append(added, "metadata "+strings.Join(mg.Metadata, ", "))
	}
	if mg.Type != "" {
		added = append(added, "type "+mg.Type)
	}
	if len(added) > 0 {
		b.WriteString("; merged into it: " + strings.Join(added, "; "))
	}
	if len(mg.Kept) > 0 {
		fmt.Fprintf(&b, "; it keeps its own %s (engram update %s changes them)", strings.Join(mg.Kept, ", "), mg.ID)
	}
	return b.String()
}
