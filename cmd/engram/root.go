package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime/debug"
	"strings"

	"github.com/spf13/cobra"

	"github.com/engram-memory/engram"
	"github.com/engram-memory/engram/backend/weaviate"
	"github.com/engram-memory/engram/embed"
	"github.com/engram-memory/engram/internal/format"
)

// env is what every command shares: streams and global flags.
type env struct {
	stdin          io.Reader
	stdout, stderr io.Writer
	dbPath         string
	json           bool
	// daemon: this command may run through a local daemon (daemon.go).
	daemon bool
	// warm: this command embeds a query; in-process, the model is made
	// ready while the store's index loads.
	warm bool
}

// warmAnnotation marks a command that embeds its query.
const warmAnnotation = "engram-warm"

// embedsQuery marks c as warmAnnotation says.
func embedsQuery(c *cobra.Command) *cobra.Command {
	if c.Annotations == nil {
		c.Annotations = map[string]string{}
	}
	c.Annotations[warmAnnotation] = "yes"
	return c
}

// daemonAnnotation marks a command that runs through a local daemon when
// one serves its store: the calls an agent makes in its loop, whose answer
// is the same either way.
const daemonAnnotation = "engram-daemon"

// viaDaemon marks c as daemonAnnotation says.
func viaDaemon(c *cobra.Command) *cobra.Command {
	if c.Annotations == nil {
		c.Annotations = map[string]string{}
	}
	c.Annotations[daemonAnnotation] = "yes"
	return c
}

func newRoot(e *env) *cobra.Command {
	root := &cobra.Command{
		Use:   "engram",
		Short: "Memory for LLM agents: hybrid BM25 + vector recall over one SQLite file",
		Long: `Engram stores memories in one SQLite file and recalls them with a hybrid of
BM25 keyword ranking and vector similarity, fused by rank, every result explained.

The database is --db, else $ENGRAM_DB, else engram.db in the user's data directory;
a weaviate://HOST:PORT?class=Memory URL there runs on a Weaviate server instead.
The embedder is $ENGRAM_EMBEDDER: builtin (default, offline), or a built-in model by
name (minilm, static, glove), openai, ollama or none.`,
		SilenceUsage:  true,
		SilenceErrors: true,
		Version:       version(),
		Args: func(cmd *cobra.Command, a []string) error {
			if len(a) == 0 {
				return nil
			}
			hint := "engram --help lists the commands"
			if s := cmd.SuggestionsFor(a[0]); len(s) > 0 {
				hint = "did you mean " + strings.Join(s, " or ") + "? " + hint
			}
			return usagef("unknown command %q (%s)", a[0], hint)
		},
		RunE: func(cmd *cobra.Command, _ []string) error { return cmd.Help() },
		PersistentPreRun: func(cmd *cobra.Command, _ []string) {
			e.daemon = cmd.Annotations[daemonAnnotation] == "yes"
			e.warm = cmd.Annotations[warmAnnotation] == "yes"
		},
	}
	root.SetVersionTemplate("engram {{.Version}}\n")
	root.SuggestionsMinimumDistance = 2
	root.PersistentFlags().StringVar(&e.dbPath, "db", "", "database file, or a weaviate://HOST:PORT?class=Memory URL (default $ENGRAM_DB or the user data directory)")
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

// version names this build: the module version (a tagged release), else
// "devel", with the commit and Go version it was built from when known.
func version() string {
	v := "devel"
	info, ok := debug.ReadBuildInfo()
	if !ok {
		return v
	}
	if mv := info.Main.Version; mv != "" && mv != "(devel)" {
		v = mv
	}
	var rev, dirty string
	for _, s := range info.Settings {
		switch s.Key {
		case "vcs.revision":
			rev = s.Value
		case "vcs.modified":
			if s.Value == "true" {
				dirty = ", modified"
			}
		}
	}
	if len(rev) > 12 {
		rev = rev[:12]
	}
	if rev != "" {
		return fmt.Sprintf("%s (commit %s%s, %s)", v, rev, dirty, info.GoVersion)
	}
	return fmt.Sprintf("%s (%s)", v, info.GoVersion)
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

// path resolves the database path; create makes the default data directory.
func (e *env) path(create bool) (string, error) {
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
	if create {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return "", fmt.Errorf("create data directory: %w", err)
		}
	}
	return filepath.Join(dir, "engram.db"), nil
}

// location is the store --db or $ENGRAM_DB names, or "" for the default.
func (e *env) location() string {
	if e.dbPath != "" {
		return e.dbPath
	}
	return os.Getenv("ENGRAM_DB")
}

// open opens the database with the configured providers. Unless create, the
// file must exist: a command that only reads or changes stored memories never
// makes an empty store out of a mistyped path.
func (e *env) open(ctx context.Context, create bool) (*engram.DB, error) {
	p, err := e.path(create)
	if err != nil {
		return nil, err
	}
	if weaviate.IsURL(p) {
		if _, err := weaviate.ParseURL(p); err != nil {
			return nil, usagef("--db %s: %v", p, err)
		}
	} else if !create {
		if _, err := os.Stat(p); errors.Is(err, os.ErrNotExist) {
			return nil, usagef("no store at %s (engram add or engram import creates one; --db or $ENGRAM_DB names another)", p)
		}
	}
	opts, err := optionsFromEnv()
	if err != nil {
		return nil, err
	}
	return engram.Open(ctx, p, opts)
}

// withDB runs fn with the existing local database and closes it.
func (e *env) withDB(ctx context.Context, fn func(db *engram.DB) error) error {
	return e.local(ctx, false, fn)
}

// withNewDB is withDB for a command that may create the store.
func (e *env) withNewDB(ctx context.Context, fn func(db *engram.DB) error) error {
	return e.local(ctx, true, fn)
}

func (e *env) local(ctx context.Context, create bool, fn func(db *engram.DB) error) error {
	db, err := e.open(ctx, create)
	if err != nil {
		return err
	}
	defer db.Close()
	if w, ok := db.Embedder().(embed.Warmer); ok && e.warm {
		// The model's setup and the index's load (on the first search) use
		// different cores; an error shows again at the query's embedding.
		go w.Warm(ctx)
	}
	return fn(db)
}

// localOnly refuses a command that works on a store file when $ENGRAM_URL
// names a server and no --db names a file: it would act on the local default
// store, not the server's.
func (e *env) localOnly(command string) error {
	if u := os.Getenv("ENGRAM_URL"); u != "" && e.dbPath == "" {
		return usagef("%s works on a store file, and ENGRAM_URL=%s names a server: run it where the server's file is, with --db PATH (or unset ENGRAM_URL)", command, u)
	}
	return nil
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
