package engram_test

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/engram-memory/engram"
)

// TestOpenLocations: a path and sqlite:// open the built-in SQLite file; a
// scheme no imported package registered (this test binary imports no other
// backend) is one error line that says which import is missing.
func TestOpenLocations(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	for _, tc := range []struct {
		name, loc, path, err string
	}{
		{"path", filepath.Join(dir, "a.db"), filepath.Join(dir, "a.db"), ""},
		{"sqlite URL", "sqlite://" + filepath.Join(dir, "b.db"), filepath.Join(dir, "b.db"), ""},
		{"weaviate not imported", "weaviate://127.0.0.1:1?class=Memory", "", `import the backend's package, e.g. _ "github.com/engram-memory/engram/backend/weaviate"`},
		{"unknown scheme", "nosuch://host/x", "", `no backend registered for scheme "nosuch"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			db, err := engram.Open(ctx, tc.loc, engram.Options{NoEmbedder: true})
			if tc.err != "" {
				if err == nil {
					db.Close()
					t.Fatalf("Open(%q): no error", tc.loc)
				}
				if !strings.Contains(err.Error(), tc.err) || strings.Contains(err.Error(), "\n") {
					t.Fatalf("Open(%q) = %q, want one line saying %s", tc.loc, err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			defer db.Close()
			if db.Path() != tc.path {
				t.Errorf("Path() = %q, want %q", db.Path(), tc.path)
			}
		})
	}
}
