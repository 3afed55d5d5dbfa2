package mcpserver

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/engram-memory/engram"
	"github.com/engram-memory/engram/internal/when"
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
	return textResult(searchText(resp, budget)), resp, nil
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
	for _, b := range []struct {
		name, s string
		dst     **time.Time
	}{{"since", in.Since, &q.Since}, {"until", in.Until, &q.Until}} {
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
		Scene: in.Scene, Scope: in.Scope, Tags: in.Tags, Source: in.Source, Metadata: meta, Favorite: in.Favorite}
	res, err := t.b.Add(ctx, m)
	if err != nil {
		return nil, nil, err
	}
	if len(res.IDs) != 1 {
		return nil, nil, fmt.Errorf("add: stored %d memories, want 1", len(res.IDs))
	}
	out := &AddOutput{ID: res.IDs[0], Embedded: res.Embedded == 1, Deferred: res.Deferred}
	text := "Stored memory " + out.ID + "."
	if out.Deferred != "" {
		text += " It is searchable by keywords now; its vector is deferred: " + out.Deferred
	}
	return textResult(text), out, nil
}

func (t tools) update(ctx context.Context, _ *mcp.CallToolRequest, in UpdateInput) (*mcp.CallToolResult, *MemoryOut, error) {
	p := engram.Patch{Text: in.Text, Name: in.Name, Description: in.Description, Type: in.Type, Scene: in.Scene,
		Scope: in.Scope, Tags: in.Tags, Source: in.Source, Favorite: in.Favorite}
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
	m, err := t.b.Update(ctx, in.ID, p)
	if err != nil {
		return nil, nil, err
	}
	out := memoryOut(m)
	return textResult("Updated memory " + m.ID + ":\n" + memoryText(out)), out, nil
}

func (t tools) delete(ctx context.Context, _ *mcp.CallToolRequest, in IDInput) (*mcp.CallToolResult, *DeleteOutput, error) {
	n, err := t.b.Delete(ctx, in.ID)
	if err != nil {
		return nil, nil, err
	}
	return textResult("Deleted memory " + in.ID + "."), &DeleteOutput{ID: in.ID, Deleted: n}, nil
}

func (t tools) get(ctx context.Context, _ *mcp.CallToolRequest, in IDInput) (*mcp.CallToolResult, *MemoryOut, error) {
	m, err := t.b.Get(ctx, in.ID)
	if err != nil {
		return nil, nil, err
	}
	out := memoryOut(m)
	return textResult(memoryText(out)), out, nil
}

func (t tools) favorite(ctx context.Context, _ *mcp.CallToolRequest, in FavoriteInput) (*mcp.CallToolResult, *MemoryOut, error) {
	on := in.Favorite == nil || *in.Favorite
	m, err := t.b.Update(ctx, in.ID, engram.Patch{Favorite: &on})
	if err != nil {
		return nil, nil, err
	}
	text := "Marked memory " + m.ID + " as a favorite."
	if !on {
		text = "Removed the favorite mark from memory " + m.ID + "."
	}
	return textResult(text), memoryOut(m), nil
}

func (t tools) brief(ctx context.Context, _ *mcp.CallToolRequest, in BriefInput) (*mcp.CallToolResult, *engram.Brief, error) {
	opt := engram.BriefOptions{Budget: in.Budget, Limit: in.Limit}
	opt.Scope, opt.Type = in.Scope, in.Type
	b, err := t.b.Brief(ctx, opt)
	if err != nil {
		return nil, nil, err
	}
	return textResult(briefText(b)), b, nil
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
	opt.Scope, opt.Type, opt.Tags = in.Scope, in.Type, in.Tags
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
	}{{"since", in.Since, &opt.Since}, {"until", in.Until, &opt.Until}} {
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
