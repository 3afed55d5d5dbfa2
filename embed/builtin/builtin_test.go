package builtin

import (
	"os/exec"
	"slices"
	"strings"
	"testing"
)

// TestMultilingualNotLinked: a program that does not import its package has
// no multilingual model, and New says which import links it.
func TestMultilingualNotLinked(t *testing.T) {
	if slices.Contains(Names(), Multilingual) {
		t.Fatal("multilingual listed without its package")
	}
	_, err := New(Multilingual)
	if err == nil || !strings.Contains(err.Error(), "embed/builtin/multilingual") {
		t.Errorf("New(%q) = %v, want the import that links it", Multilingual, err)
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
