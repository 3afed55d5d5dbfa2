package engram

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/engram-memory/engram/backend"
	"github.com/engram-memory/engram/memory"
)

// Episodes: a conversation, session or task as memories that keep their
// order, speaker and time (memory.Memory's Episode, Seq, Speaker,
// OccurredAt), and supersession: a memory that replaces another as the
// current truth (Supersedes), with every version kept (History).

// DefaultTurnType is the type of the memories AddEpisode stores when the
// episode names none.
const DefaultTurnType = "turn"

// MaxEpisodeMessages bounds the messages of one AddEpisode call.
const MaxEpisodeMessages = 10000

// Episode is a conversation (or a session, a task) to store in one call:
// each message becomes a memory of the episode at its position.
type Episode struct {
	// Episode names it, inside its scope.
	Episode string `json:"episode"`
	// Messages in order. A message's seq is its own when given, else
	// FirstSeq plus its place (FirstSeq 0 means 1): storing the same episode
	// again with the same positions updates its memories instead of adding
	// them twice, and a longer transcript adds only what is new.
	Messages []Message `json:"messages"`
	FirstSeq int64     `json:"first_seq,omitempty"`
	// What every message's memory carries: scope (inside the view's), type
	// (default DefaultTurnType), tags, source.
	Scope  map[string]string `json:"scope,omitempty"`
	Type   string            `json:"type,omitempty"`
	Tags   []string          `json:"tags,omitempty"`
	Source string            `json:"source,omitempty"`
}

// Message is one turn of an episode.
type Message struct {
	Speaker string `json:"speaker,omitempty"`
	Text    string `json:"text"`
	// OccurredAt is when it was said (default: now).
	OccurredAt time.Time `json:"occurred_at,omitzero"`
	// Seq is its position (default: FirstSeq plus its place).
	Seq      int64           `json:"seq,omitempty"`
	Metadata json.RawMessage `json:"metadata,omitempty"`
}

// AddEpisode stores an episode's messages as memories in one write, each
// with the id its position gives it (memory.EpisodeID), so that a message
// stored again replaces its memory. A message its memory already holds as
// it is (the same speaker, text, type, tags, source and metadata, and the
// same time when it gives one) is left alone, neither written nor embedded
// again: storing a growing transcript costs only its new turns. It returns
// what Add returns, the ids of every message in order.
func (v view) AddEpisode(ctx context.Context, ep Episode) (AddResult, error) {
	mems, err := ep.memories()
	if err != nil {
		return AddResult{}, err
	}
	f := Filter{Scope: ep.Scope}
	if err := v.narrow(&f); err != nil {
		return AddResult{}, err
	}
	ids := make([]string, len(mems))
	for i, m := range mems {
		ids[i] = memory.EpisodeID(m.Episode, m.Seq)
	}
	stored, err := v.e.be.Get(ctx, f.Scope, ids)
	if err != nil {
		return AddResult{}, err
	}
	var todo []*Memory
	var at []int // the place in mems of each of todo
	for i, m := range mems {
		if old := stored[ids[i]]; old != nil && sameTurn(old, m, f.Scope) {
			continue
		}
		todo, at = append(todo, m), append(at, i)
	}
	res := AddResult{IDs: ids}
	if len(todo) == 0 {
		return res, nil
	}
	added, err := v.add(ctx, todo, nil, true)
	if err != nil {
		return AddResult{}, err
	}
	for k, id := range added.IDs {
		res.IDs[at[k]] = id
	}
	for _, mg := range added.Merged {
		res.Merged = append(res.Merged, Merge{Index: at[mg.Index], ID: mg.ID})
	}
	res.Embedded, res.Deferred = added.Embedded, added.Deferred
	return res, nil
}

// sameTurn reports whether the stored memory old already holds the turn m
// would store in scope.
func sameTurn(old, m *Memory, scope map[string]string) bool {
	if memory.ScopeJSON(old.Scope) != memory.ScopeJSON(scope) || old.Episode != m.Episode || old.Seq != m.Seq {
		return false
	}
	c := *m
	c.Tags = append([]string(nil), m.Tags...)
	if c.Normalize() != nil {
		return false
	}
	return old.Text == c.Text && old.Speaker == c.Speaker && old.Type == c.Type && old.Source == c.Source &&
		slices.Equal(old.Tags, c.Tags) && string(old.Metadata) == string(c.Metadata) &&
		(c.OccurredAt.IsZero() || old.OccurredAt.Equal(c.OccurredAt))
}

// memories are the episode's messages as memories to add.
func (ep Episode) memories() ([]*Memory, error) {
	if ep.Episode == "" {
		return nil, fmt.Errorf("%w: field \"episode\" is required", ErrInvalid)
	}
	if err := memory.CheckEpisode(ep.Episode); err != nil {
		return nil, err
	}
	switch n := len(ep.Messages); {
	case n == 0:
		return nil, fmt.Errorf("%w: field \"messages\" is empty", ErrInvalid)
	case n > MaxEpisodeMessages:
		return nil, fmt.Errorf("%w: %d messages, at most %d in one call", ErrInvalid, n, MaxEpisodeMessages)
	}
	first := ep.FirstSeq
	if first == 0 {
		first = 1
	}
	if first < 1 || first > memory.MaxSeq-int64(len(ep.Messages)) {
		return nil, fmt.Errorf("%w: field \"first_seq\" %d: want 1 to %d (0 means 1)", ErrInvalid, ep.FirstSeq, memory.MaxSeq-int64(len(ep.Messages)))
	}
	typ := ep.Type
	if typ == "" {
		typ = DefaultTurnType
	}
	mems := make([]*Memory, len(ep.Messages))
	seen := map[int64]int{}
	for i, msg := range ep.Messages {
		seq := msg.Seq
		if seq == 0 {
			seq = first + int64(i)
		}
		if j, dup := seen[seq]; dup {
			return nil, fmt.Errorf("%w: message %d has the seq %d of message %d", ErrInvalid, i+1, seq, j+1)
		}
		seen[seq] = i
		mems[i] = &Memory{Text: msg.Text, Speaker: msg.Speaker, OccurredAt: msg.OccurredAt, Episode: ep.Episode, Seq: seq,
			Scope: ep.Scope, Type: typ, Tags: ep.Tags, Source: ep.Source, Metadata: msg.Metadata}
	}
	return mems, nil
}

// checkSupersedes refuses a memory that supersedes one that is neither
// stored in its own scope nor given in the same call: a typo must not pass
// for a supersession that never applies. (Import skips the check: a
// restored store may name a memory deleted since.)
func (v view) checkSupersedes(ctx context.Context, mems []*memory.Memory) error {
	given := map[string]bool{}
	for _, m := range mems {
		given[m.Key()] = true
	}
	for i, m := range mems {
		if m.Supersedes == "" || given[memory.Key(m.Supersedes, m.Scope)] {
			continue
		}
		got, err := v.e.be.Get(ctx, m.Scope, []string{m.Supersedes})
		if err != nil {
			return err
		}
		if t := got[m.Supersedes]; t == nil || memory.ScopeJSON(t.Scope) != memory.ScopeJSON(m.Scope) {
			what := "memory"
			if len(mems) > 1 {
				what = fmt.Sprintf("memory %d", i+1)
			}
			return fmt.Errorf("%w: %s supersedes %q, but no memory has that id in its scope %s", ErrInvalid, what, m.Supersedes, memory.ScopeJSON(m.Scope))
		}
	}
	return nil
}

// Version is one memory of a supersession chain (History).
type Version struct {
	Memory
	// SupersededBy names the memory that superseded it, and SupersededAt
	// when that occurred; Current says nothing supersedes it.
	SupersededBy string     `json:"superseded_by,omitempty"`
	SupersededAt *time.Time `json:"superseded_at,omitempty"`
	Current      bool       `json:"current"`
}

// maxHistory bounds the versions History walks.
const maxHistory = 1000

// History returns every version of what the memory with id says: the
// memories it supersedes, back to the first, and those that supersede it or
// its successors, all in its own scope, oldest first (by occurred_at, then
// id). Nothing is ever deleted by supersession, so the whole chain is here.
func (v view) History(ctx context.Context, id string) ([]Version, error) {
	start, err := v.Get(ctx, id)
	if err != nil {
		return nil, err
	}
	scope := start.Scope
	own := memory.ScopeJSON(scope)
	byID := map[string]*memory.Memory{start.ID: start}
	todo := []*memory.Memory{start}
	for len(todo) > 0 && len(byID) < maxHistory {
		m := todo[0]
		todo = todo[1:]
		// Back: what m supersedes.
		if s := m.Supersedes; s != "" && byID[s] == nil {
			got, err := v.e.be.Get(ctx, scope, []string{s})
			if err != nil {
				return nil, err
			}
			if t := got[s]; t != nil && memory.ScopeJSON(t.Scope) == own {
				byID[s] = t
				todo = append(todo, t)
			}
		}
		// Forward: what supersedes m.
		err := v.e.be.List(ctx, backend.ListQuery{Filter: memory.Filter{Scope: scope, Supersedes: m.ID}}, func(x *memory.Memory) error {
			if memory.ScopeJSON(x.Scope) == own && byID[x.ID] == nil {
				byID[x.ID] = x
				todo = append(todo, x)
			}
			return nil
		})
		if err != nil {
			return nil, fmt.Errorf("history of %s: %w", id, err)
		}
	}
	chain := slices.Collect(maps.Values(byID)) // every successor is in it: the walk went forward to the end
	out := make([]Version, 0, len(chain))
	for _, m := range chain {
		ver := Version{Memory: *m, Current: true}
		ver.Embedding, ver.Superseded = nil, nil
		if sup := memory.SupersessionOf(m.ID, m.Scope, chain); sup != nil {
			ver.SupersededBy, ver.SupersededAt, ver.Current = sup.By, &sup.At, false
		}
		out = append(out, ver)
	}
	slices.SortFunc(out, func(a, b Version) int {
		if c := a.OccurredAt.Compare(b.OccurredAt); c != 0 {
			return c
		}
		return strings.Compare(a.ID, b.ID)
	})
	return out, nil
}

// attachNeighbours gives each result of an episode up to k memories before
// and after it (Result.Neighbours), as the backend finds them.
func (v view) attachNeighbours(ctx context.Context, results []Result, k int) error {
	if k <= 0 {
		return nil
	}
	for i := range results {
		r := &results[i]
		if r.Episode == "" {
			continue
		}
		before, after, err := v.e.be.Neighbours(ctx, r.Scope, r.ID, k)
		if err != nil {
			return fmt.Errorf("neighbours of %s: %w", r.ID, err)
		}
		r.Neighbours = make([]memory.Neighbour, 0, len(before)+len(after))
		for j, m := range before {
			r.Neighbours = append(r.Neighbours, memory.NeighbourOf(m, j-len(before)))
		}
		for j, m := range after {
			r.Neighbours = append(r.Neighbours, memory.NeighbourOf(m, j+1))
		}
	}
	return nil
}
