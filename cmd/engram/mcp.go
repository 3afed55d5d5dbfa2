package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"

	"github.com/spf13/cobra"

	"github.com/engram-memory/engram"
	"github.com/engram-memory/engram/memory"
	"github.com/engram-memory/engram/server/mcpserver"
)

func init() { register(newMCP) }

func newMCP(e *env) *cobra.Command {
	var scope []string
	c := &cobra.Command{
		Use:   "mcp",
		Short: "Serve the memory tools to an MCP client over stdio",
		Long: `Serve Engram as a Model Context Protocol server on stdin and stdout, for agent
hosts that start their tools as commands. Tools: memory_search, memory_add,
memory_update, memory_delete, memory_get, memory_brief, memory_favorite,
memory_list.

With --scope, the server sees and writes only that scope (for example one
project's memories): every memory it adds carries the scope, and memories
outside it are invisible. Over HTTP the same tools are served by
"engram serve" at /mcp.`,
		Example: `  engram --db ~/notes.db mcp
  engram mcp --scope project=engram`,
		Args: args(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, _ []string) error {
			sc, err := memory.ParseScope(scope...)
			if err != nil {
				return usageError{fmt.Errorf("--scope: %w", err)}
			}
			// Stdout is the protocol's: what the store notices goes to stderr.
			e.logger = slog.New(slog.NewTextHandler(e.stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
			return e.withNewDB(cmd.Context(), func(db *engram.DB) error {
				var b mcpserver.Backend = db
				if len(sc) > 0 {
					v, err := db.WithScope(sc)
					if err != nil {
						return usageError{fmt.Errorf("--scope: %w", err)}
					}
					b = v
				}
				err := mcpserver.ServeIO(cmd.Context(), b, mcpserver.Options{}, e.stdin, e.stdout)
				if errors.Is(err, context.Canceled) {
					return nil // interrupted: a normal way to stop a server
				}
				return err
			})
		},
	}
	c.Flags().StringArrayVar(&scope, "scope", nil, "confine the server to scope key=value (repeatable, or k=v,k=v)")
	return c
}
