package minilm

import (
	"slices"
	"strings"
	"testing"

	"github.com/engram-memory/engram/embed"
	"github.com/engram-memory/engram/embed/builtin"
)

// TestRegistered: linked, the model is a built-in by name, for New and for
// embed.Open, with its own id, reading Latin only.
func TestRegistered(t *testing.T) {
	if !slices.Contains(builtin.Names(), builtin.MiniLM) || !slices.Contains(embed.Registered(), builtin.MiniLM) {
		t.Fatalf("Names() = %v, embed.Registered() = %v", builtin.Names(), embed.Registered())
	}
	e, err := embed.Open(builtin.MiniLM)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(e.Model(), "all-minilm-l6-v2-v") || !embed.IsInProcess(e) {
		t.Errorf("model %q, in process %v", e.Model(), embed.IsInProcess(e))
	}
	if s := embed.Unread(e, "如何在 MySQL 中创建只读用户？"); s == "" {
		t.Error("reads Chinese: an English model should leave the vector leg off")
	}
	ms, err := builtin.Models()
	if err != nil {
		t.Fatal(err)
	}
	i := slices.IndexFunc(ms, func(m builtin.Model) bool { return m.Name == builtin.MiniLM })
	if i < 0 || ms[i].Title != "all-MiniLM-L6-v2" || ms[i].Dim != 384 || ms[i].Default {
		t.Errorf("Models() = %+v", ms)
	}
}
