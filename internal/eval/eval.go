// Package eval measures retrieval quality on public benchmarks: it loads BEIR and
// LoCoMo data sets, runs every search mode against a fresh store per corpus, scores
// the rankings with trec_eval semantics and writes the comparison as a table, JSON
// or an SVG chart.
package eval

import (
	"context"

	"github.com/engram-memory/engram/memory"
)

// Store is the slice of a memory store the runner needs. Each corpus gets a fresh,
// empty Store: the runner adds the corpus, searches it with every mode and closes
// it. Search must be safe for concurrent use when Options.Workers > 1.
type Store interface {
	Add(ctx context.Context, mems []*memory.Memory) error
	Search(ctx context.Context, q memory.Query) (*memory.Response, error)
	Close() error
}

// Opener creates a fresh, empty Store.
type Opener func(ctx context.Context) (Store, error)

// Case is one query with its relevance judgements.
type Case struct {
	ID   string `json:"id"`
	Text string `json:"text"`
	// Gold maps a memory id to its grade; a grade above 0 is relevant.
	Gold map[string]int `json:"gold"`
	// Category is the data set's question class (LoCoMo 1-5); 0 when it has none.
	Category int `json:"category,omitempty"`
	// Groups are other classes the report breaks results down by (LoCoMo:
	// whether the question names a date).
	Groups []string `json:"groups,omitempty"`
}

// Corpus is one store's worth of memories and the queries asked of it.
type Corpus struct {
	Name  string
	Docs  []*memory.Memory
	Cases []Case
}

// Dataset is a loaded benchmark: one or more corpora, what was skipped while
// loading and why.
type Dataset struct {
	Name    string
	Corpora []Corpus
	// Skipped counts queries dropped while loading (no valid judgement); Notes
	// say why, and record any repairs made to the data.
	Skipped int
	Notes   []string
	// Metrics are the columns this benchmark is usually reported with, in order.
	Metrics []string
	// Categories names the Case categories, when the data set has them.
	Categories map[int]string
}

// Counts returns the number of documents and cases over all corpora.
func (d *Dataset) Counts() (docs, cases int) {
	for _, c := range d.Corpora {
		docs += len(c.Docs)
		cases += len(c.Cases)
	}
	return docs, cases
}

// Mode is one search configuration to compare: Apply sets the query fields that
// select it (mode, weights, stages), and Long is the long-query setting its
// searches run with.
type Mode struct {
	Name  string
	Apply func(q *memory.Query)
	Long  LongQuery
}
