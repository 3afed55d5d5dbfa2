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
