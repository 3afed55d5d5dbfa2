package main

import (
	"fmt"
	"sort"
	"strings"

	"github.com/spf13/cobra"

	"github.com/engram-memory/engram/backend/weaviate"
	"github.com/engram-memory/engram/embed/builtin"
)

func init() { register(newStats) }

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
				bad := ""
				if n := len(s.BadRows); n > 0 {
					skipped := 0
					for _, b := range s.BadRows {
						if b.Skipped {
							skipped++
						}
					}
					bad = fmt.Sprintf("%d bad rows (%d skipped): engram doctor explains them\n", n, skipped)
				}
				size := fmt.Sprintf(", %d bytes", s.FileBytes)
				if s.FileBytes == 0 && weaviate.IsURL(s.Path) {
					size = "" // a server's store: no file to measure
				}
				embedder := s.Embedder
				if d := builtin.Describe(embedder); d != "" {
					embedder += " (" + d + ")"
				}
				return e.outf(s, "%s: %d memories (%d favorites)%s\nembedder %s, vector weight %g (%s)\nembedded: %s\ntypes: %s\n%s",
					s.Path, s.Memories, s.Favorites, size, embedder, s.VectorWeight, s.WeightSource, counts(s.Embedded), counts(s.Types), bad)
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
