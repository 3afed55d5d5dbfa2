package engram

import (
	"bytes"
	"context"
	"fmt"
	"sort"
	"time"

	"github.com/engram-memory/engram/backend"
	"github.com/engram-memory/engram/internal/format"
	"github.com/engram-memory/engram/memory"
)

// Delivery defaults.
const (
	DefaultBriefBudget  = 2000 // characters
	DefaultInjectBudget = 1500 // characters
	DefaultInjectLimit  = 5
	// DefaultInjectRelevance is the bar a memory's relevance (explain.relevance,
	// in [0,1]) must clear to be injected into a prompt's context. Measured with
	// tools/relevance (built-in model): it leaves 85% of questions about absent
	// topics with nothing, for 0.12 of LoCoMo R@5 and 0.014 of SciFact nDCG@10.
	DefaultInjectRelevance = 0.1
)

// briefPool is how many memories of each kind (favorite, used, recent) a
// briefing considers: far more than a character budget holds.
const briefPool = 256

// topK keeps the k best items offered to add, best first.
type topK[T any] struct {
	k      int
	better func(a, b T) bool
	items  []T
}

func (t *topK[T]) add(x T) {
	n := len(t.items)
	if n == t.k && !t.better(x, t.items[n-1]) {
		return
	}
	i := sort.Search(n, func(i int) bool { return t.better(x, t.items[i]) })
	if n < t.k {
		t.items = append(t.items, x)
	}
	copy(t.items[i+1:], t.items[i:len(t.items)-1])
	t.items[i] = x
}

// BriefOptions shape a session-start briefing.
type BriefOptions struct {
	Filter
	Budget int // characters of Text; 0 means DefaultBriefBudget
	Limit  int // memories at most; 0 means as many as the budget holds
	// NoRecord skips counting the delivery as a use.
	NoRecord bool
}

// BriefItem is one memory in a briefing and why it is there.
type BriefItem struct {
	Result
	Reason string `json:"reason"` // favorite, demand or recent
}

// Brief is a session-start briefing.
type Brief struct {
	Items []BriefItem `json:"items"`
	// Text is the briefing formatted for an LLM's context, within the budget.
	Text string `json:"text"`
}

// Brief gathers what an agent should know at the start of a session: its
// favorites, then its most-demanded memories, then the most recent, all in
// the filter's scope (and the view's) and within the character budget.
func (v view) Brief(ctx context.Context, opt BriefOptions) (*Brief, error) {
	if err := v.narrow(&opt.Filter); err != nil {
		return nil, err
	}
	if opt.Budget < 0 || opt.Limit < 0 {
		return nil, fmt.Errorf("%w: budget and limit must not be negative", ErrInvalid)
	}
	if err := opt.Filter.Validate(); err != nil {
		return nil, err
	}
	if opt.Budget == 0 {
		opt.Budget = DefaultBriefBudget
	}
	if err := v.e.sync(ctx); err != nil {
		return nil, err
	}
	// One pass keeps, per kind, the briefPool best candidates, so a brief costs
	// O(n) in the scope's size rather than sorting the whole store.
	type demanded struct {
		m      *memory.Memory
		demand float64
	}
	byDemand := func(a, b demanded) bool {
		if a.demand != b.demand {
			return a.demand > b.demand
		}
		if !a.m.CreatedAt.Equal(b.m.CreatedAt) {
			return a.m.CreatedAt.After(b.m.CreatedAt)
		}
		return a.m.ID < b.m.ID
	}
	favs := topK[demanded]{k: briefPool, better: byDemand}
	used := topK[demanded]{k: briefPool, better: byDemand}
	recent := topK[*memory.Memory]{k: briefPool, better: func(a, b *memory.Memory) bool {
		if !a.CreatedAt.Equal(b.CreatedAt) {
			return a.CreatedAt.After(b.CreatedAt)
		}
		return a.ID > b.ID
	}}
	now := time.Now()
	err := v.e.be.List(ctx, backend.ListQuery{Filter: opt.Filter}, func(m *memory.Memory) error {
		d := demanded{m, m.DemandNow(now)}
		if m.Favorite {
			favs.add(d)
		}
		if d.demand > 0 {
			used.add(d)
		}
		recent.add(m)
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("brief: %w", err)
	}
	memories := func(ds []demanded) []*memory.Memory {
		out := make([]*memory.Memory, len(ds))
		for i, d := range ds {
			out[i] = d.m
		}
		return out
	}

	b := &Brief{Items: []BriefItem{}}
	seen := map[string]bool{}
	var results []Result
	spent := 0
	full := false
	for _, group := range []struct {
		reason string
		ms     []*memory.Memory
	}{{"favorite", memories(favs.items)}, {"demand", memories(used.items)}, {"recent", recent.items}} {
		for _, m := range group.ms {
			if full || (opt.Limit > 0 && len(b.Items) == opt.Limit) {
				full = true
				break
			}
			key := m.Key()
			if seen[key] {
				continue
			}
			r := memory.ResultOf(m)
			n := format.ContextLen(r)
			if spent+n > opt.Budget {
				continue // a shorter one may still fit
			}
			seen[key] = true
			spent += n
			b.Items = append(b.Items, BriefItem{Result: r, Reason: group.reason})
			results = append(results, r)
		}
	}
	var buf bytes.Buffer
	if err := format.Context(&buf, results, opt.Budget); err != nil {
		return nil, err
	}
	b.Text = buf.String()
	if !opt.NoRecord {
		if err := v.recordUse(ctx, results); err != nil {
			return nil, err
		}
	}
	return b, nil
}

// InjectOptions shape prompt-matched recall.
type InjectOptions struct {
	Filter
	Budget int // characters; 0 means DefaultInjectBudget
	Limit  int // 0 means DefaultInjectLimit
	// MinRelevance is the bar; nil means DefaultInjectRelevance.
	MinRelevance *float64
	NoRecord     bool
}

// Injection is what inject returns: only memories that clear the bar,
// possibly none, formatted for direct insertion into a prompt's context.
type Injection struct {
	Results  []Result   `json:"results"`
	Text     string     `json:"text"`
	Strategy string     `json:"strategy"`
	Degraded []Degraded `json:"degraded"`
}

// Inject recalls memories for a user prompt and keeps only those whose
// relevance clears the bar, within the budget. Nothing relevant gives an
// empty injection, not an error.
func (v view) Inject(ctx context.Context, prompt string, opt InjectOptions) (*Injection, error) {
	if err := v.narrow(&opt.Filter); err != nil {
		return nil, err
	}
	bar := DefaultInjectRelevance
	if opt.MinRelevance != nil {
		bar = *opt.MinRelevance
	}
	if opt.Budget < 0 {
		return nil, fmt.Errorf("%w: budget must not be negative", ErrInvalid)
	}
	if opt.Budget == 0 {
		opt.Budget = DefaultInjectBudget
	}
	if opt.Limit == 0 {
		opt.Limit = DefaultInjectLimit
	}
	resp, err := v.search(ctx, Query{Query: prompt, Limit: opt.Limit, Filter: opt.Filter, MinRelevance: bar, NoRecord: true})
	if err != nil {
		return nil, err
	}
	inj := &Injection{Results: []Result{}, Strategy: resp.Strategy, Degraded: resp.Degraded}
	used := 0
	for _, r := range resp.Results {
		if n := format.ContextLen(r); used+n <= opt.Budget {
			used += n
			inj.Results = append(inj.Results, r)
		}
	}
	var buf bytes.Buffer
	if err := format.Context(&buf, inj.Results, opt.Budget); err != nil {
		return nil, err
	}
	inj.Text = buf.String()
	if !opt.NoRecord {
		if err := v.recordUse(ctx, inj.Results); err != nil {
			// As in Search: the recall is good; failing to count a use must not lose it.
			inj.Degraded = append(inj.Degraded, Degraded{Stage: "demand", Reason: "recording the use failed: " + err.Error()})
		}
	}
	return inj, nil
}
