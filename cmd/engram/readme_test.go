package main

import (
	"path/filepath"
	"strings"
	"testing"
)

// TestReadmeParaphrase (issue 25): the README's paraphrase, which shares no
// word with its memory, is delivered by inject with the default model; a
// prompt about a topic the store lacks is not.
func TestReadmeParaphrase(t *testing.T) {
	t.Setenv("ENGRAM_EMBEDDER", "")
	t.Setenv("ENGRAM_SCOPE", "")
	t.Setenv("ENGRAM_URL", "")
	db := filepath.Join(t.TempDir(), "readme.db")
	mustCLI(t, db, "", "add", "Prefers dark themes in every editor", "--type", "preference", "--scope", "user=u7")
	cases := []struct {
		prompt string
		want   bool
	}{
		{"which colour scheme does the user like", true},
		{"how do I rotate the TLS certificates", false},
		{"what did we decide about the quarterly budget", false},
	}
	for _, c := range cases {
		got := mustCLI(t, db, "", "inject", c.prompt, "--scope", "user=u7", "--no-record")
		if strings.Contains(got, "dark themes") != c.want {
			t.Errorf("inject %q delivered %q; want the memory: %v", c.prompt, got, c.want)
		}
	}
}
