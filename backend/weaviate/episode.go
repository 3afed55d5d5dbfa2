package weaviate

// Episodes and context. A memory of an episode (memory.EpisodeKey: an exact
// scope's conversation, session or task) is searched by its own words and,
// with a lower weight, by its context: the text of the Neighbours memories
// before and after it in episode order (memory.EpisodeOrder), as the
// built-in backend indexes it (internal/index/episode.go). Weaviate derives
// nothing, so the context is stored in each object (pContext) and every
// write keeps it true: Put and Delete read each episode they touch, its old
// and new places alike, compute every member's context as the episode now
// is, write the written memories with theirs and patch each other member
// whose stored context differs. Comparing every member, not only the ones
// next to the change, makes any write to an episode repair what an earlier
// failed or concurrent write left stale there.

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"

	"github.com/engram-memory/engram/memory"
)

// episodeRef names one episode: the tenant holding it, its exact scope
// (memory.ScopeJSON) and its name.
type episodeRef struct {
	tenant, scope, episode string
}

// episodeSet is a set of episodes, each with its scope as a map (for the
// filter that reads it).
type episodeSet map[episodeRef]map[string]string

// add puts m's episode in the set, if it has one.
func (e episodeSet) add(s *Store, m *memory.Memory) {
	if m != nil && m.Episode != "" {
		e[s.episodeOf(m)] = m.Scope
	}
}

func (s *Store) episodeOf(m *memory.Memory) episodeRef {
	return episodeRef{tenant: s.tenantOf(m.Scope), scope: memory.ScopeJSON(m.Scope), episode: m.Episode}
}

// memberFields is what the context maintenance reads of an episode's
// memories: what orders them, their text and their stored context.
const memberFields = pID + " " + pScope + " " + pSeq + " " + pOccurred + " " + pCreated + " " + pText + " " + pContext + " _additional{id}"

// episodeObjects reads the objects of one episode with selection sel, in
// pages of maxIDsPerRequest: the memories of that name whose scope is
// exactly the episode's (a filter on the scope also admits its children,
// which are left out here).
func (s *Store) episodeObjects(ctx context.Context, ref episodeRef, scope map[string]string, sel string) ([]fields, error) {
	ops := []operand{cond(pEpisode, "Equal", "valueText", gqlString(ref.episode))}
	if len(scope) > 0 {
		ops = append(ops, cond(pScope, "ContainsAll", "valueText", gqlStrings(scopeTerms(scope))))
	}
	want := strings.Join(scopeTerms(scope), "\x00")
	var out []fields
	after := ""
	for {
		page := ops
		if after != "" {
			page = append(slices.Clone(ops), cond("id", "GreaterThan", "valueText", gqlString(after)))
		}
		args := "where:" + where(page) + `,sort:[{path:["_id"],order:asc}],limit:` + strconv.Itoa(maxIDsPerRequest)
		objs, err := s.get(ctx, ref.tenant, args, sel)
		if err != nil {
			return nil, fmt.Errorf("read episode %q: %w", ref.episode, err)
		}
		for _, o := range objs {
			if strings.Join(o.Scope, "\x00") == want { // stored sorted, as scopeTerms makes them
				out = append(out, o)
			}
		}
		if len(objs) < maxIDsPerRequest {
			return out, nil
		}
		after = objs[len(objs)-1].Additional.ID
	}
}

// member is an episode's memory as the context maintenance reads it.
type member struct {
	m       *memory.Memory // id, scope, seq, occurred_at, created_at, text
	uuid    string
	context string // as stored
}

// members reads an episode's memories for the context maintenance.
func (s *Store) members(ctx context.Context, ref episodeRef, scope map[string]string) ([]member, error) {
	objs, err := s.episodeObjects(ctx, ref, scope, memberFields)
	if err != nil {
		return nil, err
	}
	out := make([]member, 0, len(objs))
	for i := range objs {
		m, err := objs[i].decodeLean()
		if err != nil {
			return nil, err
		}
		m.Text, m.Episode = objs[i].Text, ref.episode
		out = append(out, member{m: m, uuid: objs[i].Additional.ID, context: objs[i].Context})
	}
	return out, nil
}

// contextOf is pContext of order[i], the memories of one episode in
// episode order: the text of up to Neighbours memories before it and after
// it, as Engram's terms (raw, one per line, with TokenizerWord).
func (s *Store) contextOf(order []*memory.Memory, i int) string {
	k := s.context.Neighbours
	var parts []string
	add := func(ms []*memory.Memory) {
		for _, n := range ms {
			t := n.Text
			if s.tok != nil {
				t = s.terms(t)
			}
			if t != "" {
				parts = append(parts, t)
			}
		}
	}
	add(order[max(0, i-k):i])
	add(order[i+1 : min(len(order), i+1+k)])
	if s.tok != nil {
		return strings.Join(parts, " ")
	}
	return strings.Join(parts, "\n")
}

// propPatch is a merge of some properties into one stored object.
type propPatch struct {
	tenant, uuid, id string
	props            map[string]any
}

// contextPlan is what a write derives for the episodes it touches: the
// contexts of the memories it writes (by memory.Key) and the patches of the
// other members whose context changes.
type contextPlan struct {
	episodes episodeSet
	contexts map[string]string
	patches  []propPatch
}

// planContexts reads every episode the written memories leave (old: their
// stored versions, by memory.Key) or join, and computes each member's
// context as the episode will be once they are written. The written
// memories' OccurredAt must be set.
func (s *Store) planContexts(ctx context.Context, written []*memory.Memory, old map[string]*memory.Memory) (*contextPlan, error) {
	plan := &contextPlan{episodes: episodeSet{}, contexts: map[string]string{}}
	if s.context.Neighbours == 0 {
		return plan, nil
	}
	keys := make(map[string]bool, len(written))
	for _, m := range written {
		keys[m.Key()] = true
		plan.episodes.add(s, m)
		plan.episodes.add(s, old[m.Key()])
	}
	for ref, scope := range plan.episodes {
		stored, err := s.members(ctx, ref, scope)
		if err != nil {
			return nil, err
		}
		var order []*memory.Memory
		others := map[string]member{}
		for _, mb := range stored {
			if k := mb.m.Key(); !keys[k] {
				order = append(order, mb.m)
				others[k] = mb
			}
		}
		for _, m := range written {
			if m.Episode != "" && s.episodeOf(m) == ref {
				order = append(order, m)
			}
		}
		slices.SortFunc(order, memory.EpisodeOrder)
		for i, m := range order {
			c := s.contextOf(order, i)
			k := m.Key()
			if keys[k] {
				plan.contexts[k] = c
			} else if mb := others[k]; mb.context != c {
				plan.patches = append(plan.patches, propPatch{tenant: ref.tenant, uuid: mb.uuid, id: m.ID, props: map[string]any{pContext: c}})
			}
		}
	}
	return plan, nil
}

// repairEpisodes reads each episode as it is stored and patches every
// member whose stored context is not the one its neighbours give it.
func (s *Store) repairEpisodes(ctx context.Context, episodes episodeSet) error {
	if s.context.Neighbours == 0 {
		return nil
	}
	var patches []propPatch
	for ref, scope := range episodes {
		stored, err := s.members(ctx, ref, scope)
		if err != nil {
			return err
		}
		slices.SortFunc(stored, func(a, b member) int { return memory.EpisodeOrder(a.m, b.m) })
		order := make([]*memory.Memory, len(stored))
		for i, mb := range stored {
			order[i] = mb.m
		}
		for i, mb := range stored {
			if c := s.contextOf(order, i); c != mb.context {
				patches = append(patches, propPatch{tenant: ref.tenant, uuid: mb.uuid, id: mb.m.ID, props: map[string]any{pContext: c}})
			}
		}
	}
	return s.applyPatches(ctx, patches)
}

// applyPatches merges each patch's properties into its object. An object
// deleted meanwhile is no error: nothing of it is left to keep true.
func (s *Store) applyPatches(ctx context.Context, patches []propPatch) error {
	q := url.Values{"consistency_level": {s.cfg.Consistency}}
	for _, p := range patches {
		body := map[string]any{"class": s.cfg.Class, "properties": p.props}
		if p.tenant != "" {
			body["tenant"] = p.tenant
		}
		err := s.c.do(ctx, http.MethodPatch, "/v1/objects/"+s.cfg.Class+"/"+p.uuid, q, body, nil)
		var se *StatusError
		if errors.As(err, &se) && se.Code == http.StatusNotFound {
			continue
		}
		if err != nil {
			return fmt.Errorf("update memory %s: %w", p.id, err)
		}
	}
	return nil
}

// Neighbours returns up to k memories before and k after the memory with
// id in exactly scope, in its episode's order, without their vectors: none
// for a memory in no episode, or none stored. It reads the episode whole.
func (s *Store) Neighbours(ctx context.Context, scope map[string]string, id string, k int) (before, after []*memory.Memory, err error) {
	if k <= 0 {
		return nil, nil, nil
	}
	if err := exactValues(scope, "", "", "", nil); err != nil {
		return nil, nil, fmt.Errorf("%w: neighbours: %v", memory.ErrInvalid, err)
	}
	tenant := s.tenantOf(scope)
	objs, err := s.get(ctx, tenant, "where:"+string(uuidsOperand([]string{KeyID(id, scope)}))+",limit:1", leanList(""))
	if err != nil {
		return nil, nil, fmt.Errorf("neighbours of %s: %w", id, err)
	}
	if len(objs) == 0 {
		return nil, nil, nil
	}
	self, err := objs[0].decodeLean()
	if err != nil || self.Episode == "" || self.Key() != memory.Key(id, scope) {
		return nil, nil, err
	}
	all, err := s.episodeObjects(ctx, s.episodeOf(self), scope, fieldList(nil, ""))
	if err != nil {
		return nil, nil, err
	}
	ms, err := s.decodeAll(all, nil, false)
	if err != nil {
		return nil, nil, err
	}
	slices.SortFunc(ms, memory.EpisodeOrder)
	i := slices.IndexFunc(ms, func(m *memory.Memory) bool { return m.ID == id })
	if i < 0 {
		return nil, nil, nil
	}
	return ms[max(0, i-k):i], ms[i+1 : min(len(ms), i+1+k)], nil
}
