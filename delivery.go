package engram

import (
	"context"
	"fmt"
	"sort"
	"time"

	"github.com/engram-memory/engram/backend"
	"github.com/engram-memory/engram/internal/excerpt"
	"github.com/engram-memory/engram/internal/format"
	"github.com/engram-memory/engram/memory"
)

// Delivery defaults.
const (
	DefaultBriefBudget  = 2000 // characters
	DefaultInjectBudget = 1500 // characters
	DefaultInjectLimit  = 5
	// DefaultInjectNeighbours is how many turns before and after a memory of
	// an episode inject shows with it: the answer with its question.
	DefaultInjectNeighbours = 1
	// DefaultInjectRelevance was the built-in model's relevance bar while
	// that was all-MiniLM-L6-v2, kept for callers that named it: the bar is
	// the embedding model's (ModelDefault.Relevance, or its non-Latin bar for
	// a query less than nine tenths Latin; KeywordRelevance for a
	// keyword-only search).
	DefaultInjectRelevance = 0.165
)

// briefNeighboursMax is how many of a briefing's candidates get their
// neighbours looked up: more than any budget shows.
const briefNeighboursMax = 64

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
	// NoRecord is accepted for compatibility: a briefing records no use (it
	// shows what is favored, used or recent, not what is relevant to anything,
	// and counting it would make "most used" mean "was briefed").
	NoRecord bool
	// Neighbours shows each memory of an episode with up to this many turns
	// before and after it (0 or negative: none).
	Neighbours int
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
// the filter's scope (and the view's) and within the character budget. A
// memory too long for its share of the budget is shown as an excerpt (its
// beginning, marked with its id), never left out while a short excerpt of it
// fits. It records no use.
func (v view) Brief(ctx context.Context, opt BriefOptions) (*Brief, error) {
	if err := v.narrow(&opt.Filter); err != nil {
		return nil, err
	}
	if opt.Budget < 0 || opt.Limit < 0 {
		return nil, fmt.Errorf("%w: budget and limit must not be negative", ErrInvalid)
	}
	if opt.Neighbours > memory.MaxNeighbours {
		return nil, fmt.Errorf("%w: neighbours %d must be at most %d", ErrInvalid, opt.Neighbours, memory.MaxNeighbours)
	}
	opt.Neighbours = max(opt.Neighbours, 0) // negative: none, as for inject
	// A briefing says what is true now: superseded memories stay out.
	opt.Filter.Current = opt.Filter.AsOf == nil
	if err := opt.Filter.Validate(); err != nil {
		return nil, err
	}
	if opt.Budget == 0 {
		opt.Budget = DefaultBriefBudget
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

	// Candidates in order, each once, with the reason it is there; the
	// delivery rule (format.Deliver) then keeps what the budget holds, a long
	// memory as an excerpt of its beginning.
	seen := map[string]bool{}
	var cands []Result
	var reasons []string
	for _, group := range []struct {
		reason string
		ms     []*memory.Memory
	}{{"favorite", memories(favs.items)}, {"demand", memories(used.items)}, {"recent", recent.items}} {
		for _, m := range group.ms {
			if key := m.Key(); !seen[key] {
				seen[key] = true
				cands = append(cands, memory.ResultOf(m))
				reasons = append(reasons, group.reason)
			}
		}
	}
	if err := v.attachNeighbours(ctx, cands[:min(len(cands), briefNeighboursMax)], opt.Neighbours); err != nil {
		return nil, err
	}
	kept, text := format.FitContext(cands, format.ContextOptions{Budget: opt.Budget, Limit: opt.Limit, NoCount: true})
	b := &Brief{Items: make([]BriefItem, len(kept)), Text: text}
	at := 0
	for i, r := range kept {
		for memory.Key(cands[at].ID, cands[at].Scope) != memory.Key(r.ID, r.Scope) {
			at++
		}
		b.Items[i] = BriefItem{Result: r, Reason: reasons[at]}
	}
	return b, nil
}

// InjectOptions shape prompt-matched recall.
type InjectOptions struct {
	Filter
	Budget int // characters; 0 means DefaultInjectBudget
	Limit  int // 0 means DefaultInjectLimit
	// MinRelevance is the bar; nil means the embedding model's
	// (Response.RelevanceBar).
	MinRelevance *float64
	NoRecord     bool
	// Neighbours shows each memory of an episode with up to this many turns
	// before and after it: 0 means DefaultInjectNeighbours, negative none.
	Neighbours int
}

// Injection is what inject returns: only memories that clear the bar,
// possibly none, formatted for direct insertion into a prompt's context.
type Injection struct {
	Results  []Result   `json:"results"`
	Text     string     `json:"text"`
	Strategy string     `json:"strategy"`
	Degraded []Degraded `json:"degraded"`
	// MinRelevance is the bar the results cleared: the embedding model's
	// unless the caller gave one.
	MinRelevance float64 `json:"min_relevance"`
}

// Inject recalls memories for a user prompt and keeps only those whose
// relevance clears the bar, within the budget: a memory too long for its
// share is shown as an excerpt, the passage that best matches the prompt,
// marked with its id (Result.Excerpt says which). Nothing relevant gives an
// empty injection, not an error.
func (v view) Inject(ctx context.Context, prompt string, opt InjectOptions) (*Injection, error) {
	if err := v.narrow(&opt.Filter); err != nil {
		return nil, err
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
	switch {
	case opt.Neighbours == 0:
		opt.Neighbours = DefaultInjectNeighbours
	case opt.Neighbours < 0:
		opt.Neighbours = 0
	}
	q := Query{Query: prompt, Limit: opt.Limit, Filter: opt.Filter, ModelBar: true, NoRecord: true, Neighbours: opt.Neighbours}
	if opt.MinRelevance != nil {
		q.MinRelevance, q.ModelBar = *opt.MinRelevance, false
	}
	resp, err := v.search(ctx, q)
	if err != nil {
		return nil, err
	}
	inj := &Injection{Strategy: resp.Strategy, Degraded: resp.Degraded, MinRelevance: resp.MinRelevance}
	eq := excerpt.ForResponse(excerpt.DefaultTokenizer(), prompt, resp.Reduced)
	inj.Results, inj.Text = format.FitContext(resp.Results, format.ContextOptions{Budget: opt.Budget, Passage: eq.Passage})
	if !opt.NoRecord {
		// What was delivered, and relevant: under an explicit bar below the
		// model's, only those that clear the model's too.
		if err := v.recordUse(ctx, relevant(&Response{Results: inj.Results, RelevanceBar: resp.RelevanceBar})); err != nil {
			// As in Search: the recall is good; failing to count a use must not lose it.
			inj.Degraded = append(inj.Degraded, Degraded{Stage: "demand", Reason: "recording the use failed: " + err.Error()})
		}
	}
	return inj, nil
}
