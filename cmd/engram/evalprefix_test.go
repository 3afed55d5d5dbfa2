package main

import (
	"context"
	"slices"
	"testing"

	"github.com/engram-memory/engram"
	"github.com/engram-memory/engram/memory"
)

// textsSeen is an embedder that records the texts it is given.
type textsSeen struct{ got []string }

func (t *textsSeen) Model() string { return "seen-v1" }
func (t *textsSeen) Embed(_ context.Context, texts []string) ([][]float32, error) {
	t.got = append(t.got, texts...)
	out := make([][]float32, len(texts))
	for i := range out {
		out[i] = []float32{1}
	}
	return out, nil
}

// TestQueryPrefixed: only a search's embedding gets the prefix.
func TestQueryPrefixed(t *testing.T) {
	seen := &textsSeen{}
	q := &queryPrefixed{Embedder: seen, prefix: "Q: "}
	ctx := context.Background()
	if _, err := q.Embed(ctx, []string{"a memory"}); err != nil {
		t.Fatal(err)
	}
	if _, err := q.Embed(asQuery(ctx), []string{"a question", "another"}); err != nil {
		t.Fatal(err)
	}
	if want := []string{"a memory", "Q: a question", "Q: another"}; !slices.Equal(seen.got, want) {
		t.Errorf("embedded %q, want %q", seen.got, want)
	}
	if q.Model() != "seen-v1" || q.InProcess() || q.Scripts() != nil || q.Warm(ctx) != nil {
		t.Error("the wrapper changed what the embedder says of itself")
	}
}

// TestQueryPrefixedStore: through an eval store (a real SQLite file), the
// memories are embedded as they are and the search's query with the prefix.
func TestQueryPrefixedStore(t *testing.T) {
	seen := &textsSeen{}
	open, err := evalOpener(engram.Options{Embedder: &queryPrefixed{Embedder: seen, prefix: "Q: "}}, t.TempDir(), "", nil)
	if err != nil {
		t.Fatal(err)
	}
	s, err := open(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if err := s.Add(t.Context(), []*memory.Memory{{Text: "the staging database listens on port 5433"}}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Search(t.Context(), memory.Query{Query: "which port", Mode: memory.ModeVector}); err != nil {
		t.Fatal(err)
	}
	if !slices.Contains(seen.got, "the staging database listens on port 5433") || !slices.Contains(seen.got, "Q: which port") {
		t.Errorf("embedded %q, want the memory bare and the query prefixed", seen.got)
	}
}
