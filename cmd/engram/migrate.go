package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"reflect"
	"time"

	"github.com/spf13/cobra"

	"github.com/engram-memory/engram"
	"github.com/engram-memory/engram/backend"
	"github.com/engram-memory/engram/backend/weaviate"
	"github.com/engram-memory/engram/memory"
)

func init() { register(newMigrate) }

// migrateFlags are migrate's options.
type migrateFlags struct {
	from, to      string
	batch, sample int
}

// migrateReport is what migrate did, for --json.
type migrateReport struct {
	From      string  `json:"from"`
	To        string  `json:"to"`
	Copied    int     `json:"copied"`
	Source    int     `json:"source_memories"`
	Target    int     `json:"target_memories"`
	Sampled   int     `json:"sampled"`
	Seconds   float64 `json:"seconds"`
	PerSecond float64 `json:"memories_per_second"`
}

func newMigrate(e *env) *cobra.Command {
	var f migrateFlags
	c := &cobra.Command{
		Use:   "migrate",
		Short: "Copy every memory, vectors included, from one store to another (a file or a Weaviate URL)",
		Long: `Copy every memory of --from into --to as stored: ids, scopes, times, counters
and vectors, nothing re-embedded. Either side is a SQLite file or a
weaviate://HOST:PORT?class=Memory URL; --to is created when missing.

Memories go out in batches of --batch. A memory already at --to with the
same id and scope is replaced, so an interrupted migration is resumed by
running the same command again. At the end migrate checks that --to holds
every memory of --from (counts) and that --sample memories spread over the
source read back identical, vectors included; a difference exits 1.`,
		Example: `  engram migrate --from agent.db --to 'weaviate://127.0.0.1:8080?class=Memory&tenant=team'
  engram migrate --from 'weaviate://127.0.0.1:8080?class=Memory' --to copy.db`,
		Args: args(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, _ []string) error { return e.migrate(cmd.Context(), f) },
	}
	fl := c.Flags()
	fl.StringVar(&f.from, "from", "", "the store to copy: a file or a weaviate:// URL (required)")
	fl.StringVar(&f.to, "to", "", "the store to copy into: a file or a weaviate:// URL (required)")
	fl.IntVar(&f.batch, "batch", 500, "memories written per batch (1-10000)")
	fl.IntVar(&f.sample, "sample", 100, "memories compared field by field at the end (0: none)")
	return c
}

// openStore opens a store location for migrate: a file that must exist
// unless create, or a Weaviate URL. No embedder: nothing is embedded.
func openStore(ctx context.Context, flag, loc string, create bool) (*engram.DB, error) {
	if loc == "" {
		return nil, usagef("migrate: --%s is required", flag)
	}
	if weaviate.IsURL(loc) {
		if _, err := weaviate.ParseURL(loc); err != nil {
			return nil, usagef("migrate: --%s: %v", flag, err)
		}
	} else if !create {
		if _, err := os.Stat(loc); err != nil {
			return nil, usagef("migrate: --%s %s: %v", flag, loc, err)
		}
	}
	db, err := engram.Open(ctx, loc, engram.Options{NoEmbedder: true})
	if err != nil {
		return nil, fmt.Errorf("migrate: --%s: %w", flag, err)
	}
	return db, nil
}

func (e *env) migrate(ctx context.Context, f migrateFlags) error {
	if f.batch < 1 || f.batch > 10000 {
		return usagef("migrate: --batch %d: want 1-10000", f.batch)
	}
	if f.sample < 0 {
		return usagef("migrate: --sample %d: want 0 or more", f.sample)
	}
	if f.from != "" && f.from == f.to {
		return usagef("migrate: --from and --to are the same store")
	}
	src, err := openStore(ctx, "from", f.from, false)
	if err != nil {
		return err
	}
	defer src.Close()
	dst, err := openStore(ctx, "to", f.to, true)
	if err != nil {
		return err
	}
	defer dst.Close()
	rep := migrateReport{From: src.Path(), To: dst.Path()}
	total := src.Count()
	progress := e.progressBar("migrate")
	start := time.Now()
	var batch []*memory.Memory
	var keys []memRef // every source memory, in order, for the sample
	flush := func() error {
		if len(batch) == 0 {
			return nil
		}
		if err := dst.Backend().Put(ctx, nil, batch); err != nil {
			return fmt.Errorf("migrate: write memories %d..%d: %w (run the same command again to resume)", rep.Copied+1, rep.Copied+len(batch), err)
		}
		rep.Copied += len(batch)
		batch = nil
		if progress != nil && total > 0 {
			progress(min(rep.Copied, total), total)
		} else if !e.json {
			fmt.Fprintf(e.stderr, "migrate: %d memories copied\n", rep.Copied)
		}
		return nil
	}
	err = src.Backend().List(ctx, backend.ListQuery{Vectors: true}, func(m *memory.Memory) error {
		keys = append(keys, memRef{id: m.ID, scope: maps.Clone(m.Scope)})
		batch = append(batch, m)
		if len(batch) >= f.batch {
			return flush()
		}
		return nil
	})
	if err == nil {
		err = flush()
	}
	if err != nil {
		return err
	}
	rep.Seconds = time.Since(start).Seconds()
	if rep.Seconds > 0 {
		rep.PerSecond = float64(rep.Copied) / rep.Seconds
	}
	if err := verifyMigration(ctx, src, dst, keys, f.sample, &rep); err != nil {
		return err
	}
	return e.out(rep, func(w io.Writer) error {
		_, err := fmt.Fprintf(w, "migrated %d memories from %s to %s in %.1fs (%.0f/s); %s holds %d, %d sampled memories identical\n",
			rep.Copied, rep.From, rep.To, rep.Seconds, rep.PerSecond, rep.To, rep.Target, rep.Sampled)
		return err
	})
}

// memRef names one memory: its id in its scope.
type memRef struct {
	id    string
	scope map[string]string
}

// errMigrateMismatch marks a migration whose check failed.
var errMigrateMismatch = errors.New("migrate: the copy differs from the source")

// verifyMigration checks that dst holds as many memories as src (or more,
// when it held others before) and that n memories spread evenly over the
// source's keys read back from dst exactly as src has them.
func verifyMigration(ctx context.Context, src, dst *engram.DB, keys []memRef, n int, rep *migrateReport) error {
	rep.Source = src.Count()
	rep.Target = dst.Count()
	if rep.Source != len(keys) {
		return fmt.Errorf("%w: the source changed during the copy (%d memories listed, %d now): run it again", errMigrateMismatch, len(keys), rep.Source)
	}
	if rep.Target < rep.Source {
		return fmt.Errorf("%w: %d memories at the destination, %d in the source", errMigrateMismatch, rep.Target, rep.Source)
	}
	n = min(n, len(keys))
	for i := 0; i < n; i++ {
		id, scope := keys[i*len(keys)/n].id, keys[i*len(keys)/n].scope
		scopeJSON := memory.ScopeJSON(scope)
		want, err := src.Backend().Get(ctx, scope, []string{id})
		if err != nil {
			return fmt.Errorf("migrate: read sample %s from the source: %w", id, err)
		}
		got, err := dst.Backend().Get(ctx, scope, []string{id})
		if err != nil {
			return fmt.Errorf("migrate: read sample %s from the destination: %w", id, err)
		}
		if !reflect.DeepEqual(got[id], want[id]) {
			return fmt.Errorf("%w: memory %s (scope %s) reads back differently", errMigrateMismatch, id, scopeJSON)
		}
		rep.Sampled++
	}
	return nil
}
