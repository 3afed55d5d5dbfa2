package engram

import (
	"context"
	"errors"
	"path/filepath"
	"sync/atomic"
	"testing"

	"github.com/engram-memory/engram/embed"
	"github.com/engram-memory/engram/memory"
)

// inProcess is an in-process embedder counting its calls; fail makes it fail.
type inProcess struct {
	calls atomic.Int32
	fail  bool
}

func (m *inProcess) Model() string   { return "inproc-v1" }
func (m *inProcess) InProcess() bool { return true }
func (m *inProcess) Embed(_ context.Context, texts []string) ([][]float32, error) {
	m.calls.Add(1)
	if m.fail {
		return nil, errors.New("model failed")
	}
	out := make([][]float32, len(texts))
	for i, t := range texts {
		out[i] = []float32{float32(len(t)), 1}
	}
	return out, nil
}

// latinModel is an in-process model that reads the Latin script only.
type latinModel struct {
	*inProcess
	scripts embed.Scripts
}

func (m latinModel) Scripts() embed.Scripts { return m.scripts }

// TestPrefetchWhen: a query is prefetched only before the index is loaded,
// with an in-process model, and when the search will embed its text.
func TestPrefetchWhen(t *testing.T) {
	ctx := context.Background()
	m := &inProcess{}
	db, err := Open(ctx, filepath.Join(t.TempDir(), "w.db"), Options{Embedder: m})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	remote, err := Open(ctx, filepath.Join(t.TempDir(), "r.db"), Options{Embedder: embed.Func{ModelID: "remote-v1",
		F: func(_ context.Context, texts []string) ([][]float32, error) {
			return make([][]float32, len(texts)), nil
		}}})
	if err != nil {
		t.Fatal(err)
	}
	defer remote.Close()
	latin, err := Open(ctx, filepath.Join(t.TempDir(), "l.db"), Options{Embedder: latinModel{&inProcess{}, embed.Latin}})
	if err != nil {
		t.Fatal(err)
	}
	defer latin.Close()
	for _, c := range []struct {
		name string
		db   *DB
		q    Query
		want bool
	}{
		{"hybrid", db, Query{Query: "where is the key"}, true},
		{"vector", db, Query{Query: "where is the key", Mode: memory.ModeVector}, true},
		{"bm25", db, Query{Query: "where is the key", Mode: memory.ModeBM25}, false},
		{"hyde", db, Query{Query: "where is the key", HyDE: true}, false},
		{"blank", db, Query{Query: "   "}, false},
		{"remote model", remote, Query{Query: "where is the key"}, false},
		{"read script", latin, Query{Query: "where is the key"}, true},
		{"unread script", latin, Query{Query: "钥匙在哪里"}, false},
	} {
		if got := c.db.e.prefetch(ctx, c.q) != nil; got != c.want {
			t.Errorf("%s: prefetch %v, want %v", c.name, got, c.want)
		}
	}
	if err := db.Warm(ctx); err != nil {
		t.Fatal(err)
	}
	if db.e.prefetch(ctx, Query{Query: "where is the key"}) != nil {
		t.Error("prefetch with the index loaded")
	}
}

// TestPrefetched: the prefetched vector answers its text as a query once
// computed (a memory of the same text is embedded as memories are);
// other texts, and a failed prefetch, go to the model; a cancelled wait
// returns the context's error.
func TestPrefetched(t *testing.T) {
	ctx := context.Background()
	m := &inProcess{}
	p := &prefetched{Embedder: m, text: "q", done: make(chan struct{}), vec: []float32{7, 7}}
	close(p.done)
	if v, err := p.EmbedQuery(ctx, []string{"q"}); err != nil || v[0][0] != 7 || m.calls.Load() != 0 {
		t.Errorf("prefetched text: %v %v, %d model calls", v, err, m.calls.Load())
	}
	if v, err := p.EmbedQuery(ctx, []string{"other"}); err != nil || v[0][0] != 5 || m.calls.Load() != 1 {
		t.Errorf("other text: %v %v, %d model calls", v, err, m.calls.Load())
	}
	if _, err := p.EmbedQuery(ctx, []string{"q", "q"}); err != nil || m.calls.Load() != 2 {
		t.Errorf("a batch: %v, %d model calls", err, m.calls.Load())
	}
	if v, err := p.Embed(ctx, []string{"q"}); err != nil || v[0][0] == 7 || m.calls.Load() != 3 {
		t.Errorf("a memory of the prefetched text got %v %v, %d model calls", v, err, m.calls.Load())
	}
	failed := &prefetched{Embedder: m, text: "q", done: make(chan struct{})}
	close(failed.done)
	if v, err := failed.EmbedQuery(ctx, []string{"q"}); err != nil || v[0][0] != 1 || m.calls.Load() != 4 {
		t.Errorf("after a failed prefetch: %v %v, %d model calls", v, err, m.calls.Load())
	}
	pending := &prefetched{Embedder: m, text: "q", done: make(chan struct{})}
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	if _, err := pending.EmbedQuery(cctx, []string{"q"}); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled wait: %v", err)
	}
	if !pending.InProcess() {
		t.Error("prefetched hides that the model is in-process")
	}
	reader := &prefetched{Embedder: latinModel{m, embed.Latin}}
	if reader.Scripts().Unread("钥匙在哪里") == "" || reader.Scripts().Unread("the key") != "" {
		t.Error("prefetched hides which scripts the model reads")
	}
}

// TestFirstQueryTaken: Options.FirstQuery's embedding starts in Open, as the
// search will embed its text, and the first search of that text takes it
// (the model runs once); a first search of another text, or one without a
// vector leg, drops it; a remote model or an unread script starts nothing.
func TestFirstQueryTaken(t *testing.T) {
	ctx := context.Background()
	for _, c := range []struct {
		name    string
		model   embed.Embedder
		first   string
		q       Query
		started bool  // Open started the embedding
		calls   int32 // model calls by Open and the search, for inProcess models
	}{
		{"the same text", &inProcess{}, "where is the key", Query{Query: " where is the key  "}, true, 1},
		{"another text", &inProcess{}, "where is the key", Query{Query: "what time is standup"}, true, 2},
		{"bm25", &inProcess{}, "where is the key", Query{Query: "where is the key", Mode: memory.ModeBM25}, true, 1},
		{"remote model", embed.Func{ModelID: "remote-v1", F: func(_ context.Context, texts []string) ([][]float32, error) {
			return make([][]float32, len(texts)), nil
		}}, "where is the key", Query{Query: "where is the key"}, false, 0},
		{"unread script", latinModel{&inProcess{}, embed.Latin}, "钥匙在哪里", Query{Query: "钥匙在哪里"}, false, 0},
	} {
		t.Run(c.name, func(t *testing.T) {
			db, err := Open(ctx, filepath.Join(t.TempDir(), "f.db"), Options{Embedder: c.model, FirstQuery: c.first})
			if err != nil {
				t.Fatal(err)
			}
			defer db.Close()
			p := db.e.first.Load()
			if started := p != nil; started != c.started {
				t.Fatalf("Open started the first query's embedding: %v, want %v", started, c.started)
			}
			if p != nil {
				<-p.done // the count below is then the search's alone
				if p.text != c.first || p.vec == nil {
					t.Fatalf("first query %q embedded as %q, vector %v", c.first, p.text, p.vec)
				}
			}
			c.q.NoRecord = true
			if _, err := db.Search(ctx, c.q); err != nil {
				t.Fatal(err)
			}
			if c.q.Mode != memory.ModeBM25 && db.e.first.Load() != nil {
				t.Error("the first search left the first query's vector")
			}
			if m, ok := c.model.(*inProcess); ok && m.calls.Load() != c.calls {
				t.Errorf("%d model calls, want %d", m.calls.Load(), c.calls)
			}
		})
	}
}
