package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/spf13/cobra"

	"github.com/engram-memory/engram"
)

func init() { register(newImport) }

func newImport(e *env) *cobra.Command {
	var skip bool
	c := &cobra.Command{
		Use:   "import FILE|-",
		Short: "Load memories from JSONL (all or nothing unless --skip-invalid)",
		Args:  args(cobra.ExactArgs(1)),
		RunE: func(cmd *cobra.Command, a []string) error {
			var in io.Reader = e.stdin
			if a[0] != "-" {
				f, err := os.Open(a[0])
				if err != nil {
					return usagef("import: %v", err)
				}
				defer f.Close()
				if fi, err := f.Stat(); err == nil && fi.IsDir() {
					return usagef("import: %s is a directory: give a JSONL file, or - for standard input", a[0])
				}
				in = f
			}
			return e.withNewStore(cmd.Context(), func(db store) error {
				res, err := db.Import(cmd.Context(), in, engram.ImportOptions{SkipInvalid: skip, Progress: e.progressBar("embed")})
				var bad engram.LineError
				if err != nil && !skip && errors.As(err, &bad) {
					return fmt.Errorf("%w; --skip-invalid imports the valid lines", err)
				}
				if err != nil && errors.Is(err, context.Canceled) && cmd.Context().Err() != nil {
					// One write: an interrupted import stored none of it.
					return fmt.Errorf("import interrupted before its write: nothing imported (%w)", err)
				}
				if err != nil {
					return err
				}
				for _, s := range res.Skipped {
					fmt.Fprintf(e.stderr, "engram: skipped %v\n", s)
				}
				e.warnDeferred(res.Deferred)
				return e.out(res, func(w io.Writer) error {
					merged := ""
					if len(res.Merged) > 0 {
						merged = fmt.Sprintf(", %d merged into memories with the same text", len(res.Merged))
					}
					_, err := fmt.Fprintf(w, "imported %d memories (%d embedded, %d lines skipped%s)\n",
						len(res.IDs)-len(res.Merged), res.Embedded, len(res.Skipped), merged)
					return err
				})
			})
		},
	}
	c.Flags().BoolVar(&skip, "skip-invalid", false, "import the valid lines and report each skipped line")
	return c
}
