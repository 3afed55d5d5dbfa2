package main

import (
	"fmt"
	"sort"
	"strings"

	"github.com/spf13/cobra"

	"github.com/engram-memory/engram"
	"github.com/engram-memory/engram/internal/format"
)

func newEmbed(e *env) *cobra.Command {
	return &cobra.Command{
		Use:   "embed TEXT",
		Short: "Print TEXT's embedding as a JSON array (the model id goes to stderr)",
		Args:  args(cobra.ExactArgs(1)),
		RunE: func(cmd *cobra.Command, a []string) error {
			opts, err := optionsFromEnv()
			if err != nil {
				return err
			}
			emb := opts.Embedder
			if emb == nil && !opts.NoEmbedder {
				if emb, err = engram.BuiltinEmbedder(); err != nil {
					return err
				}
			}
			if emb == nil {
				return usagef("embed: no embedder (ENGRAM_EMBEDDER=none)")
			}
			vecs, err := emb.Embed(cmd.Context(), []string{a[0]})
			if err != nil {
				return fmt.Errorf("embedder %s: %w", emb.Model(), err)
			}
			if len(vecs) != 1 || vecs[0] == nil {
				return usagef("embed: %s has no vector for this text (no known word)", emb.Model())
			}
			fmt.Fprintln(e.stderr, emb.Model())
			return format.JSON(e.stdout, vecs[0], true)
		},
	}
}

func newReindex(e *env) *cobra.Command {
	var force bool
	c := &cobra.Command{
		Use:   "reindex",
		Short: "Embed memories that lack a vector from the current model (--force: all)",
		Args:  args(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, _ []string) error {
			return e.withDB(cmd.Context(), func(db *engram.DB) error {
				res, err := db.Reindex(cmd.Context(), force, nil)
				if err != nil {
					return err
				}
				return e.outf(res, "reindexed with %s: %d checked, %d embedded, %d without a vector\n",
					res.Model, res.Checked, res.Embedded, res.NoVector)
			})
		},
	}
	c.Flags().BoolVar(&force, "force", false, "re-embed every memory")
	return c
}

func newStats(e *env) *cobra.Command {
	return &cobra.Command{
		Use:   "stats",
		Short: "Count what the store holds",
		Args:  args(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, _ []string) error {
			return e.withStore(cmd.Context(), func(db store) error {
				s, err := db.Stats(cmd.Context())
				if err != nil {
					return err
				}
				return e.outf(s, "%s: %d memories (%d favorites), %d bytes\nembedder %s, vector weight %g (%s)\nembedded: %s\ntypes: %s\n",
					s.Path, s.Memories, s.Favorites, s.FileBytes, s.Embedder, s.VectorWeight, s.WeightSource, counts(s.Embedded), counts(s.Types))
			})
		},
	}
}

// counts renders a count map as "a 3, b 1", largest first, or "none".
func counts(m map[string]int) string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool {
		if m[keys[i]] != m[keys[j]] {
			return m[keys[i]] > m[keys[j]]
		}
		return keys[i] < keys[j]
	})
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = fmt.Sprintf("%s %d", k, m[k])
	}
	if len(parts) == 0 {
		return "none"
	}
	return strings.Join(parts, ", ")
}
