package eval

import (
	"bytes"
	"context"
	"encoding/xml"
	"errors"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/engram-memory/engram/memory"
)

// fakeStore is an in-memory substring matcher. Its "bm25" leg scores a memory by
// how many query words occur in its text; its "vector" leg by how many occur in
// its name and description; "hybrid" adds the two, the vector part times the
// query's vector weight. Errors and delays can be injected.
type fakeStore struct {
	mu      sync.Mutex
	docs    []*memory.Memory
	queries []memory.Query
	closed  int

	addErr      error
	searchErr   error
	failQuery   string // Search fails for this query text
	nilResponse bool
	noEmbedder  bool // vector and hybrid degrade to bm25
	delay       time.Duration
	mutate      bool // Add scribbles on the memories it is given
	closeErr    error
}

func (f *fakeStore) Add(ctx context.Context, mems []*memory.Memory) error {
	if f.addErr != nil {
		return f.addErr
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, m := range mems {
		if m.ID == "" || m.Text == "" {
			return errors.New("fake: id and text required")
		}
		if f.mutate {
			m.Text = "MUTATED"
			m.Type = "changed"
		}
		f.docs = append(f.docs, m)
	}
	return nil
}

func words(s string) []string {
	return strings.FieldsFunc(strings.ToLower(s), func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= '0' && r <= '9')
	})
}

func (f *fakeStore) Search(ctx context.Context, q memory.Query) (*memory.Response, error) {
	if f.delay > 0 {
		select {
		case <-time.After(f.delay):
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	f.mu.Lock()
	f.queries = append(f.queries, q)
	docs := f.docs
	f.mu.Unlock()
	if f.searchErr != nil || (f.failQuery != "" && q.Query == f.failQuery) {
		return nil, errors.Join(errors.New("fake search failed"), f.searchErr)
	}
	if f.nilResponse {
		return nil, nil
	}
	resp := &memory.Response{QID: q.QID, Query: q.Query, Strategy: q.Mode}
	mode := q.Mode
	if f.noEmbedder && mode != memory.ModeBM25 {
		resp.Strategy = memory.StrategyBM25
		resp.Degraded = []memory.Degraded{{Stage: "vector", Reason: "no embedder configured"}}
		mode = memory.ModeBM25
	}
	vw := 1.0
	if q.VectorWeight != nil {
		vw = *q.VectorWeight
	}
	type hit struct {
		id    string
		score float64
	}
	var hits []hit
	qw := words(q.Query)
	for _, d := range docs {
		text, side := strings.ToLower(d.Text), strings.ToLower(d.Name+" "+d.Description)
		var kw, vec float64
		for _, w := range qw {
			if strings.Contains(text, w) {
				kw++
			}
			if strings.Contains(side, w) {
				vec++
			}
		}
		var s float64
		switch mode {
		case memory.ModeBM25:
			s = kw
		case memory.ModeVector:
			s = vec
		default:
			s = kw + vw*vec
		}
		if s > 0 {
			hits = append(hits, hit{d.ID, s})
		}
	}
	sort.Slice(hits, func(i, j int) bool {
		if hits[i].score != hits[j].score {
			return hits[i].score > hits[j].score
		}
		return hits[i].id < hits[j].id
	})
	for i, h := range hits {
		if q.Limit > 0 && i >= q.Limit {
			break
		}
		resp.Results = append(resp.Results, memory.Result{ID: h.id, Score: h.score})
	}
	return resp, nil
}

func (f *fakeStore) Close() error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.closed++
	return f.closeErr
}

// fakeOpener hands out fresh fake stores configured by setup, remembering them.
type fakeOpener struct {
	mu      sync.Mutex
	stores  []*fakeStore
	openErr error
	setup   func(*fakeStore)
}

func (o *fakeOpener) open(ctx context.Context) (Store, error) {
	if o.openErr != nil {
		return nil, o.openErr
	}
	s := &fakeStore{}
	if o.setup != nil {
		o.setup(s)
	}
	o.mu.Lock()
	o.stores = append(o.stores, s)
	o.mu.Unlock()
	return s, nil
}

func xmlDecoder(b []byte) *xml.Decoder { return xml.NewDecoder(bytes.NewReader(b)) }
