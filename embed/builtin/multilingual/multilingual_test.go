package multilingual

import (
	"context"
	"slices"
	"testing"

	"github.com/engram-memory/engram/embed"
	"github.com/engram-memory/engram/embed/builtin"
)

// TestRegistered: linked, the model is a built-in by name, reads Chinese (the
// vector leg stays on) and embeds queries and memories with their prefixes.
func TestRegistered(t *testing.T) {
	if !slices.Contains(builtin.Names(), builtin.Multilingual) {
		t.Fatalf("Names() = %v", builtin.Names())
	}
	if !slices.Contains(embed.Registered(), builtin.Multilingual) {
		t.Fatalf("embed.Registered() = %v: embed.Open cannot name it", embed.Registered())
	}
	e, err := builtin.New(builtin.Multilingual)
	if err != nil {
		t.Fatal(err)
	}
	if e.Model() != "multilingual-e5-small-q4-v2" || !embed.IsInProcess(e) {
		t.Errorf("model %q, in process %v", e.Model(), embed.IsInProcess(e))
	}
	if s := embed.Unread(e, "如何在 MySQL 中创建只读用户？"); s != "" {
		t.Errorf("Unread(Chinese) = %q, want it read", s)
	}
	ctx := context.Background()
	q, err := embed.EmbedQuery(ctx, e, []string{"read-only MySQL user"})
	if err != nil {
		t.Fatal(err)
	}
	p, err := e.Embed(ctx, []string{"read-only MySQL user"})
	if err != nil {
		t.Fatal(err)
	}
	if slices.Equal(q[0], p[0]) {
		t.Error("a query and a memory of the same text got the same vector: no prefixes")
	}
	ms, err := builtin.Models()
	if err != nil {
		t.Fatal(err)
	}
	i := slices.IndexFunc(ms, func(m builtin.Model) bool { return m.Name == builtin.Multilingual })
	if i < 0 || ms[i].Title != "multilingual-e5-small" || ms[i].Dim != 384 || ms[i].Default {
		t.Errorf("Models() = %+v", ms)
	}
}
