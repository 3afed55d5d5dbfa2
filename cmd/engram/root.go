package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"regexp"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/engram-memory/engram"
	"github.com/engram-memory/engram/backend/sqlite"
	"github.com/engram-memory/engram/backend/weaviate"
	"github.com/engram-memory/engram/internal/format"
)

// env is what every command shares: streams and global flags.
type env struct {
	stdin          io.Reader
	stdout, stderr io.Writer
	dbPath         string
	json           bool
	// firstQuery is the text the command searches for once the store is
	// open in this process (engram.Options.FirstQuery); "" for none.
	firstQuery string
	// daemon: this command may run through a local daemon (daemon.go).
	daemon bool
	// logger, when set, is the store's (a long-running serve or mcp: what
	// the engine notices, such as its snapshot changed by another process).
	logger *slog.Logger
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
BM25 keyword ranking and vector similarity, fused by score for the built-in
models and by rank for served ones (search --fusion chooses), every result
explained.

The database is --db, else $ENGRAM_DB, else engram.db in the user's data directory;
a weaviate://HOST:PORT?class=Memory URL there runs on a Weaviate server instead.
The embedder is $ENGRAM_EMBEDDER: builtin (default, offline), or a built-in model by
name (minilm, static, glove, bge-small, multilingual), openai, ollama or none.`,
		SilenceUsage:  true,
		SilenceErrors: true,
		Version:       readBuild().short(),
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
		},
	}
	root.SetVersionTemplate("engram {{.Version}}\n")
	root.SuggestionsMinimumDistance = 2
	root.PersistentFlags().StringVar(&e.dbPath, "db", "", "database file, or a weaviate://HOST:PORT?class=Memory URL (default $ENGRAM_DB or the user data directory)")
	root.PersistentFlags().BoolVar(&e.json, "json", false, "machine-readable JSON output")
	root.SetFlagErrorFunc(flagError)
	for _, c := range registered {
		root.AddCommand(c(e))
	}
	for _, c := range root.Commands() {
		c.SilenceUsage = true
	}
	return root
}

// flagError is a flag parsing error as one usage line: an unknown flag names
// the nearest one the command has ("unknown flag --limt; did you mean
// --limit?") and where the flags are listed.
func flagError(cmd *cobra.Command, err error) error {
	msg := err.Error()
	if m := badFlagValue.FindStringSubmatch(msg); m != nil {
		// Not strconv's "strconv.ParseInt: parsing "abc": invalid syntax".
		want := "a valid value"
		if f := cmd.Flags().Lookup(strings.TrimPrefix(m[2], "--")); f != nil {
			want = flagKinds[f.Value.Type()]
			if want == "" {
				want = "a valid value"
			}
		}
		return usagef("%s %q: want %s", m[2], m[1], want)
	}
	name, ok := strings.CutPrefix(msg, "unknown flag: --")
	if !ok {
		return usageError{err}
	}
	var best []string
	bestD := 3 // two edits away at most (one for a short name), or a prefix
	if len(name) <= 3 {
		bestD = 2
	}
	cmd.Flags().VisitAll(func(f *pflag.Flag) {
		if f.Hidden {
			return
		}
		d := editDistance(strings.ToLower(name), f.Name)
		if d >= bestD && len(name) >= 3 && strings.HasPrefix(f.Name, name) {
			d = bestD - 1
		}
		switch {
		case d >= bestD && len(best) == 0:
		case d < bestD:
			best, bestD = []string{"--" + f.Name}, d
		case d == bestD:
			best = append(best, "--"+f.Name)
		}
	})
	help := fmt.Sprintf("engram help %s lists the flags", cmd.Name())
	if !cmd.HasParent() {
		help = "engram --help lists the flags"
	}
	if len(best) > 0 {
		return usagef("unknown flag --%s; did you mean %s? (%s)", name, strings.Join(best, " or "), help)
	}
	return usagef("unknown flag --%s (%s)", name, help)
}

// badFlagValue matches pflag's error for a value its flag cannot parse.
var badFlagValue = regexp.MustCompile(`^invalid argument "(.*)" for "(?:-\w, )?(--[\w-]+)" flag: `)

// flagKinds words a flag's value type for an error.
var flagKinds = map[string]string{
	"int": "an integer", "int64": "an integer", "uint": "a whole number", "float64": "a number",
	"bool": "true or false", "duration": "a duration such as 30s, 5m or 1h",
}

// editDistance is the Levenshtein distance between a and b.
func editDistance(a, b string) int {
	ra, rb := []rune(a), []rune(b)
	prev := make([]int, len(rb)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(ra); i++ {
		cur := make([]int, len(rb)+1)
		cur[0] = i
		for j := 1; j <= len(rb); j++ {
			cost := 1
			if ra[i-1] == rb[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev = cur
	}
	return prev[len(rb)]
}

// registered holds the subcommands, one file each, which add themselves with
// register from init: a new subcommand is one new file. Help lists them by name.
var registered []func(*env) *cobra.Command

func register(c func(*env) *cobra.Command) { registered = append(registered, c) }

// args wraps a cobra positional-argument check so that its error is one
// usage line saying what is missing or extra, and the command's usage line
// ("search: missing QUERY (engram search QUERY...)"), not cobra's "requires
// at least 1 arg(s), only received 0".
func args(check cobra.PositionalArgs) cobra.PositionalArgs {
	return func(cmd *cobra.Command, a []string) error {
		if check(cmd, a) == nil {
			return nil
		}
		usage := "usage: " + cmd.UseLine()
		var operands []string
		for _, w := range strings.Fields(cmd.Use)[1:] {
			if strings.HasPrefix(w, "-") || w == "|" {
				break
			}
			operands = append(operands, strings.TrimSuffix(w, "..."))
		}
		switch {
		case len(operands) == 0:
			return usagef("%s takes no arguments, got %q (%s)", cmd.Name(), strings.Join(a, " "), usage)
		case len(a) == 0:
			return usagef("%s: missing %s (%s)", cmd.Name(), strings.Join(operands, " "), usage)
		}
		return usagef("%s: %d arguments given, want one %s: quote an argument with spaces (%s)", cmd.Name(), len(a), strings.Join(operands, " "), usage)
	}
}

// path resolves the database path; create makes the default data directory.
func (e *env) path(create bool) (string, error) {
	if e.dbPath != "" {
		return sqlite.FilePath(e.dbPath), nil
	}
	if p := os.Getenv("ENGRAM_DB"); p != "" {
		return sqlite.FilePath(p), nil
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
	opts.Logger = e.logger
	opts.FirstQuery = e.firstQuery
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
	// No separate warm-up of the model: the first search embeds its query
	// while the index loads (engram's prefetch), which sets the model up
	// on the way; a warm-up beside it cost 1–5 ms more CPU a call (perf
	// stat of inject, 30 calls, three alternating pairs).
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
