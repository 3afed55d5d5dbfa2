package engram

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/oklog/ulid/v2"

	"github.com/engram-memory/engram/embed"
	"github.com/engram-memory/engram/memory"
)

// MaxIDLength bounds a caller-chosen memory id.
const MaxIDLength = memory.MaxIDLength

// DefaultWriteEmbedTimeout bounds embedding one batch of memories being written.
const DefaultWriteEmbedTimeout = 30 * time.Second

// AddResult says what Add stored.
type AddResult struct {
	// IDs holds, for each memory given, the id of the memory that now holds
	// it: its own, or the one it was merged into (see Merged).
	IDs []string `json:"ids"`
	// Embedded counts the memories that got a vector now. When the embedder
	// failed, Deferred says why; those memories are keyword-searchable at once
	// and get vectors from Reindex.
	Embedded int    `json:"embedded"`
	Deferred string `json:"deferred,omitempty"`
	// Merged lists the memories not stored because they repeat one exactly.
	Merged []Merge `json:"merged,omitempty"`
}

// Merge is a memory Add did not store because one with the same text
// (memory.NormalText: NFC, white space collapsed; name and description not
// compared) in exactly the same scope was already stored, or given earlier
// in the same call: Index is its position in the call (0-based, as in IDs),
// ID the memory it was merged into. Only memories given without an id are
// merged: one with an id is stored under it. The repeat's new tags,
// favorite, metadata keys and type are merged into that memory (in the same
// write as the look-up), and the embedded MergeChanges say which, and which
// of its other fields were not applied (Kept).
type Merge struct {
	Index int    `json:"index"`
	ID    string `json:"id"`
	memory.MergeChanges
}

// NewID returns a new sortable unique id (a ULID).
func NewID() string { return ulid.MustNew(ulid.Now(), rand.Reader).String() }

// Add stores memories in one write: all or none. Missing ids, times and
// types are filled; the caller's structs are not modified. In a scoped view
// each memory gets the scope's keys (one that names another value for one of
// them is refused). Ids are per-scope namespaces: a memory replaces the one
// with its id in its own scope, never one in another scope. A memory given
// without an id that repeats one exactly — same content, same scope — is
// merged instead of stored twice (AddResult.Merged), checked inside the
// backend's write (backend.Merger).
//
// A memory of an episode given without an id gets the one its position
// names (memory.EpisodeID), so that adding it again replaces it; it is
// never merged. A memory that supersedes another must name one stored in
// its scope, or given in the same call.
func (v view) Add(ctx context.Context, mems ...*Memory) (AddResult, error) {
	return v.add(ctx, mems, nil, true)
}

// add is Add, telling progress how many of the memories to embed are done,
// and checking what they supersede when asked.
func (v view) add(ctx context.Context, mems []*Memory, progress func(done, total int), checkSupersedes bool) (AddResult, error) {
	var res AddResult
	now := time.Now().UTC()
	prepared := make([]*memory.Memory, len(mems))
	seen := make(map[string]int, len(mems))
	for i, in := range mems {
		m, err := v.prepare(in, now)
		if err != nil {
			if len(mems) > 1 {
				return res, fmt.Errorf("memory %d: %w", i+1, err)
			}
			return res, err
		}
		key := m.Key()
		if j, dup := seen[key]; dup {
			return res, fmt.Errorf("%w: memory %d repeats the id %q of memory %d in the same scope", ErrInvalid, i+1, m.ID, j+1)
		}
		seen[key] = i
		prepared[i] = m
	}
	if err := v.e.checkVectors(ctx, prepared); err != nil {
		return res, err
	}
	if checkSupersedes {
		if err := v.checkSupersedes(ctx, prepared); err != nil {
			return res, err
		}
	}
	// Exact repeats within the call merge into their first copy; the rest
	// are checked against the store, and merged, inside its write.
	into := make([]int, len(mems)) // index of the copy memory i repeats, or -1
	mergeable := make([]bool, len(mems))
	changes := make([]memory.MergeChanges, len(mems))
	first := map[string]int{}
	var todo []*memory.Memory
	var todoAt []int // todoAt[k] is the index in mems of todo[k]
	for i, m := range prepared {
		into[i] = -1
		if mems[i].ID == "" && m.Episode == "" { // a turn said twice is two turns
			mergeable[i] = true
			key := memory.TextKey(m.Text) + "\x00" + memory.ScopeJSON(m.Scope)
			if j, ok := first[key]; ok {
				into[i] = j
				upd, ch, err := memory.MergeRepeat(prepared[j], m, mems[i].Type != "", now)
				if err != nil {
					return res, fmt.Errorf("memory %d: %w", i+1, err)
				}
				if upd != nil {
					*prepared[j] = *upd // todo holds prepared[j]
				}
				changes[i] = ch
				continue
			}
			first[key] = i
		}
		todo = append(todo, m)
		todoAt = append(todoAt, i)
	}
	before := make([]*memory.Embedding, len(todo))
	for k, m := range todo {
		before[k] = m.Embedding
	}
	_, res.Deferred = v.e.embedMissing(ctx, todo, progress)
	embeddedNow := make([]bool, len(todo)) // read before the backend takes the memories over
	for k, m := range todo {
		embeddedNow[k] = m.Embedding != nil && m.Embedding != before[k]
	}
	ids := make([]string, len(prepared))
	for i, m := range prepared {
		ids[i] = m.ID // before the backend takes the memories over
	}
	var flags []bool
	for i := range prepared {
		if into[i] < 0 {
			flags = append(flags, mergeable[i])
		}
	}
	// The rule (memory.MergeRepeat) runs inside the backend's write, on
	// the stored memory as it is then.
	merge := func(k int, stored *memory.Memory) (*memory.Memory, error) {
		i := todoAt[k]
		upd, ch, err := memory.MergeRepeat(stored, todo[k], mems[i].Type != "", now)
		if err != nil {
			return nil, err
		}
		changes[i] = ch
		return upd, nil
	}
	existing, err := v.e.be.PutMerging(ctx, v.scope, todo, flags, merge)
	if err != nil {
		return res, err
	}
	k := 0
	for i := range prepared {
		if into[i] >= 0 {
			continue
		}
		if existing[k] != "" {
			ids[i] = existing[k]
			res.Merged = append(res.Merged, Merge{Index: i, ID: ids[i], MergeChanges: changes[i]})
		} else if embeddedNow[k] {
			res.Embedded++
		}
		k++
	}
	for i := range prepared {
		if j := into[i]; j >= 0 {
			ids[i] = ids[j]
			res.Merged = append(res.Merged, Merge{Index: i, ID: ids[i], MergeChanges: changes[i]})
		}
	}
	slices.SortFunc(res.Merged, func(a, b Merge) int { return a.Index - b.Index })
	res.IDs = ids
	return res, nil
}

// prepare copies and validates a memory for storing in the view's scope.
func (v view) prepare(in *Memory, now time.Time) (*memory.Memory, error) {
	if in == nil {
		return nil, fmt.Errorf("%w: nil memory", ErrInvalid)
	}
	f := Filter{Scope: in.Scope}
	if err := v.narrow(&f); err != nil {
		return nil, err
	}
	c := *in
	c.Scope = f.Scope
	return prepare(&c, now)
}

// prepare copies and validates a memory for storing.
func prepare(in *Memory, now time.Time) (*memory.Memory, error) {
	if in == nil {
		return nil, fmt.Errorf("%w: nil memory", ErrInvalid)
	}
	m := *in
	m.Scope = cloneMap(in.Scope)
	m.Tags = append([]string(nil), in.Tags...)
	if err := m.Normalize(); err != nil {
		return nil, err
	}
	if m.ID == "" {
		if m.ID = memory.EpisodeID(m.Episode, m.Seq); m.ID == "" {
			m.ID = NewID()
		}
	} else if err := checkID(m.ID); err != nil {
		return nil, err
	}
	if m.Supersedes == m.ID {
		return nil, fmt.Errorf("%w: memory %s cannot supersede itself", ErrInvalid, m.ID)
	}
	if m.CreatedAt.IsZero() {
		m.CreatedAt = now
	}
	if m.OccurredAt.IsZero() {
		m.OccurredAt = m.CreatedAt
	}
	if m.UpdatedAt.IsZero() {
		m.UpdatedAt = m.CreatedAt
	}
	m.CreatedAt, m.UpdatedAt, m.OccurredAt = m.CreatedAt.UTC(), m.UpdatedAt.UTC(), m.OccurredAt.UTC()
	m.Superseded = nil // derived by the backend, never given
	if m.DemandAt != nil {
		t := m.DemandAt.UTC()
		m.DemandAt = &t
	}
	m.ContentHash = m.ComputeHash()
	if e := in.Embedding; e != nil {
		if e.Model == "" || len(e.Vector) == 0 {
			return nil, fmt.Errorf("%w: field \"embedding\" needs a model and a vector", ErrInvalid)
		}
		if e.Dim != 0 && e.Dim != len(e.Vector) {
			return nil, fmt.Errorf("%w: field \"embedding\": dim %d but %d values", ErrInvalid, e.Dim, len(e.Vector))
		}
		m.Embedding = &memory.Embedding{Model: e.Model, Dim: len(e.Vector), Vector: append([]float32(nil), e.Vector...)}
	}
	if err := m.CheckStored(); err != nil {
		return nil, err
	}
	return &m, nil
}

func checkID(id string) error { return memory.CheckID(id) }

// embedMissing gives vectors to the memories that have none from the current
// model, telling progress (when set) after each batch. An embedder failure is
// not an error: it returns the reason instead.
func (e *engine) embedMissing(ctx context.Context, mems []*memory.Memory, progress func(done, total int)) (embedded int, deferred string) {
	if e.embedder == nil {
		return 0, ""
	}
	model := e.embedder.Model()
	var todo []*memory.Memory
	for _, m := range mems {
		if m.Embedding == nil || m.Embedding.Model != model {
			todo = append(todo, m)
		}
	}
	timeout := e.opts.WriteEmbedTimeout
	if timeout <= 0 && !embed.IsInProcess(e.memEmbedder) {
		timeout = DefaultWriteEmbedTimeout
	}
	err := batches(todo, func(start int, batch []*memory.Memory) error {
		n, err := embedBatch(ctx, e.memEmbedder, batch, timeout)
		embedded += n
		if progress != nil && err == nil {
			progress(start+len(batch), len(todo))
		}
		return err
	})
	if err != nil {
		return embedded, fmt.Sprintf("embedder %s: %v; stored without vectors (Reindex gives them theirs later)", model, err)
	}
	return embedded, ""
}

// Patch names the fields Update changes; nil fields are left as they are.
type Patch struct {
	Name        *string            `json:"name,omitempty"`
	Description *string            `json:"description,omitempty"`
	Text        *string            `json:"text,omitempty"`
	Type        *string            `json:"type,omitempty"`
	Scene       *string            `json:"scene,omitempty"`
	Scope       *map[string]string `json:"scope,omitempty"`
	Tags        *[]string          `json:"tags,omitempty"`
	Source      *string            `json:"source,omitempty"`
	Metadata    *json.RawMessage   `json:"metadata,omitempty"`
	Favorite    *bool              `json:"favorite,omitempty"`
	Episode     *string            `json:"episode,omitempty"`
	Seq         *int64             `json:"seq,omitempty"`
	Speaker     *string            `json:"speaker,omitempty"`
	OccurredAt  *time.Time         `json:"occurred_at,omitempty"`
	Supersedes  *string            `json:"supersedes,omitempty"`
}

// Empty reports whether the patch names no field.
func (p Patch) Empty() bool { return p == Patch{} }

// Update changes a memory's fields. A change to its name, description or text
// re-embeds it. In a scoped view the patch may not move it out of the scope.
// A patch that changes nothing writes nothing (updated_at stays). The read,
// the change and the write are one atomic step (backend.Updater), so
// concurrent updates, deletes and uses are never lost or undone; the
// embedder runs outside it, and the step is retried when the text it
// embedded changed meanwhile.
func (v view) Update(ctx context.Context, id string, p Patch) (*Memory, error) {
	if p.Scope != nil {
		f := Filter{Scope: *p.Scope}
		if err := v.narrow(&f); err != nil {
			return nil, err
		}
		p.Scope = &f.Scope
	}
	if p.Supersedes != nil && *p.Supersedes != "" {
		// What it will supersede must exist in its scope, as Add checks.
		old, err := v.Get(ctx, id)
		if err != nil {
			return nil, err
		}
		m := &memory.Memory{ID: old.ID, Scope: old.Scope, Supersedes: *p.Supersedes}
		if p.Scope != nil {
			m.Scope = *p.Scope
		}
		if err := v.checkSupersedes(ctx, []*memory.Memory{m}); err != nil {
			return nil, err
		}
	}
	var (
		vec     *memory.Embedding // the vector made for content hash vecHash (nil: none)
		vecHash string
	)
	for attempt := 0; ; attempt++ {
		var todo *memory.Memory // patched content that needs a vector first
		now := time.Now().UTC()
		stored, err := v.e.be.Update(ctx, v.scope, id, func(old *memory.Memory) (*memory.Memory, error) {
			m, changed, err := applyPatch(old, p)
			if err != nil || !changed {
				return nil, err
			}
			m.UpdatedAt = now
			if m.ContentHash != old.ContentHash && v.e.embedder != nil {
				if vecHash != m.ContentHash {
					todo = m
					return nil, errNeedsVector
				}
				m.Embedding = cloneEmbedding(vec)
			}
			return m, nil
		})
		if errors.Is(err, errNeedsVector) && attempt < maxUpdateAttempts {
			c := *todo
			c.Embedding = nil
			if _, deferred := v.e.embedMissing(ctx, []*memory.Memory{&c}, nil); deferred != "" {
				v.e.log.Warn("update: embedding deferred", "id", id, "reason", deferred)
			}
			vec, vecHash = c.Embedding, c.ContentHash
			continue
		}
		if errors.Is(err, errNeedsVector) {
			return nil, fmt.Errorf("update %s: its text changed %d times while it was being embedded; try again", id, maxUpdateAttempts)
		}
		if err != nil {
			return nil, err
		}
		return stored, nil
	}
}

// errNeedsVector aborts an atomic update whose new content needs a vector the
// engine makes outside the write.
var errNeedsVector = errors.New("the update needs a vector")

// maxUpdateAttempts bounds the retries of an update whose text keeps
// changing under it while it embeds.
const maxUpdateAttempts = 4

// applyPatch returns old with p applied, normalised and re-hashed, and
// whether anything changed. old is not modified.
func applyPatch(old *memory.Memory, p Patch) (*memory.Memory, bool, error) {
	m := *old
	set := func(dst *string, src *string) {
		if src != nil {
			*dst = *src
		}
	}
	set(&m.Name, p.Name)
	set(&m.Description, p.Description)
	set(&m.Text, p.Text)
	set(&m.Type, p.Type)
	set(&m.Scene, p.Scene)
	set(&m.Source, p.Source)
	if p.Scope != nil {
		m.Scope = cloneMap(*p.Scope)
	}
	if p.Tags != nil {
		m.Tags = append([]string(nil), (*p.Tags)...)
	}
	if p.Metadata != nil {
		m.Metadata = *p.Metadata
	}
	if p.Favorite != nil {
		m.Favorite = *p.Favorite
	}
	set(&m.Episode, p.Episode)
	set(&m.Speaker, p.Speaker)
	set(&m.Supersedes, p.Supersedes)
	if p.Seq != nil {
		m.Seq = *p.Seq
	}
	if p.Episode != nil && *p.Episode == "" && p.Seq == nil {
		m.Seq = 0 // leaving its episode, it leaves its place too
	}
	if p.OccurredAt != nil {
		if err := memory.CheckTime("occurred_at", *p.OccurredAt); err != nil {
			return nil, false, err
		}
		m.OccurredAt = p.OccurredAt.UTC()
	}
	if err := m.Normalize(); err != nil {
		return nil, false, err
	}
	m.ContentHash = m.ComputeHash()
	if m.ContentHash != old.ContentHash {
		m.Embedding = nil
	}
	changed := m.Name != old.Name || m.Description != old.Description || m.Text != old.Text || m.Type != old.Type ||
		m.Scene != old.Scene || m.Source != old.Source || m.Favorite != old.Favorite ||
		m.Episode != old.Episode || m.Seq != old.Seq || m.Speaker != old.Speaker || m.Supersedes != old.Supersedes ||
		!m.OccurredAt.Equal(old.OccurredAt) ||
		memory.ScopeJSON(m.Scope) != memory.ScopeJSON(old.Scope) || !slices.Equal(m.Tags, old.Tags) ||
		!bytes.Equal(m.Metadata, old.Metadata)
	return &m, changed, nil
}

func cloneEmbedding(e *memory.Embedding) *memory.Embedding {
	if e == nil {
		return nil
	}
	c := *e
	c.Vector = slices.Clone(e.Vector)
	return &c
}

// Favorite marks or unmarks a memory as a favorite.
func (v view) Favorite(ctx context.Context, id string, on bool) (*Memory, error) {
	return v.Update(ctx, id, Patch{Favorite: &on})
}

// Delete removes memories. It returns how many existed; deleting a single id
// that does not exist (or, in a scoped view, lies outside it) is ErrNotFound.
func (v view) Delete(ctx context.Context, ids ...string) (int, error) {
	n, err := v.e.be.Delete(ctx, v.scope, ids)
	if err != nil {
		return n, err
	}
	if n == 0 && len(ids) == 1 {
		return 0, fmt.Errorf("memory %s: %w", ids[0], ErrNotFound)
	}
	return n, nil
}

// Touch records a use of each memory, as a delivery by search would, in one
// write; an id that does not exist (or lies outside the view) fails it with
// ErrNotFound and nothing is recorded.
func (v view) Touch(ctx context.Context, ids ...string) error {
	_, err := v.e.be.RecordUse(ctx, v.scope, ids, time.Now().UTC(), true)
	return err
}

// Get returns a memory by id, embedding included, as the store holds it now;
// one outside a scoped view is ErrNotFound.
func (v view) Get(ctx context.Context, id string) (*Memory, error) {
	got, err := v.e.be.Get(ctx, v.scope, []string{id})
	if err != nil {
		return nil, err
	}
	m, ok := got[id]
	if !ok {
		return nil, fmt.Errorf("memory %s: %w", id, ErrNotFound)
	}
	return m, nil
}
