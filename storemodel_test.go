package engram_test

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/engram-memory/engram"
	"github.com/engram-memory/engram/backend/memback"
	"github.com/engram-memory/engram/embed"
	"github.com/engram-memory/engram/embed/builtin"
)

// TestStoreKeepsItsModel: a store opened with no embedder named gets the
// default model when it is new, and keeps the built-in model its vectors
// come from otherwise (a store embedded with MiniLM before bge-small became
// the default), until a reindex names another; vectors of a model that is
// not a built-in one leave it on the default. Its searches, the first one
// included (Options.FirstQuery), then compare its vectors with the query's.
func TestStoreKeepsItsModel(t *testing.T) {
	ctx := context.Background()
	minilm, err := builtin.New(builtin.MiniLM)
	if err != nil {
		t.Fatal(err)
	}
	def, err := builtin.New(builtin.Default)
	if err != nil {
		t.Fatal(err)
	}
	static, err := builtin.New(builtin.Static)
	if err != nil {
		t.Fatal(err)
	}
	served := embed.Func{ModelID: "served-v1", F: func(_ context.Context, texts []string) ([][]float32, error) {
		out := make([][]float32, len(texts))
		for i := range texts {
			out[i] = []float32{1, 0, 0}
		}
		return out, nil
	}}
	cases := []struct {
		name    string
		writers []embed.Embedder // each adds a memory, in turn
		reindex int              // after the writer of this index, a reindex with it; -1: none
		want    embed.Embedder
	}{
		{"new store", nil, -1, def},
		{"embedded with the default", []embed.Embedder{def}, -1, def},
		{"embedded with minilm", []embed.Embedder{minilm}, -1, minilm},
		{"minilm, then the default", []embed.Embedder{minilm, def}, -1, def},
		{"the default, then minilm", []embed.Embedder{def, minilm}, -1, minilm},
		{"reindexed with the default", []embed.Embedder{minilm, minilm, def}, 2, def},
		{"reindexed with minilm", []embed.Embedder{def, minilm}, 1, minilm},
		// The reindex's model stands, though a later write named another.
		{"reindexed, then written with another", []embed.Embedder{minilm, def, minilm}, 1, def},
		{"a served model", []embed.Embedder{served}, -1, def},
	}
	texts := []string{"Prefers dark themes in every editor", "The staging database runs Postgres on port 5433", "Deploys go out on Tuesdays"}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "s.db")
			for i, w := range c.writers {
				db, err := engram.Open(ctx, path, engram.Options{Embedder: w})
				if err != nil {
					t.Fatal(err)
				}
				if _, err := db.Add(ctx, &engram.Memory{Text: texts[i]}); err != nil {
					t.Fatal(err)
				}
				if i == c.reindex {
					if _, err := db.Reindex(ctx, false, nil); err != nil {
						t.Fatal(err)
					}
				}
				db.Close()
			}
			// The first query's vector starts with the default model beside
			// the opening; a store that keeps another model drops it.
			const q = "which colour scheme does the user like"
			db, err := engram.Open(ctx, path, engram.Options{FirstQuery: q})
			if err != nil {
				t.Fatal(err)
			}
			defer db.Close()
			if got := db.Embedder().Model(); got != c.want.Model() {
				t.Fatalf("opened with no embedder named: model %s, want %s", got, c.want.Model())
			}
			if len(c.writers) == 0 || c.want.Model() != c.writers[len(c.writers)-1].Model() && c.reindex < 0 {
				return // no vector of the model searched with, or a served model's
			}
			resp, err := db.Search(ctx, engram.Query{Query: q, NoRecord: true})
			if err != nil {
				t.Fatal(err)
			}
			if resp.Strategy != "hybrid" || len(resp.Results) == 0 || resp.Results[0].Explain.Vector == nil {
				t.Errorf("strategy %s, degraded %v: the store's vectors were not searched", resp.Strategy, resp.Degraded)
			}
		})
	}

	// Another backend: the model most of its vectors come from, neither the
	// one that wrote last nor the later name (static's).
	be := memback.New()
	for _, w := range []struct {
		e    embed.Embedder
		mems []*engram.Memory
	}{
		{minilm, []*engram.Memory{{Text: texts[0]}, {Text: texts[1]}}},
		{static, []*engram.Memory{{Text: texts[2]}}},
	} {
		db, err := engram.OpenBackend(ctx, be, engram.Options{Embedder: w.e})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := db.Add(ctx, w.mems...); err != nil {
			t.Fatal(err)
		}
	}
	db2, err := engram.OpenBackend(ctx, be, engram.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if got := db2.Embedder().Model(); !strings.HasPrefix(got, "all-minilm-l6-v2-") {
		t.Errorf("memback store of two MiniLM vectors and one of the static model's, opened with no embedder named: model %s", got)
	}
}
