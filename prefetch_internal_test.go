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
	embed.Scripts
}

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
	if reader.Unread("钥匙在哪里") == "" || reader.Unread("the key") != "" {
		t.Error("prefetched hides which scripts the model reads")
	}
}
