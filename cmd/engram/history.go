package main

import (
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"

	"github.com/engram-memory/engram"
	"github.com/engram-memory/engram/internal/format"
)

func init() { register(newHistory) }

func newHistory(e *env) *cobra.Command {
	var within []string
	c := &cobra.Command{
		Use:   "history ID",
		Short: "List every version of a memory: what it superseded and what supersedes it",
		Long: `List the chain of versions the memory ID belongs to, oldest first: the
memories it supersedes (engram add --supersedes), back to the first, and those
that supersede it, all in its scope. One a line: "ID [date, current] text" or
"ID [date, superseded by ID2 on DATE] text". Supersession deletes nothing: a
search returns the current version, search --as-of TIME the one current then.
--json prints {"versions": [...]}.`,
		Example: `  engram history 01JB2X7Q...
  engram history 01JB2X7Q... --json`,
		Args: args(cobra.ExactArgs(1)),
		RunE: func(cmd *cobra.Command, a []string) error {
			return e.withStoreWithin(cmd.Context(), within, func(db store) error {
				vs, err := db.History(cmd.Context(), a[0])
				if err != nil {
					return err
				}
				return e.out(map[string][]engram.Version{"versions": vs}, func(w io.Writer) error { return writeHistory(w, vs) })
			})
		},
	}
	addWithin(c, &within)
	return c
}

// writeHistory prints one version a line.
func writeHistory(w io.Writer, vs []engram.Version) error {
	var b strings.Builder
	for _, v := range vs {
		fmt.Fprintf(&b, "%s [%s", v.ID, v.OccurredAt.Format("2006-01-02"))
		if v.Current {
			b.WriteString(", current")
		} else {
			fmt.Fprintf(&b, ", superseded by %s on %s", v.SupersededBy, v.SupersededAt.Format("2006-01-02"))
		}
		b.WriteString("] " + format.Truncate(format.OneLine(v.Text), 120) + "\n")
	}
	_, err := io.WriteString(w, b.String())
	return err
}
