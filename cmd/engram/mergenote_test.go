package main

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/engram-memory/engram"
	"github.com/engram-memory/engram/internal/golden"
	"github.com/engram-memory/engram/memory"
)

// TestMergeNote: what add says of a repeat merged into a stored memory,
// one line per case (testdata/merge/notes.golden).
func TestMergeNote(t *testing.T) {
	cases := []engram.Merge{
		{ID: "01A"},
		{ID: "01B", MergeChanges: memory.MergeChanges{Tags: []string{"editor", "ui"}}},
		{ID: "01C", MergeChanges: memory.MergeChanges{Favorite: true, Metadata: []string{"source_app", "weight"}, Type: "preference"}},
		{ID: "01D", MergeChanges: memory.MergeChanges{Tags: []string{"x"}, Kept: []string{"name", "description"}}},
		{ID: "01E", MergeChanges: memory.MergeChanges{Kept: []string{"occurred_at"}}},
	}
	var b strings.Builder
	for _, c := range cases {
		b.WriteString(mergeNote(c) + "\n")
	}
	golden.Check(t, filepath.Join("testdata", "merge", "notes.golden"), []byte(b.String()))
}

// TestAddRepeatBothBackends: engram add of a text a memory already holds
// under a name, without the name and with other white space and a new tag,
// stores nothing new on either backend and says what it merged; get shows
// the tag added and the name kept.
func TestAddRepeatBothBackends(t *testing.T) {
	t.Setenv("ENGRAM_EMBEDDER", "none")
	t.Setenv("ENGRAM_URL", "")
	for _, c := range []struct {
		name string
		db   func(t *testing.T) string
	}{
		{"sqlite", func(t *testing.T) string { return filepath.Join(t.TempDir(), "d.db") }},
		{"weaviate", func(t *testing.T) string { return weaviateURL(t, "") }},
	} {
		t.Run(c.name, func(t *testing.T) {
			db := c.db(t)
			id := strings.TrimSpace(mustCLI(t, db, "", "add", "Prefers dark themes in every editor", "--name", "Theme", "--scope", "user=u7"))
			_, errs, code := cli(t, db, "", "add", "Prefers  dark themes\nin every editor", "--tag", "ui", "--scope", "user=u7")
			if want := "engram: not stored again: memory " + id + " already holds this text in this scope; merged into it: tags ui\n"; code != 0 || errs != want {
				t.Fatalf("repeat: exit %d, stderr %q, want %q", code, errs, want)
			}
			got := mustCLI(t, db, "", "get", id)
			if !strings.Contains(got, `"tags": [`) || !strings.Contains(got, `"ui"`) || !strings.Contains(got, `"name": "Theme"`) {
				t.Fatalf("after the merge: %s", got)
			}
			if out := mustCLI(t, db, "", "stats"); !strings.Contains(out, "1 memories") {
				t.Fatalf("stats: %s", out)
			}
		})
	}
}
