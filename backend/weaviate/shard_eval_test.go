package weaviate

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/engram-memory/engram/embed/glove"
	"github.com/engram-memory/engram/internal/eval"
	"github.com/engram-memory/engram/internal/weaviatetest"
	"github.com/engram-memory/engram/memory"
)

// TestShardedKeywordEval measures what sharding a class does to the keyword
// leg: Weaviate keeps BM25 statistics (document count, document
// frequencies, mean length) per shard, so a class split over shards scores
// each hit against its own shard's statistics. It loads SciFact into a
// one-shard and a three-shard class of the cluster (.ci/weaviate
// cluster-start), both with three replicas, and scores the same queries
// against both in one run (Config.Shards). Not part of the default run:
//
//	ENGRAM_WEAVIATE_SHARD_EVAL=1 ENGRAM_DATA=/work/shared/data ENGRAM_WEAVIATE_CLUSTER=DIR \
//	    go test -run TestShardedKeywordEval -v -timeout 1h ./backend/weaviate
//
// docs/weaviate.md records the figures and the choice they led to.
func TestShardedKeywordEval(t *testing.T) {
	if os.Getenv("ENGRAM_WEAVIATE_SHARD_EVAL") == "" {
		t.Skip("set ENGRAM_WEAVIATE_SHARD_EVAL=1, ENGRAM_DATA and ENGRAM_WEAVIATE_CLUSTER to measure")
	}
	dir := os.Getenv("ENGRAM_DATA")
	if dir == "" {
		dir = "../../../../shared/data"
	}
	ds, err := eval.LoadBEIR(filepath.Join(dir, "scifact"), "test")
	if err != nil {
		t.Fatal(err)
	}
	emb, err := glove.Default()
	if err != nil {
		t.Fatal(err)
	}
	cl := weaviatetest.ClusterFromEnv(t)
	base := cl.URLs[0]
	ctx := context.Background()
	c := ds.Corpora[0]
	now := time.Now().UTC()
	docs := make([]*memory.Memory, len(c.Docs))
	texts := make([]string, len(c.Docs))
	for i, d := range c.Docs {
		m := *d
		m.CreatedAt, m.UpdatedAt = now, now
		if err := m.Normalize(); err != nil {
			t.Fatal(err)
		}
		m.ContentHash = m.ComputeHash()
		docs[i], texts[i] = &m, m.EmbedText()
	}
	vecs, err := emb.Embed(ctx, texts)
	if err != nil {
		t.Fatal(err)
	}
	for i, v := range vecs {
		if v != nil {
			docs[i].Embedding = &memory.Embedding{Model: emb.Model(), Dim: len(v), Vector: v}
		}
	}
	qvecs := make([][]float32, len(c.Cases))
	for i, cs := range c.Cases {
		v, err := emb.Embed(ctx, []string{cs.Text})
		if err != nil {
			t.Fatal(err)
		}
		qvecs[i] = v[0]
	}
	var modes []evalMode
	for _, m := range evalModes(emb.Model(), nil) {
		switch m.name {
		case "bm25", "vector", "hybrid-rsf (Engram fusion)", "native-rsf":
			modes = append(modes, m)
		}
	}
	var b strings.Builder
	fmt.Fprintf(&b, "SciFact, %d docs, %d queries, limit %d, 3 replicas, cluster of 3\n%-30s", len(docs), len(c.Cases), eval.DefaultLimit, "shards / mode")
	for _, k := range []string{eval.NDCG10, eval.Recall100} {
		fmt.Fprintf(&b, " %10s", k)
	}
	fmt.Fprintf(&b, " %9s\n", "p50 ms")
	for _, shards := range []int{1, 3} {
		s, err := Open(ctx, Config{Endpoint: base, GRPCPort: cl.GRPCPorts[0], Class: weaviatetest.Class(t, base), Replicas: 3, Shards: shards, Timeout: time.Minute})
		if err != nil {
			t.Fatal(err)
		}
		if err := s.Put(ctx, docs); err != nil {
			t.Fatal(err)
		}
		if counts, err := shardCounts(ctx, base, s.cfg.Class); err != nil || len(counts) != shards {
			t.Fatalf("class %s has shards %v (%v), want %d", s.cfg.Class, counts, err, shards)
		}
		for _, m := range modes {
			sum := eval.Metrics{}
			var times []time.Duration
			for i, cs := range c.Cases {
				start := time.Now()
				ranked, err := m.search(ctx, s, cs.Text, qvecs[i], eval.DefaultLimit)
				times = append(times, time.Since(start))
				if err != nil {
					t.Fatalf("%d shards, %s %q: %v", shards, m.name, cs.Text, err)
				}
				for k, v := range eval.Score(ranked, cs.Gold) {
					sum[k] += v
				}
			}
			fmt.Fprintf(&b, "%d / %-26s", shards, m.name)
			for _, k := range []string{eval.NDCG10, eval.Recall100} {
				fmt.Fprintf(&b, " %10.4f", sum[k]/float64(len(c.Cases)))
			}
			fmt.Fprintf(&b, " %9.2f\n", ms(percentile(times, 0.5)))
		}
		s.Drop(ctx)
		s.Close()
	}
	t.Log("\n" + b.String())
}
