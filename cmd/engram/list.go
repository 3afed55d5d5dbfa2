package main

import (
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/engram-memory/engram"
	"github.com/engram-memory/engram/internal/format"
	"github.com/engram-memory/engram/internal/when"
	"github.com/engram-memory/engram/memory"
)

func init() { register(newList) }

func newList(e *env) *cobra.Command {
	var (
		opt                engram.ListOptions
		scope              []string
		since, until, asOf string
	)
	c := &cobra.Command{
		Use:   "list",
		Short: "List memories: filtered, ordered, a page at a time",
		Long: `List the memories the filters admit, one a line ("ID [type date] name: text",
the text cut to one line), newest first unless --order says otherwise
(` + strings.Join(engram.ListOrders, ", ") + `; a leading - is descending, ties
go by id). A page holds --limit memories; when there are more, the command
that prints the next page goes to stderr (--cursor). --json prints the page:
{"memories": [...], "next_cursor": "..."}.`,
		Example: `  engram list --scope user=u7 --order -updated_at --limit 20
  engram list --type instruction --since 30d --json
  engram list --episode chat-7 --order seq`,
		Args: args(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, _ []string) error {
			sc, err := memory.ParseScope(scope...)
			if err != nil {
				return usageError{fmt.Errorf("--scope: %w", err)}
			}
			opt.Scope = sc
			now := time.Now()
			for _, t := range []struct {
				flag, v string
				dst     **time.Time
			}{{"--since", since, &opt.Since}, {"--until", until, &opt.Until}, {"--as-of", asOf, &opt.AsOf}} {
				if t.v == "" {
					continue
				}
				at, err := when.Parse(t.v, now)
				if err != nil {
					return usagef("%s: %v", t.flag, err)
				}
				*t.dst = &at
			}
			if opt.Limit < 1 || opt.Limit > engram.MaxListLimit {
				return usagef("--limit %d: want 1 to %d", opt.Limit, engram.MaxListLimit)
			}
			return e.withStore(cmd.Context(), func(db store) error {
				page, err := db.List(cmd.Context(), opt)
				if err != nil {
					return err
				}
				if err := e.out(page, func(w io.Writer) error { return writeList(w, page) }); err != nil {
					return err
				}
				if page.NextCursor != "" && !e.json {
					fmt.Fprintf(e.stderr, "engram: more: %s\n", repeatCommand(cmd, []string{"cursor"}, "--cursor", page.NextCursor))
				}
				return nil
			})
		},
	}
	fl := c.Flags()
	fl.StringArrayVar(&scope, "scope", nil, "only memories in scope key=value (repeatable, or k=v,k=v)")
	fl.StringVar(&opt.Type, "type", "", "only memories of this type")
	fl.StringVar(&opt.Scene, "scene", "", "only memories of this scene")
	fl.StringVar(&opt.Source, "source", "", "only memories from this source")
	fl.StringArrayVar(&opt.Tags, "tag", nil, "only memories with this tag (repeatable: all must hold)")
	fl.StringVar(&since, "since", "", "created at or after: RFC 3339, YYYY-MM-DD, or an age such as 7d or 12h")
	fl.StringVar(&until, "until", "", "created before: same forms as --since")
	fl.StringVar(&opt.Episode, "episode", "", "only the memories of this episode (with --order seq: in its order)")
	fl.StringVar(&opt.Supersedes, "supersedes", "", "only the memories that supersede this id")
	fl.BoolVar(&opt.Current, "current", false, "only what is current: no memory another supersedes")
	fl.StringVar(&asOf, "as-of", "", "only what was current then: same forms as --since")
	fl.StringVar(&opt.Order, "order", engram.OrderNewest, "order: "+strings.Join(engram.ListOrders, ", "))
	fl.IntVar(&opt.Limit, "limit", engram.DefaultListLimit, fmt.Sprintf("memories a page (1–%d)", engram.MaxListLimit))
	fl.StringVar(&opt.Cursor, "cursor", "", "continue from the page that printed it")
	return viaDaemon(c)
}

// writeList prints one memory a line.
func writeList(w io.Writer, page *engram.ListPage) error {
	var b strings.Builder
	for _, m := range page.Memories {
		fmt.Fprintf(&b, "%s [%s %s", m.ID, m.Type, m.OccurredAt.Format("2006-01-02"))
		if m.Favorite {
			b.WriteString(", favorite")
		}
		if m.Uses > 0 {
			fmt.Fprintf(&b, ", %d uses", m.Uses)
		}
		b.WriteString("] ")
		title := ""
		if m.Name != "" {
			title = format.OneLine(m.Name) + ": "
		}
		if m.Speaker != "" {
			title += format.OneLine(m.Speaker) + ": "
		}
		b.WriteString(format.Truncate(title+format.OneLine(m.Text), 120) + "\n")
	}
	_, err := io.WriteString(w, b.String())
	return err
}
