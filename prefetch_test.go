package engram_test

import (
	"context"
	"hash/fnv"
	"math"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/engram-memory/engram"
	"github.com/engram-memory/engram/backend/memback"
	"github.com/engram-memory/engram/memory"
)

// countingModel is an in-process embedder whose vectors are a hash of the
// text, counting the texts it embeds.
type countingModel struct {
	mu    sync.Mutex
	calls map[string]int
}

func (m *countingModel) Model() string   { return "counting-v1" }
func (m *countingModel) InProcess() bool { return true }
func (m *countingModel) Embed(_ context.Context, texts []string) ([][]float32, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.calls == nil {
		m.calls = map[string]int{}
	}
	out := make([][]float32, len(texts))
	for i, t := range texts {
		m.calls[t]++
		v := make([]float32, 16)
		var norm float64
		for d := range v {
			h := fnv.New32a()
			h.Write([]byte{byte(d)})
			for _, w := range strings.Fields(strings.ToLower(t)) {
				h.Write([]byte(w))
				v[d] += float32(h.Sum32()%1000) / 1000
			}
			norm += float64(v[d]) * float64(v[d])
		}
		for d := range v {
			v[d] /= float32(math.Sqrt(norm) + 1e-9)
		}
		out[i] = v
	}
	return out, nil
}

func (m *countingModel) count(text string) int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.calls[text]
}

// TestSearchPrefetch: the first search of a freshly opened store embeds its
// query while the index loads, once, and answers exactly as the same search
// does once the index is loaded; a keyword-only or HyDE search, or one with
// the index loaded, prefetches nothing.
func TestSearchPrefetch(t *testing.T) {
	path := filepath.Join(t.TempDir(), "p.db")
	m := &countingModel{}
	db, err := engram.Open(context.Background(), path, engram.Options{Embedder: m})
	if err != nil {
		t.Fatal(err)
	}
	add(t, db,
		&engram.Memory{ID: "port", Text: "The staging database listens on port 5433"},
		&engram.Memory{ID: "theme", Text: "Prefers dark themes in every editor"},
		&engram.Memory{ID: "standup", Text: "Standup is at 9:30 every weekday"})
	db.Close()

	for _, c := range []struct {
		name  string
		q     engram.Query
		first int // embeddings of the query text by the first search
	}{
		{"hybrid", engram.Query{Query: "  which port does the database use "}, 1},
		{"vector", engram.Query{Query: "editor colours", Mode: memory.ModeVector}, 1},
		{"bm25", engram.Query{Query: "database port", Mode: memory.ModeBM25}, 0},
	} {
		t.Run(c.name, func(t *testing.T) {
			db, err := engram.Open(context.Background(), path, engram.Options{Embedder: m})
			if err != nil {
				t.Fatal(err)
			}
			defer db.Close()
			c.q.NoRecord = true
			text := strings.TrimSpace(c.q.Query) // as recall embeds it
			before := m.count(text)
			first := search(t, db, c.q)
			if got := m.count(text) - before; got != c.first {
				t.Errorf("first search embedded the query %d times, want %d", got, c.first)
			}
			again := search(t, db, c.q)
			if !slices.Equal(ids(first), ids(again)) || len(first.Results) == 0 {
				t.Fatalf("first search %v, again %v", ids(first), ids(again))
			}
			for i := range first.Results {
				if first.Results[i].Score != again.Results[i].Score {
					t.Errorf("result %d: score %v, then %v", i, first.Results[i].Score, again.Results[i].Score)
				}
			}
			if len(first.Degraded) != len(again.Degraded) {
				t.Errorf("degraded %v, then %v", first.Degraded, again.Degraded)
			}
		})
	}
}

// TestFirstQuery: with Options.FirstQuery set, on SQLite or another backend,
// the first search's text is embedded once in all (by Open or by the search)
// and the search answers as the same search does after it; a first search
// of another text embeds its own; without a model nothing is embedded.
// TestFirstQueryTaken shows the search takes the vector Open started.
func TestFirstQuery(t *testing.T) {
	dir := t.TempDir()
	seed := []*engram.Memory{
		{ID: "port", Text: "The staging database listens on port 5433"},
		{ID: "theme", Text: "Prefers dark themes in every editor"},
		{ID: "standup", Text: "Standup is at 9:30 every weekday"}}
	for _, c := range []struct {
		name, backend string
		first, query  string
		noEmbedder    bool
		want          map[string]int // embeddings of each text, after the first search
	}{
		{"sqlite, the same text", "sqlite", "which port does the database use", "  which port does the database use ", false,
			map[string]int{"which port does the database use": 1}},
		{"sqlite, another text", "sqlite", "editor colours?", "database port", false,
			map[string]int{"database port": 1}},
		{"memback, the same text", "memback", "editor colours", "editor colours", false,
			map[string]int{"editor colours": 1}},
		{"no model", "sqlite", "database port", "database port", true, map[string]int{"database port": 0}},
	} {
		t.Run(c.name, func(t *testing.T) {
			m := &countingModel{}
			opts := engram.Options{Embedder: m, NoEmbedder: c.noEmbedder, FirstQuery: c.first}
			if c.noEmbedder {
				opts.Embedder = nil
			}
			open := func(opts engram.Options) *engram.DB {
				t.Helper()
				var db *engram.DB
				var err error
				if c.backend == "memback" {
					db, err = engram.OpenBackend(context.Background(), memback.New(), opts)
				} else {
					db, err = engram.Open(context.Background(), filepath.Join(dir, strings.ReplaceAll(c.name, " ", "_")+".db"), opts)
				}
				if err != nil {
					t.Fatal(err)
				}
				return db
			}
			var db *engram.DB
			if c.backend == "memback" {
				db = open(opts) // an in-memory store: filled after opening (no memory has the query's text)
				add(t, db, seed...)
			} else {
				setup := opts
				setup.FirstQuery = ""
				db = open(setup)
				add(t, db, seed...)
				db.Close()
				m.mu.Lock()
				m.calls = nil
				m.mu.Unlock()
				db = open(opts)
			}
			defer db.Close()
			q := engram.Query{Query: c.query, NoRecord: true}
			first := search(t, db, q)
			for text, n := range c.want {
				if got := m.count(text); got != n {
					t.Errorf("%q embedded %d times by the first search, want %d", text, got, n)
				}
			}
			if c.first != strings.TrimSpace(c.query) && m.count(c.first) > 1 {
				t.Errorf("the first query %q embedded %d times", c.first, m.count(c.first))
			}
			again := search(t, db, q)
			if !slices.Equal(ids(first), ids(again)) || len(first.Results) == 0 {
				t.Fatalf("first search %v, again %v", ids(first), ids(again))
			}
			for i := range first.Results {
				if first.Results[i].Score != again.Results[i].Score {
					t.Errorf("result %d: score %v, then %v", i, first.Results[i].Score, again.Results[i].Score)
				}
			}
		})
	}
}
