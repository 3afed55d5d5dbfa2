package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/spf13/cobra"

	"github.com/engram-memory/engram"
	"github.com/engram-memory/engram/internal/format"
)

// env is what every command shares: streams and global flags.
type env struct {
	stdin          io.Reader
	stdout, stderr io.Writer
	dbPath         string
	json           bool
}

func newRoot(e *env) *cobra.Command {
	root := &cobra.Command{
		Use:   "engram",
		Short: "Memory for LLM agents: hybrid BM25 + vector recall over one SQLite file",
		Long: `Engram stores memories in one SQLite file and recalls them with a hybrid of
BM25 keyword ranking and vector similarity, fused by rank, every result explained.

The database is --db, else $ENGRAM_DB, else engram.db in the user's data directory.
The embedder is $ENGRAM_EMBEDDER: builtin (default, offline), or a built-in model by
name (minilm, static, glove), openai, ollama or none.`,
		SilenceUsage:  true,
		SilenceErrors: true,
		Args:          args(cobra.NoArgs),
		RunE:          func(cmd *cobra.Command, _ []string) error { return cmd.Help() },
	}
	root.PersistentFlags().StringVar(&e.dbPath, "db", "", "database file (default $ENGRAM_DB or the user data directory)")
	root.PersistentFlags().BoolVar(&e.json, "json", false, "machine-readable JSON output")
	root.SetFlagErrorFunc(func(_ *cobra.Command, err error) error { return usageError{err} })
	for _, c := range registered {
		root.AddCommand(c(e))
	}
	for _, c := range root.Commands() {
		c.SilenceUsage = true
	}
	return root
}

// registered holds the subcommands, one file each, which add themselves with
// register from init: a new subcommand is one new file. Help lists them by name.
var registered []func(*env) *cobra.Command

func register(c func(*env) *cobra.Command) { registered = append(registered, c) }

// args wraps a cobra positional-argument check so its error is a usage error.
func args(check cobra.PositionalArgs) cobra.PositionalArgs {
	return func(cmd *cobra.Command, a []string) error {
		if err := check(cmd, a); err != nil {
			return usageError{fmt.Errorf("%s: %w", cmd.Name(), err)}
		}
		return nil
	}
}

// path resolves the database path.
func (e *env) path() (string, error) {
	if e.dbPath != "" {
		return e.dbPath, nil
	}
	if p := os.Getenv("ENGRAM_DB"); p != "" {
		return p, nil
	}
	dir := os.Getenv("XDG_DATA_HOME")
	if dir == "" {
		home, err := os.UserHomeDir()
		if err != nil {
			return "", usagef("no --db given and no home directory: %v", err)
		}
		dir = filepath.Join(home, ".local", "share")
	}
	dir = filepath.Join(dir, "engram")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", fmt.Errorf("create data directory: %w", err)
	}
	return filepath.Join(dir, "engram.db"), nil
}

// open opens the database with the configured providers.
func (e *env) open(ctx context.Context) (*engram.DB, error) {
	p, err := e.path()
	if err != nil {
		return nil, err
	}
	opts, err := optionsFromEnv()
	if err != nil {
		return nil, err
	}
	return engram.Open(ctx, p, opts)
}

// withDB runs fn with an open database and closes it.
func (e *env) withDB(ctx context.Context, fn func(db *engram.DB) error) error {
	db, err := e.open(ctx)
	if err != nil {
		return err
	}
	defer db.Close()
	return fn(db)
}

// out writes v as JSON when --json, else calls human.
func (e *env) out(v any, human func(w io.Writer) error) error {
	if e.json {
		return format.JSON(e.stdout, v, false)
	}
	return human(e.stdout)
}

// outf writes v as JSON when --json, else the formatted line.
func (e *env) outf(v any, format string, a ...any) error {
	return e.out(v, func(w io.Writer) error {
		_, err := fmt.Fprintf(w, format, a...)
		return err
	})
}
