package main

import (
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"

	"github.com/engram-memory/engram"
	"github.com/engram-memory/engram/memory"
)

func init() { register(newDelete) }

// The rule delete and touch share: act on every id that exists, name every
// one that does not, and exit 2 when any was missing.
const idsRule = `Every ID that exists is acted on; each one that does not is named on stderr,
and the command then exits 2.`

func newDelete(e *env) *cobra.Command {
	var scope, within []string
	c := &cobra.Command{
		Use:   "delete ID... | --scope key=value",
		Short: "Delete memories by id, or every memory of a scope",
		Long: `Delete memories by id, or, with --scope and no ID, every memory whose scope
holds the pairs given (forget a user or a session in one call), and print how
many were deleted. ` + idsRule,
		Example: `  engram delete 01J0000000000000000000000A 01J0000000000000000000000B
  engram delete --scope user=u7`,
		Args: func(cmd *cobra.Command, a []string) error {
			if len(scope) > 0 {
				if len(a) > 0 {
					return usagef("delete: give ids or --scope, not both")
				}
				if len(within) > 0 {
					return usagef("delete: --within names one memory of an id; --scope deletes a whole scope: give one")
				}
				return nil
			}
			return args(cobra.MinimumNArgs(1))(cmd, a)
		},
		RunE: func(cmd *cobra.Command, a []string) error {
			if len(scope) > 0 {
				sc, err := memory.ParseScope(scope...)
				if err != nil {
					return usageError{fmt.Errorf("--scope: %w", err)}
				}
				return e.withStore(cmd.Context(), func(db store) error {
					n, err := db.DeleteScope(cmd.Context(), sc)
					if err != nil {
						return err
					}
					return e.outf(map[string]int{"deleted": n}, "deleted %d\n", n)
				})
			}
			return e.withStoreWithin(cmd.Context(), within, func(db store) error {
				var missing []string
				n := 0
				for _, id := range a {
					k, err := db.Delete(cmd.Context(), id)
					if errors.Is(err, engram.ErrNotFound) {
						missing = append(missing, id)
						continue
					}
					if err != nil {
						return err
					}
					n += k
				}
				out := map[string]any{"deleted": n}
				if missing != nil {
					out["missing"] = missing
				}
				if err := e.out(out, func(w io.Writer) error { _, err := fmt.Fprintf(w, "deleted %d\n", n); return err }); err != nil {
					return err
				}
				return missingError("delete", "deleted", missing)
			})
		},
	}
	c.Flags().StringArrayVar(&scope, "scope", nil, "delete every memory in scope key=value (repeatable, or k=v,k=v)")
	addWithin(c, &within)
	return c
}

// missingError reports the ids a command could not find (nil for none): an
// ErrNotFound, so the command exits 2.
func missingError(cmd, did string, missing []string) error {
	if len(missing) == 0 {
		return nil
	}
	return fmt.Errorf("%s: not found: %s (the others were %s): %w", cmd, strings.Join(missing, " "), did, engram.ErrNotFound)
}
