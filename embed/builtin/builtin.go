// Package builtin names the embedding models compiled into the binary, so that
// a store works offline with no server: a transformer (bge-small, the
// default), a static model distilled from MiniLM, and pooled GloVe word
// vectors; MiniLM itself and the multilingual model are linked by their own
// packages.
package builtin

import (
	"fmt"
	"strings"
	"sync"

	"github.com/engram-memory/engram/embed"
	"github.com/engram-memory/engram/embed/bert"
	"github.com/engram-memory/engram/embed/glove"
	"github.com/engram-memory/engram/embed/static"
)

// Names of the built-in models.
const (
	// MiniLM is all-MiniLM-L6-v2 (384-d, 6 layers), run by the pure-Go
	// encoder: the default until bge-small passed it on every measure that
	// chooses one (docs/evaluation.md). Its 34 MB file is linked only into
	// a program that imports embed/builtin/minilm (the engram command does),
	// so that stores embedded with it keep their model.
	MiniLM = "minilm"
	// Static is the Model2Vec-style static model distilled from MiniLM (256-d):
	// a table look-up per token, microseconds a text.
	Static = "static"
	// GloVe is pooled GloVe 100-d word vectors, the first built-in model.
	GloVe = "glove"
	// BGESmall is bge-small-en-v1.5 (384-d, 12 layers, CLS pooling), run by
	// the pure-Go encoder of embed/bert: the default, the strongest built-in
	// model in English retrieval (SciFact hybrid .7515 to MiniLM's .7349,
	// LoCoMo turn any@5 .7693 to .7643) at twice MiniLM's work a token.
	BGESmall = "bge-small"
	// Multilingual is multilingual-e5-small (384-d, about a hundred
	// languages), run by the pure-Go encoder of embed/e5. Its 72 MB file is
	// linked only into a program that imports embed/builtin/multilingual
	// (the engram command does).
	Multilingual = "multilingual"
)

// Default is the model a new store gets when it names none, chosen by
// measurement (docs/evaluation.md, issue 28): the built-in model with the
// best hybrid on SciFact and LoCoMo whose 12-token query embeds in at most
// 5 ms on two idle cores and which imports 10,000 short memories in at most
// 120 s. A store whose vectors come from another built-in model linked into
// the program keeps that model (engram.Open).
const Default = BGESmall

// Names lists the built-in models, the default first, then those linked
// into this program by Register.
func Names() []string {
	names := []string{BGESmall, Static, GloVe}
	for _, l := range linkable {
		if _, ok := lookup(l.name); ok {
			names = append(names, l.name)
		}
	}
	return names
}

// linkable are the built-in models in packages of their own, which register
// themselves when linked, in Names' order, with the package that links each.
var linkable = []struct{ name, pkg string }{
	{MiniLM, "github.com/engram-memory/engram/embed/builtin/minilm"},
	{Multilingual, "github.com/engram-memory/engram/embed/builtin/multilingual"},
}

// registry holds the models whose packages registered them.
var registry struct {
	sync.Mutex
	m map[string]registered
}

type registered struct {
	title string
	open  func() (embed.Embedder, error)
}

// Register makes a built-in model that lives in its own package (so that
// only a program that imports it links its file) known to New by name.
// Its package calls it from init. The model is registered with package
// embed too, as the models linked here are (register.go).
func Register(name, title string, open func() (embed.Embedder, error)) {
	registry.Lock()
	if registry.m == nil {
		registry.m = map[string]registered{}
	}
	registry.m[name] = registered{title: title, open: open}
	registry.Unlock()
	embed.Register(name, open)
}

func lookup(name string) (registered, bool) {
	registry.Lock()
	defer registry.Unlock()
	r, ok := registry.m[name]
	return r, ok
}

// New returns the shared embedder of a built-in model by name; "" and
// "builtin" mean Default.
func New(name string) (embed.Embedder, error) {
	switch strings.ToLower(name) {
	case "", "builtin":
		return New(Default)
	case BGESmall:
		return bert.DefaultBGESmall()
	case Static:
		return static.Default()
	case GloVe:
		return glove.Default()
	}
	if r, ok := lookup(strings.ToLower(name)); ok {
		return r.open()
	}
	for _, l := range linkable {
		if l.name == strings.ToLower(name) {
			return nil, fmt.Errorf("built-in model %q is not linked into this program (import %s)", name, l.pkg)
		}
	}
	return nil, fmt.Errorf("no built-in embedding model %q (have %s)", name, strings.Join(Names(), ", "))
}

// titles are the built-in models' own names, for display.
var titles = map[string]string{
	BGESmall: "bge-small-en-v1.5",
	Static:   "MiniLM static 256-d",
	GloVe:    "GloVe 100-d",
}

// Model describes a built-in model for display: its name, the id stored with
// each vector it makes, and the vector's length.
type Model struct {
	Name  string `json:"name"`  // as ENGRAM_EMBEDDER names it: minilm
	Title string `json:"title"` // the model's own name: all-MiniLM-L6-v2
	// ID is stored with every vector. It ends in "-v" and the revision of
	// engram's code that computes the vectors (all-minilm-l6-v2-v2: the model
	// all-MiniLM-L6-v2, revision 2), so a change of code that changes vectors
	// is a change of id. Stored ids never change: a store keeps working
	// without a reindex.
	ID      string `json:"id"`
	Dim     int    `json:"dim"`
	Default bool   `json:"default,omitempty"`
}

// Models lists the built-in models, the default first. It reads only the
// models' headers.
func Models() ([]Model, error) {
	var out []Model
	for _, n := range Names() {
		e, err := New(n)
		if err != nil {
			return nil, err
		}
		title, ok := titles[n]
		if !ok {
			r, _ := lookup(n)
			title = r.title
		}
		m := Model{Name: n, Title: title, ID: e.Model(), Default: n == Default}
		if d, ok := e.(interface{ Dim() int }); ok {
			m.Dim = d.Dim()
		}
		out = append(out, m)
	}
	return out, nil
}

// Describe says which built-in model an id is ("all-MiniLM-L6-v2, built-in
// minilm, code revision 2" for all-minilm-l6-v2-v2), or "" for another id.
func Describe(id string) string {
	ms, err := Models()
	if err != nil {
		return ""
	}
	for _, m := range ms {
		if m.ID == id {
			rev := id[strings.LastIndex(id, "-v")+2:]
			return fmt.Sprintf("%s, built-in %s, code revision %s", m.Title, m.Name, rev)
		}
	}
	return ""
}
