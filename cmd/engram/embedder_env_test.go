package main

import (
	"strings"
	"testing"
)

// ENGRAM_EMBEDDER picks each built-in model by name; builtin (or nothing)
// leaves the choice to the store's default.
func TestEmbedderFromEnv(t *testing.T) {
	for _, c := range []struct{ env, model string }{
		{"", ""},
		{"builtin", ""},
		{"minilm", "all-minilm-l6-v2-v"},
		{"static", "minilm-static256-v"},
		{"glove", "glove100-"},
		{"bge-small", "bge-small-en-v1.5.2-v"},
	} {
		t.Run(c.env, func(t *testing.T) {
			t.Setenv("ENGRAM_EMBEDDER", c.env)
			o, err := optionsFromEnv()
			if err != nil {
				t.Fatal(err)
			}
			switch {
			case c.model == "" && o.Embedder != nil:
				t.Errorf("embedder %s, want the default (none set)", o.Embedder.Model())
			case c.model != "" && (o.Embedder == nil || !strings.HasPrefix(o.Embedder.Model(), c.model)):
				t.Errorf("embedder %v, want model %s…", o.Embedder, c.model)
			}
		})
	}
}
