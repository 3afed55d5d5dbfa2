package main

import (
	"context"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/engram-memory/engram"
	"github.com/engram-memory/engram/memory"
)

// addWithin adds the --within flag of the commands that act on memories by
// id.
func addWithin(c *cobra.Command, within *[]string) {
	c.Flags().StringArrayVar(within, "within", nil,
		"the scope key=value of the memory meant, when its id names memories in several scopes (repeatable, or k=v,k=v)")
}

// withStoreWithin is withStore narrowed to --within's scope when one is
// given: by id, the store then names the memory with the id inside that
// scope too (an ambiguous id's one).
func (e *env) withStoreWithin(ctx context.Context, within []string, fn func(db store) error) error {
	if len(within) == 0 {
		return e.withStore(ctx, fn)
	}
	scope, err := memory.ParseScope(within...)
	if err != nil {
		return usageError{fmt.Errorf("--within: %w", err)}
	}
	if len(scope) == 0 {
		return usagef("--within: want key=value")
	}
	return e.withStore(ctx, func(db store) error {
		switch d := db.(type) {
		case *client:
			return fn(d.within(scope))
		case interface {
			Within(map[string]string) (*engram.Scoped, error)
		}:
			v, err := d.Within(scope)
			if err != nil {
				return fmt.Errorf("--within: %w", err)
			}
			return fn(v)
		}
		return usagef("--within is not supported on this store")
	})
}
