package bgesmall

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/engram-memory/engram/embed"
	"github.com/engram-memory/engram/embed/builtin"
)

// TestRegistered: linked, the model is a built-in by name, for New and for
// embed.Open, with its own id, reading Latin only.
func TestRegistered(t *testing.T) {
	if !slices.Contains(builtin.Names(), builtin.BGESmall) || !slices.Contains(embed.Registered(), builtin.BGESmall) {
		t.Fatalf("Names() = %v, embed.Registered() = %v", builtin.Names(), embed.Registered())
	}
	e, err := embed.Open(builtin.BGESmall)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(e.Model(), "bge-small-en-v1.5.2-v") || !embed.IsInProcess(e) {
		t.Errorf("model %q, in process %v", e.Model(), embed.IsInProcess(e))
	}
	if s := embed.Unread(e, "如何在 MySQL 中创建只读用户？"); s == "" {
		t.Error("reads Chinese: an English model should leave the vector leg off")
	}
	ms, err := builtin.Models()
	if err != nil {
		t.Fatal(err)
	}
	i := slices.IndexFunc(ms, func(m builtin.Model) bool { return m.Name == builtin.BGESmall })
	if i < 0 || ms[i].Title != "bge-small-en-v1.5" || ms[i].Dim != 384 || ms[i].Default {
		t.Errorf("Models() = %+v", ms)
	}
}

// bge-small embeds: a paraphrase scores above an unrelated text.
func TestBGESmallEmbeds(t *testing.T) {
	if testing.Short() {
		t.Skip("loads the model")
	}
	e, err := builtin.New(builtin.BGESmall)
	if err != nil {
		t.Fatal(err)
	}
	v, err := e.Embed(context.Background(), []string{
		"which colour scheme does the user like",
		"Prefers dark themes in every editor",
		"The staging database runs Postgres on port 5433",
	})
	if err != nil {
		t.Fatal(err)
	}
	dot := func(a, b []float32) (s float32) {
		for i := range a {
			s += a[i] * b[i]
		}
		return s
	}
	if near, far := dot(v[0], v[1]), dot(v[0], v[2]); !(near > far) {
		t.Errorf("paraphrase %.3f, unrelated %.3f", near, far)
	}
}
