package main

import (
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"

	"github.com/engram-memory/engram/backend/sqlite"
	"github.com/engram-memory/engram/backend/weaviate"
)

func init() { register(newDoctor) }

func newDoctor(e *env) *cobra.Command {
	var repair bool
	c := &cobra.Command{
		Use:   "doctor",
		Short: "Explain what is wrong with a store file, and repair what is safe to",
		Long: `Examine the store file (even one that does not open) and say what is wrong
with it, row by row: a damaged schema version, rows that cannot be read (they
are left out of searches and exports, and stats lists them), counters out of
range, unreadable vectors, metadata or tags, leftovers of snapshot writes.

--repair fixes what loses nothing: it restores a reset schema version from
the tables, stores counters as the nearest valid value, clears unreadable
vectors (engram reindex gives new ones), keeps unreadable metadata or tags as
text under metadata's "engram_doctor" key, and deletes dead snapshot temp
files. Rows whose scope or times cannot be read are never guessed at: the
report says how to remove them. Exit 0 when nothing is (left) wrong, 2 when
something is.`,
		Example: `  engram doctor
  engram --db agent.db doctor --repair`,
		Args: args(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, _ []string) error {
			p, err := e.path(false)
			if err != nil {
				return err
			}
			if weaviate.IsURL(p) {
				return usagef("doctor examines a SQLite store file, and --db names a Weaviate class (%s); engram stats reads one", p)
			}
			r, err := sqlite.Doctor(cmd.Context(), p, repair)
			if err != nil {
				return err
			}
			if err := e.out(r, func(w io.Writer) error { return writeDoctor(w, r) }); err != nil {
				return err
			}
			left, cleared := 0, 0
			for _, f := range r.Findings {
				if !f.Fixed {
					left++
				} else if strings.Contains(f.Problem, "embedding") {
					cleared++
				}
			}
			if cleared > 0 {
				// A cleared vector leaves the memory to keywords until a reindex.
				e.printHints([]string{fmt.Sprintf("%d unreadable vector(s) cleared: %s", cleared, reindexHint)})
			}
			if left > 0 {
				hint := ""
				if !repair {
					hint = "; engram doctor --repair fixes what it can"
				}
				return usagef("%s: %d problem(s) left%s", p, left, hint)
			}
			return nil
		},
	}
	c.Flags().BoolVar(&repair, "repair", false, "fix what can be fixed without losing anything")
	return c
}

func writeDoctor(w io.Writer, r *sqlite.DoctorReport) error {
	fmt.Fprintf(w, "%s: schema %d, %d memories\n", r.Path, r.Detected, r.Rows)
	if r.OK() {
		_, err := fmt.Fprintln(w, "no problems found")
		return err
	}
	for _, f := range r.Findings {
		state := "to fix: "
		if f.Fixed {
			state = "fixed: "
		}
		if _, err := fmt.Fprintf(w, "- %s\n  %s%s\n", f.Problem, state, f.Fix); err != nil {
			return err
		}
	}
	return nil
}
