// Command engram is the CLI of the Engram memory engine: store memories in one
// SQLite file and recall them with hybrid BM25 + vector search.
package main

import (
	"context"
	"errors"
	"fmt"
	"github.com/engram-memory/engram/backend/sqlite"
	"io"
	"os"
	"os/signal"

	"github.com/engram-memory/engram"
	"github.com/engram-memory/engram/internal/format"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	code := run(ctx, os.Args[1:], os.Stdin, os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

// run executes one command line and returns the exit code: 0 success, 2 bad
// input (usage, invalid data, unknown id, unusable file), 1 internal error.
func run(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	root := newRoot(&env{stdin: stdin, stdout: stdout, stderr: stderr})
	root.SetArgs(args)
	root.SetIn(stdin)
	root.SetOut(stdout)
	root.SetErr(stderr)
	err := root.ExecuteContext(ctx)
	if err == nil {
		return 0
	}
	fmt.Fprintln(stderr, "engram: "+format.OneLine(err.Error()))
	return exitCode(err)
}

// usageError marks an error as the caller's: exit code 2.
type usageError struct{ err error }

func (e usageError) Error() string { return e.err.Error() }
func (e usageError) Unwrap() error { return e.err }

func usagef(format string, a ...any) error { return usageError{fmt.Errorf(format, a...)} }

func exitCode(err error) int {
	var ue usageError
	switch {
	case errors.As(err, &ue),
		errors.Is(err, engram.ErrInvalid),
		errors.Is(err, engram.ErrInvalidQuery),
		errors.Is(err, engram.ErrNotFound),
		errors.Is(err, sqlite.ErrNotEngram),
		errors.Is(err, sqlite.ErrNewerSchema),
		errors.Is(err, sqlite.ErrBadPath),
		errors.Is(err, sqlite.ErrDamaged),
		errors.Is(err, sqlite.ErrOldSchema),
		errors.Is(err, sqlite.ErrReadOnly),
		errors.Is(err, engram.ErrScope):
		return 2
	}
	return 1
}
