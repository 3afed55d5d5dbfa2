package main

import (
	"fmt"
	"io"

	"github.com/spf13/cobra"

	"github.com/engram-memory/engram"
	"github.com/engram-memory/engram/memory"
)

func init() { register(newBrief) }

// deliveryFlags are the options brief and inject share.
type deliveryFlags struct {
	scope         []string
	typ           string
	budget, limit int
	noRecord      bool
	neighbours    int
}

func (f *deliveryFlags) register(c *cobra.Command, budget int) {
	c.Flags().StringArrayVar(&f.scope, "scope", nil, "only memories in scope key=value (repeatable, or k=v,k=v)")
	c.Flags().StringVar(&f.typ, "type", "", "only memories of this type")
	c.Flags().IntVar(&f.budget, "budget", budget, "character budget of the output")
	c.Flags().BoolVar(&f.noRecord, "no-record", false, "do not count this delivery as a use")
}

// filter checks the flags and returns the filter they describe.
func (f *deliveryFlags) filter() (memory.Filter, error) {
	var fl memory.Filter
	if f.budget < 1 {
		return fl, usagef("--budget %d: must be at least 1", f.budget)
	}
	if f.limit < 0 {
		return fl, usagef("--limit %d: must not be negative", f.limit)
	}
	scope, err := memory.ParseScope(f.scope...)
	if err != nil {
		return fl, usageError{fmt.Errorf("--scope: %w", err)}
	}
	fl.Scope, fl.Type = scope, f.typ
	return fl, nil
}

func newBrief(e *env) *cobra.Command {
	var f deliveryFlags
	c := &cobra.Command{
		Use:   "brief",
		Short: "Print a session-start briefing: favorites, most used, most recent",
		Long: `Print what an agent should know at the start of a session: favorite memories
first, then the most used (demand), then the most recent, all in scope and
within the character budget, formatted for direct insertion into an LLM's
context ("- [type date] name: text", one memory a line). An empty store in
scope prints nothing. --json gives each item with the reason it was chosen.`,
		Example: `  engram brief --scope project=engram --budget 1500`,
		Args:    args(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, _ []string) error {
			fl, err := f.filter()
			if err != nil {
				return err
			}
			return e.withStore(cmd.Context(), func(db store) error {
				b, err := db.Brief(cmd.Context(), engram.BriefOptions{Filter: fl, Budget: f.budget, Limit: f.limit, NoRecord: f.noRecord,
					Neighbours: f.neighbours})
				if err != nil {
					return err
				}
				return e.out(b, func(w io.Writer) error {
					_, err := io.WriteString(w, b.Text)
					return err
				})
			})
		},
	}
	f.register(c, engram.DefaultBriefBudget)
	c.Flags().IntVar(&f.limit, "limit", 0, "memories at most (0: as many as the budget holds)")
	c.Flags().IntVar(&f.neighbours, "neighbours", 0, "show each memory of an episode with this many turns before and after it")
	return viaDaemon(c)
}
