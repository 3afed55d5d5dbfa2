package mcpserver

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/engram-memory/engram"
	"github.com/engram-memory/engram/internal/format"
	"github.com/engram-memory/engram/internal/when"
	"github.com/engram-memory/engram/memory"
)

// MemoryOut is a memory as the tools return it: every field but the vector.
type MemoryOut struct {
	ID          string            `json:"id"`
	Name        string            `json:"name,omitempty"`
	Description string            `json:"description,omitempty"`
	Text        string            `json:"text"`
	Type        string            `json:"type"`
	Scene       string            `json:"scene,omitempty"`
	Scope       map[string]string `json:"scope,omitempty"`
	Tags        []string          `json:"tags,omitempty"`
	Source      string            `json:"source,omitempty"`
	Metadata    map[string]any    `json:"metadata,omitempty"`
	Favorite    bool              `json:"favorite"`
	Episode     string            `json:"episode,omitempty"`
	Seq         int64             `json:"seq,omitempty"`
	Speaker     string            `json:"speaker,omitempty"`
	OccurredAt  time.Time         `json:"occurred_at,omitzero"`
	Supersedes  string            `json:"supersedes,omitempty"`
	CreatedAt   time.Time         `json:"created_at"`
	UpdatedAt   time.Time         `json:"updated_at"`
	Uses        int64             `json:"uses"`
	// EmbeddingModel names the model of the stored vector; empty when the
	// memory has none yet (keyword search still finds it).
	EmbeddingModel string `json:"embedding_model,omitempty"`
}

// AddOutput is memory_add's structured result.
type AddOutput struct {
	ID string `json:"id"`
	// Embedded is false when the embedder failed; Deferred then says why.
	Embedded bool   `json:"embedded"`
	Deferred string `json:"deferred,omitempty"`
	// Merged is set when a memory already held this text in this scope:
	// nothing was stored, the repeat was merged into it (ID), and what
	// changed is listed.
	Merged *engram.Merge `json:"merged,omitempty"`
}

// DeleteOutput is memory_delete's structured result.
type DeleteOutput struct {
	ID      string `json:"id"`
	Deleted int    `json:"deleted"`
}

// tools binds the tool handlers to a backend.
type tools struct{ b Backend }

func (t tools) search(ctx context.Context, _ *mcp.CallToolRequest, in SearchInput) (*mcp.CallToolResult, *engram.Response, error) {
	q, err := in.query(time.Now())
	if err != nil {
		return nil, nil, err
	}
	resp, err := t.b.Search(ctx, q)
	if err != nil {
		return nil, nil, err
	}
	budget := in.Budget
	if budget <= 0 {
		budget = DefaultSearchBudget
	}
	text := searchText(resp, budget)
	if resp.Reduced != nil {
		// The model sent the query: a long one's echo would only double
		// what goes back into its context.
		resp.Query = format.ShownQuery(resp)
	}
	return textResult(text), resp, nil
}

// query turns the arguments into an engram query, applying defaults.
func (in SearchInput) query(now time.Time) (engram.Query, error) {
	q := engram.Query{Query: in.Query, Limit: in.Limit, Mode: in.Mode, ModelBar: true}
	if in.MinRelevance != nil {
		q.MinRelevance, q.ModelBar = *in.MinRelevance, false
	}
	if strings.TrimSpace(in.Query) == "" {
		return q, fmt.Errorf("%w: query must not be empty", engram.ErrInvalidQuery)
	}
	if q.Limit == 0 {
		q.Limit = DefaultSearchLimit
	}
	if q.Limit < 1 || q.Limit > MaxSearchLimit {
		return q, fmt.Errorf("%w: limit %d: want 1 to %d", engram.ErrInvalidQuery, q.Limit, MaxSearchLimit)
	}
	q.Type, q.Scene, q.Scope, q.Tags = in.Type, in.Scene, in.Scope, in.Tags
	q.Episode, q.IncludeSuperseded, q.Neighbours = in.Episode, in.IncludeSuperseded, DefaultSearchNeighbours
	if in.Neighbours != nil {
		q.Neighbours = *in.Neighbours
	}
	for _, b := range []struct {
		name, s string
		dst     **time.Time
	}{{"since", in.Since, &q.Since}, {"until", in.Until, &q.Until}, {"as_of", in.AsOf, &q.AsOf}, {"now", in.Now, &q.Now}} {
		if b.s == "" {
			continue
		}
		t, err := when.Parse(b.s, now)
		if err != nil {
			return q, fmt.Errorf("%w: %s: %v", engram.ErrInvalidQuery, b.name, err)
		}
		*b.dst = &t
	}
	return q, nil
}

func (t tools) add(ctx context.Context, _ *mcp.CallToolRequest, in AddInput) (*mcp.CallToolResult, *AddOutput, error) {
	meta, err := metadataJSON(in.Metadata)
	if err != nil {
		return nil, nil, err
	}
	m := &engram.Memory{Text: in.Text, Name: in.Name, Description: in.Description, Type: in.Type,
		Scene: in.Scene, Scope: in.Scope, Tags: in.Tags, Source: in.Source, Metadata: meta, Favorite: in.Favorite,
		Episode: in.Episode, Seq: in.Seq, Speaker: in.Speaker, Supersedes: in.Supersedes}
	if in.OccurredAt != "" {
		at, err := when.Parse(in.OccurredAt, time.Now())
		if err != nil {
			return nil, nil, fmt.Errorf("%w: occurred_at: %v", engram.ErrInvalid, err)
		}
		m.OccurredAt = at
	}
	res, err := t.b.Add(ctx, m)
	if err != nil {
		return nil, nil, err
	}
	if len(res.IDs) != 1 {
		return nil, nil, fmt.Errorf("add: stored %d memories, want 1", len(res.IDs))
	}
	out := &AddOutput{ID: res.IDs[0], Embedded: res.Embedded == 1, Deferred: res.Deferred}
	text := "Stored memory " + out.ID + "."
	if len(res.Merged) == 1 {
		out.Merged = &res.Merged[0]
		text = mergeText(res.Merged[0])
	}
	if out.Deferred != "" {
		text += " It is searchable by keywords now; its vector is deferred: " + out.Deferred
	}
	return textResult(text), out, nil
}

func (t tools) update(ctx context.Context, _ *mcp.CallToolRequest, in UpdateInput) (*mcp.CallToolResult, *MemoryOut, error) {
	p := engram.Patch{Text: in.Text, Name: in.Name, Description: in.Description, Type: in.Type, Scene: in.Scene,
		Scope: in.Scope, Tags: in.Tags, Source: in.Source, Favorite: in.Favorite,
		Episode: in.Episode, Seq: in.Seq, Speaker: in.Speaker, Supersedes: in.Supersedes}
	if in.OccurredAt != nil {
		at, err := when.Parse(*in.OccurredAt, time.Now())
		if err != nil {
			return nil, nil, fmt.Errorf("%w: occurred_at: %v", engram.ErrInvalid, err)
		}
		p.OccurredAt = &at
	}
	if in.Metadata != nil {
		raw, err := metadataJSON(in.Metadata)
		if err != nil {
			return nil, nil, err
		}
		p.Metadata = &raw
	}
	if p == (engram.Patch{}) {
		return nil, nil, fmt.Errorf("%w: nothing to change: give at least one field besides id", engram.ErrInvalid)
	}
	b, err := t.within(in.Within)
	if err != nil {
		return nil, nil, err
	}
	m, err := b.Update(ctx, in.ID, p)
	if err != nil {
		return nil, nil, byID(err)
	}
	out := memoryOut(m)
	return textResult("Updated memory " + m.ID + ":\n" + memoryText(out)), out, nil
}

func (t tools) delete(ctx context.Context, _ *mcp.CallToolRequest, in IDInput) (*mcp.CallToolResult, *DeleteOutput, error) {
	b, err := t.within(in.Within)
	if err != nil {
		return nil, nil, err
	}
	n, err := b.Delete(ctx, in.ID)
	if err != nil {
		return nil, nil, byID(err)
	}
	return textResult("Deleted memory " + in.ID + "."), &DeleteOutput{ID: in.ID, Deleted: n}, nil
}

func (t tools) get(ctx context.Context, _ *mcp.CallToolRequest, in IDInput) (*mcp.CallToolResult, *MemoryOut, error) {
	b, err := t.within(in.Within)
	if err != nil {
		return nil, nil, err
	}
	m, err := b.Get(ctx, in.ID)
	if err != nil {
		return nil, nil, byID(err)
	}
	out := memoryOut(m)
	return textResult(memoryText(out)), out, nil
}

func (t tools) favorite(ctx context.Context, _ *mcp.CallToolRequest, in FavoriteInput) (*mcp.CallToolResult, *MemoryOut, error) {
	on := in.Favorite == nil || *in.Favorite
	b, err := t.within(in.Within)
	if err != nil {
		return nil, nil, err
	}
	m, err := b.Update(ctx, in.ID, engram.Patch{Favorite: &on})
	if err != nil {
		return nil, nil, byID(err)
	}
	text := "Marked memory " + m.ID + " as a favorite."
	if !on {
		text = "Removed the favorite mark from memory " + m.ID + "."
	}
	return textResult(text), memoryOut(m), nil
}

func (t tools) brief(ctx context.Context, _ *mcp.CallToolRequest, in BriefInput) (*mcp.CallToolResult, *engram.Brief, error) {
	opt := engram.BriefOptions{Budget: in.Budget, Limit: in.Limit, Neighbours: in.Neighbours}
	opt.Scope, opt.Type = in.Scope, in.Type
	b, err := t.b.Brief(ctx, opt)
	if err != nil {
		return nil, nil, err
	}
	return textResult(briefText(b)), b, nil
}

// within is the backend for a call on one memory: narrowed to the scope
// given (inside the caller's: a key naming another value is refused), which
// names one of several memories with the id below the caller's scope.
func (t tools) within(scope map[string]string) (Backend, error) {
	if len(scope) == 0 {
		return t.b, nil
	}
	n, ok := t.b.(interface {
		Within(map[string]string) (*engram.Scoped, error)
	})
	if !ok {
		return nil, fmt.Errorf("%w: within is not supported by this server", engram.ErrInvalid)
	}
	v, err := n.Within(scope)
	if err != nil {
		return nil, fmt.Errorf("within: %w", err)
	}
	return v, nil
}

// byID says how to name one memory of an ambiguous id.
func byID(err error) error {
	if errors.Is(err, memory.ErrAmbiguous) {
		return fmt.Errorf("%w (give within: the scope's key/value pairs, as memory_list shows them)", err)
	}
	return err
}

// textResult is a successful result whose text content is s; the SDK adds
// the structured content.
func textResult(s string) *mcp.CallToolResult {
	return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: s}}}
}

// memoryOut converts a stored memory for output.
func memoryOut(m *engram.Memory) *MemoryOut {
	out := &MemoryOut{ID: m.ID, Name: m.Name, Description: m.Description, Text: m.Text, Type: m.Type,
		Scene: m.Scene, Scope: m.Scope, Tags: m.Tags, Source: m.Source, Favorite: m.Favorite,
		Episode: m.Episode, Seq: m.Seq, Speaker: m.Speaker, OccurredAt: m.OccurredAt, Supersedes: m.Supersedes,
		CreatedAt: m.CreatedAt, UpdatedAt: m.UpdatedAt, Uses: m.Uses}
	if len(m.Metadata) > 0 {
		// Stored metadata was validated as an object; a decode failure leaves it out.
		_ = json.Unmarshal(m.Metadata, &out.Metadata)
	}
	if m.Embedding != nil {
		out.EmbeddingModel = m.Embedding.Model
	}
	return out
}

// ListOutput is memory_list's structured result.
type ListOutput struct {
	Memories   []*MemoryOut `json:"memories"`
	NextCursor string       `json:"next_cursor,omitempty"`
}

func (t tools) list(ctx context.Context, _ *mcp.CallToolRequest, in ListInput) (*mcp.CallToolResult, *ListOutput, error) {
	opt := engram.ListOptions{Order: in.Order, Limit: in.Limit, Cursor: in.Cursor}
	opt.Scope, opt.Type, opt.Tags, opt.Episode, opt.Current = in.Scope, in.Type, in.Tags, in.Episode, in.Current
	if opt.Limit == 0 {
		opt.Limit = DefaultListLimit
	}
	if opt.Limit < 1 || opt.Limit > MaxListLimit {
		return nil, nil, fmt.Errorf("%w: limit %d: want 1 to %d", engram.ErrInvalid, opt.Limit, MaxListLimit)
	}
	now := time.Now()
	for _, b := range []struct {
		name, s string
		dst     **time.Time
	}{{"since", in.Since, &opt.Since}, {"until", in.Until, &opt.Until}, {"as_of", in.AsOf, &opt.AsOf}} {
		if b.s == "" {
			continue
		}
		at, err := when.Parse(b.s, now)
		if err != nil {
			return nil, nil, fmt.Errorf("%w: %s: %v", engram.ErrInvalid, b.name, err)
		}
		*b.dst = &at
	}
	page, err := t.b.List(ctx, opt)
	if err != nil {
		return nil, nil, err
	}
	out := &ListOutput{Memories: make([]*MemoryOut, len(page.Memories)), NextCursor: page.NextCursor}
	for i, m := range page.Memories {
		out.Memories[i] = memoryOut(m)
	}
	return textResult(listText(page)), out, nil
}

// HistoryOutput is memory_history's structured result.
type HistoryOutput struct {
	Versions []engram.Version `json:"versions"`
}

func (t tools) history(ctx context.Context, _ *mcp.CallToolRequest, in IDInput) (*mcp.CallToolResult, *HistoryOutput, error) {
	b, err := t.within(in.Within)
	if err != nil {
		return nil, nil, err
	}
	vs, err := b.History(ctx, in.ID)
	if err != nil {
		return nil, nil, byID(err)
	}
	return textResult(historyText(vs)), &HistoryOutput{Versions: vs}, nil
}

// EpisodeOutput is memory_add_episode's structured result.
type EpisodeOutput struct {
	IDs      []string `json:"ids"`
	Embedded int      `json:"embedded"`
	Deferred string   `json:"deferred,omitempty"`
}

func (t tools) addEpisode(ctx context.Context, _ *mcp.CallToolRequest, in EpisodeInput) (*mcp.CallToolResult, *EpisodeOutput, error) {
	ep := engram.Episode{Episode: in.Episode, FirstSeq: in.FirstSeq, Scope: in.Scope, Type: in.Type, Tags: in.Tags, Source: in.Source,
		Messages: make([]engram.Message, len(in.Messages))}
	now := time.Now()
	for i, m := range in.Messages {
		ep.Messages[i] = engram.Message{Speaker: m.Speaker, Text: m.Text}
		if m.OccurredAt != "" {
			at, err := when.Parse(m.OccurredAt, now)
			if err != nil {
				return nil, nil, fmt.Errorf("%w: message %d: occurred_at: %v", engram.ErrInvalid, i+1, err)
			}
			ep.Messages[i].OccurredAt = at
		}
	}
	res, err := t.b.AddEpisode(ctx, ep)
	if err != nil {
		return nil, nil, err
	}
	out := &EpisodeOutput{IDs: res.IDs, Embedded: res.Embedded, Deferred: res.Deferred}
	text := fmt.Sprintf("Stored %d %s of episode %q (ids %s … %s).", len(res.IDs), plural(len(res.IDs), "turn", "turns"),
		in.Episode, res.IDs[0], res.IDs[len(res.IDs)-1])
	if out.Deferred != "" {
		text += " They are searchable by keywords now; their vectors are deferred: " + out.Deferred
	}
	return textResult(text), out, nil
}

// mergeText says what became of a memory_add that repeated a stored memory.
func mergeText(mg engram.Merge) string {
	text := "Not stored again: memory " + mg.ID + " already holds this text in this scope."
	var added []string
	if len(mg.Tags) > 0 {
		added = append(added, "tags "+strings.Join(mg.Tags, ", "))
	}
	if mg.Favorite {
		added = append(added, "favorite")
	}
	if len(mg.Metadata) > 0 {
		added = append(added, "metadata "+strings.Join(mg.Metadata, ", "))
	}
	if mg.Type != "" {
		added = append(added, "type "+mg.Type)
	}
	if len(added) > 0 {
		text += " Merged into it: " + strings.Join(added, "; ") + "."
	}
	if len(mg.Kept) > 0 {
		text += " It keeps its own " + strings.Join(mg.Kept, ", ") + " (memory_update changes them)."
	}
	return text
}
