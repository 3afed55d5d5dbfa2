package builtin

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/engram-memory/engram/embed"
)

// TestLinkableNotLinked: a program that does not import a model's own
// package does not have that model, and New says which import links it.
func TestLinkableNotLinked(t *testing.T) {
	for _, c := range []struct{ name, pkg string }{{MiniLM, "embed/builtin/minilm"}, {Multilingual, "embed/builtin/multilingual"}} {
		if slices.Contains(Names(), c.name) {
			t.Errorf("%s listed without its package", c.name)
		}
		_, err := New(c.name)
		if err == nil || !strings.Contains(err.Error(), c.pkg) {
			t.Errorf("New(%q) = %v, want the import that links it", c.name, err)
		}
	}
}

// TestLibraryLinksNoMultilingualModel: neither the library's root package
// nor this one depends on embed/e5 and its 72 MB file; the engram command
// does.
func TestLibraryLinksNoMultilingualModel(t *testing.T) {
	for _, c := range []struct {
		pkg  string
		want bool
	}{
		{"github.com/engram-memory/engram", false},
		{"github.com/engram-memory/engram/embed/builtin", false},
		{"github.com/engram-memory/engram/cmd/engram", true},
	} {
		out, err := exec.Command("go", "list", "-deps", c.pkg).Output()
		if err != nil {
			t.Fatalf("go list -deps %s: %v", c.pkg, err)
		}
		deps := strings.Fields(string(out))
		if got := slices.Contains(deps, "github.com/engram-memory/engram/embed/e5"); got != c.want {
			t.Errorf("%s depends on embed/e5: %v, want %v", c.pkg, got, c.want)
		}
	}
}

// Every built-in model by name: its id, dimension and what it reads. Only
// headers are read, but for the one case that embeds.
func TestModels(t *testing.T) {
	for _, c := range []struct {
		name, idPrefix, title string
		dim                   int
		readsHan              bool
	}{
		{BGESmall, "bge-small-en-v1.5.2-v", "bge-small-en-v1.5", 384, false},
		{Static, "minilm-static256-v", "MiniLM static 256-d", 256, false},
		{GloVe, "glove100-", "GloVe 100-d", 100, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			e, err := New(c.name)
			if err != nil {
				t.Fatal(err)
			}
			if !strings.HasPrefix(e.Model(), c.idPrefix) {
				t.Errorf("model id %q, want prefix %q", e.Model(), c.idPrefix)
			}
			if !embed.IsInProcess(e) {
				t.Error("not in process")
			}
			if got := embed.Unread(e, "如何在 MySQL 中创建只读用户？") == ""; got != c.readsHan {
				t.Errorf("reads Chinese: %v, want %v", got, c.readsHan)
			}
			if u := embed.Unread(e, "how do I create a read-only MySQL user?"); u != "" {
				t.Errorf("does not read English: %q", u)
			}
			if d := strings.Fields(Describe(e.Model())); len(d) == 0 || !strings.HasPrefix(Describe(e.Model()), c.title+", built-in "+c.name) {
				t.Errorf("Describe(%q) = %q", e.Model(), Describe(e.Model()))
			}
			if again, _ := New(strings.ToUpper(c.name)); again != e {
				t.Error("New is not the shared embedder, or the name is case-sensitive")
			}
			ms, err := Models()
			if err != nil {
				t.Fatal(err)
			}
			for _, m := range ms {
				if m.Name == c.name && (m.Dim != c.dim || m.ID != e.Model() || m.Title != c.title || m.Default != (c.name == Default)) {
					t.Errorf("Models: %+v", m)
				}
			}
		})
	}
	if n := len(Names()); n != 3 || Names()[0] != Default {
		t.Errorf("Names() = %v", Names())
	}
	if _, err := New("bge-large"); err == nil || !strings.Contains(err.Error(), BGESmall) {
		t.Errorf("unknown name: %v", err)
	}
}

// TestLibraryLinksDefaultOnly: a program that opens a store with the
// built-in embedder (engram.Open with no options, embed/builtin imported)
// links the default model's file (bge-small) and not MiniLM's, which lives
// in the same package (embed/bert) and only embed/builtin/minilm reaches.
func TestLibraryLinksDefaultOnly(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a program")
	}
	dir := t.TempDir()
	src := `package main

import (
	"context"

	"github.com/engram-memory/engram"
	_ "github.com/engram-memory/engram/embed/builtin"
)

func main() { engram.Open(context.Background(), "x.db", engram.Options{}) }
`
	if err := os.WriteFile(filepath.Join(dir, "main.go"), []byte(src), 0o600); err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(dir, "prog")
	build := exec.Command("go", "build", "-o", bin, filepath.Join(dir, "main.go"))
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	out, err := exec.Command("go", "tool", "nm", bin).Output()
	if err != nil {
		t.Fatal(err)
	}
	syms := string(out)
	if !strings.Contains(syms, "embed/bert.bgeSmall") {
		t.Fatal("the program does not hold the default model: the check reads the wrong symbols")
	}
	if strings.Contains(syms, "embed/bert.minilm") {
		t.Error("a program that names only the default model links MiniLM's file")
	}
}

// The default (bge-small) embeds: a paraphrase scores above an unrelated text.
func TestDefaultEmbeds(t *testing.T) {
	if testing.Short() {
		t.Skip("loads the model")
	}
	e, err := New(Default)
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
