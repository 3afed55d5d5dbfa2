// Package builtin names the embedding models compiled into the binary, so that
// a store works offline with no server: a transformer, a static model distilled
// from it, and pooled GloVe word vectors.
package builtin

import (
	"fmt"
	"strings"

	"github.com/engram-memory/engram/embed"
	"github.com/engram-memory/engram/embed/bert"
	"github.com/engram-memory/engram/embed/glove"
	"github.com/engram-memory/engram/embed/static"
)

// Names of the built-in models.
const (
	// MiniLM is all-MiniLM-L6-v2 (384-d), run by the pure-Go encoder.
	MiniLM = "minilm"
	// Static is the Model2Vec-style static model distilled from MiniLM (256-d):
	// a table look-up per token, microseconds a text.
	Static = "static"
	// GloVe is pooled GloVe 100-d word vectors, the first built-in model.
	GloVe = "glove"
)

// Default is the model a store gets when it names none, chosen by
// measurement (docs/evaluation.md): the strongest built-in model that
// still imports 10,000 short memories in under a minute on two cores.
const Default = MiniLM

// Names lists the built-in models, the default first.
func Names() []string { return []string{MiniLM, Static, GloVe} }

// New returns the shared embedder of a built-in model by name; "" and
// "builtin" mean Default.
func New(name string) (embed.Embedder, error) {
	switch strings.ToLower(name) {
	case "", "builtin":
		return New(Default)
	case MiniLM:
		return bert.Default()
	case Static:
		return static.Default()
	case GloVe:
		return glove.Default()
	}
	return nil, fmt.Errorf("no built-in embedding model %q (have %s)", name, strings.Join(Names(), ", "))
}
