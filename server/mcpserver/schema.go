package mcpserver

import (
	"encoding/json"
	"fmt"
	"sync"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// SearchInput are memory_search's arguments.
type SearchInput struct {
	Query             string            `json:"query" jsonschema:"what to recall: a natural-language question or description, or exact identifiers (names, error messages, file paths, ticket numbers); the search is hybrid (keyword BM25 + semantic vectors), so both kinds work"`
	Limit             int               `json:"limit,omitempty" jsonschema:"how many memories at most (1 to 50, default 10)"`
	Mode              string            `json:"mode,omitempty" jsonschema:"hybrid (default, best in general), bm25 (keywords only: exact terms, identifiers) or vector (meaning only: paraphrases)"`
	Type              string            `json:"type,omitempty" jsonschema:"only memories of this type (fact, person, org, event, preference, instruction, note, ...)"`
	Scene             string            `json:"scene,omitempty" jsonschema:"only memories of this scene"`
	Scope             map[string]string `json:"scope,omitempty" jsonschema:"only memories whose scope contains all these key/value pairs, such as {\"project\": \"engram\"}"`
	Tags              []string          `json:"tags,omitempty" jsonschema:"only memories carrying all these tags"`
	Since             string            `json:"since,omitempty" jsonschema:"only memories created at or after this time: RFC 3339, YYYY-MM-DD, or an age such as 7d or 12h"`
	Until             string            `json:"until,omitempty" jsonschema:"only memories created before this time (same forms as since)"`
	MinRelevance      *float64          `json:"min_relevance,omitempty" jsonschema:"drop results whose relevance (0 to 1) is below this; default the embedding model's relevance bar, so that nothing comes back when nothing is relevant; 0 keeps every match, however weak"`
	Budget            int               `json:"budget,omitempty" jsonschema:"character budget of the text answer (default 6000); the structured result always has every memory whole"`
	Episode           string            `json:"episode,omitempty" jsonschema:"only memories of this episode (a conversation, session or task)"`
	AsOf              string            `json:"as_of,omitempty" jsonschema:"what was true at this time: memories superseded later are returned as they were, newer ones left out (RFC 3339, YYYY-MM-DD or an age such as 30d); default now: only what is current"`
	IncludeSuperseded bool              `json:"include_superseded,omitempty" jsonschema:"also return memories that a newer memory supersedes"`
	Now               string            `json:"now,omitempty" jsonschema:"the time relative date phrases in the query (last week, yesterday) are read from (RFC 3339 or YYYY-MM-DD; default the current time)"`
	Neighbours        *int              `json:"neighbours,omitempty" jsonschema:"show each result of a conversation with this many turns before and after it (default 1, 0 for none)"`
}

// AddInput are memory_add's arguments: one memory.
type AddInput struct {
	Text        string            `json:"text" jsonschema:"the memory itself: one self-contained statement that will make sense later without this conversation (who, what, when, why)"`
	Name        string            `json:"name,omitempty" jsonschema:"a short title"`
	Description string            `json:"description,omitempty" jsonschema:"a one-line summary"`
	Type        string            `json:"type,omitempty" jsonschema:"kind of memory, free text; conventional values: fact, person, org, event, preference, instruction, note (the default)"`
	Scene       string            `json:"scene,omitempty" jsonschema:"the context it belongs to (a task, a meeting, a topic)"`
	Scope       map[string]string `json:"scope,omitempty" jsonschema:"who or what it belongs to, as string key/value pairs such as {\"user\": \"u7\", \"project\": \"engram\"}; searches filtered by scope find it only if it carries their pairs"`
	Tags        []string          `json:"tags,omitempty" jsonschema:"labels for filtering"`
	Source      string            `json:"source,omitempty" jsonschema:"where it came from (a URL, a file, a person, a conversation)"`
	Metadata    map[string]any    `json:"metadata,omitempty" jsonschema:"any extra fields as a JSON object"`
	Favorite    bool              `json:"favorite,omitempty" jsonschema:"mark it as a favorite: ranked a little higher and always first in briefings"`
	Episode     string            `json:"episode,omitempty" jsonschema:"the conversation, session or task it belongs to"`
	Seq         int64             `json:"seq,omitempty" jsonschema:"its position in the episode; adding the same episode and seq again replaces it"`
	Speaker     string            `json:"speaker,omitempty" jsonschema:"who said or wrote it: user, assistant, a name"`
	OccurredAt  string            `json:"occurred_at,omitempty" jsonschema:"when it happened or was said (RFC 3339 or YYYY-MM-DD; default now)"`
	Supersedes  string            `json:"supersedes,omitempty" jsonschema:"the id of a stored memory (same scope) this one replaces as the current truth: searches then return this one, and memory_history lists both"`
}

// UpdateInput are memory_update's arguments: the id and the fields to change.
type UpdateInput struct {
	ID          string             `json:"id" jsonschema:"the memory's id, as shown in search, brief or add results"`
	Within      map[string]string  `json:"within,omitempty" jsonschema:"when the id names memories in several scopes (an ambiguous id): key/value pairs of the scope of the one meant, such as {\"user\": \"u7\"}"`
	Text        *string            `json:"text,omitempty" jsonschema:"new text (replaces the old)"`
	Name        *string            `json:"name,omitempty" jsonschema:"new title; empty string clears it"`
	Description *string            `json:"description,omitempty" jsonschema:"new one-line summary; empty string clears it"`
	Type        *string            `json:"type,omitempty" jsonschema:"new type"`
	Scene       *string            `json:"scene,omitempty" jsonschema:"new scene"`
	Scope       *map[string]string `json:"scope,omitempty" jsonschema:"new scope (replaces the whole scope)"`
	Tags        *[]string          `json:"tags,omitempty" jsonschema:"new tags (replace all tags)"`
	Source      *string            `json:"source,omitempty" jsonschema:"new source"`
	Metadata    map[string]any     `json:"metadata,omitempty" jsonschema:"new metadata object (replaces the old)"`
	Favorite    *bool              `json:"favorite,omitempty" jsonschema:"mark or unmark as a favorite"`
	Episode     *string            `json:"episode,omitempty" jsonschema:"new episode; empty string takes it out of its episode"`
	Seq         *int64             `json:"seq,omitempty" jsonschema:"new position in its episode"`
	Speaker     *string            `json:"speaker,omitempty" jsonschema:"new speaker"`
	OccurredAt  *string            `json:"occurred_at,omitempty" jsonschema:"new time it happened (RFC 3339 or YYYY-MM-DD)"`
	Supersedes  *string            `json:"supersedes,omitempty" jsonschema:"the id of the memory it supersedes; empty string: none"`
}

// EpisodeInput are memory_add_episode's arguments.
type EpisodeInput struct {
	Episode  string            `json:"episode" jsonschema:"names the conversation, session or task; storing it again with the same positions updates instead of duplicating"`
	Messages []MessageInput    `json:"messages" jsonschema:"the turns, in order"`
	FirstSeq int64             `json:"first_seq,omitempty" jsonschema:"the position of the first message (default 1)"`
	Scope    map[string]string `json:"scope,omitempty" jsonschema:"who or what it belongs to, as string key/value pairs"`
	Type     string            `json:"type,omitempty" jsonschema:"type of the turns' memories (default turn)"`
	Tags     []string          `json:"tags,omitempty" jsonschema:"labels for filtering"`
	Source   string            `json:"source,omitempty" jsonschema:"where it came from"`
}

// MessageInput is one turn of memory_add_episode.
type MessageInput struct {
	Speaker    string `json:"speaker,omitempty" jsonschema:"who said it: user, assistant, a name"`
	Text       string `json:"text" jsonschema:"what was said"`
	OccurredAt string `json:"occurred_at,omitempty" jsonschema:"when it was said (RFC 3339 or YYYY-MM-DD; default now)"`
}

// IDInput are the arguments of memory_get, memory_delete and
// memory_history.
type IDInput struct {
	ID     string            `json:"id" jsonschema:"the memory's id, as shown in search, brief or add results"`
	Within map[string]string `json:"within,omitempty" jsonschema:"when the id names memories in several scopes (an ambiguous id): key/value pairs of the scope of the one meant, such as {\"user\": \"u7\"}"`
}

// FavoriteInput are memory_favorite's arguments.
type FavoriteInput struct {
	ID       string            `json:"id" jsonschema:"the memory's id, as shown in search, brief or add results"`
	Favorite *bool             `json:"favorite,omitempty" jsonschema:"true (default) marks it as a favorite, false removes the mark"`
	Within   map[string]string `json:"within,omitempty" jsonschema:"when the id names memories in several scopes (an ambiguous id): key/value pairs of the scope of the one meant, such as {\"user\": \"u7\"}"`
}

// BriefInput are memory_brief's arguments.
type BriefInput struct {
	Scope      map[string]string `json:"scope,omitempty" jsonschema:"brief only from memories whose scope contains all these key/value pairs"`
	Type       string            `json:"type,omitempty" jsonschema:"only memories of this type"`
	Budget     int               `json:"budget,omitempty" jsonschema:"character budget of the briefing (default 2000)"`
	Limit      int               `json:"limit,omitempty" jsonschema:"memories at most (default: as many as the budget holds)"`
	Neighbours int               `json:"neighbours,omitempty" jsonschema:"show each memory of a conversation with this many turns before and after it (default 0)"`
}

// ListInput are memory_list's arguments.
type ListInput struct {
	Scope   map[string]string `json:"scope,omitempty" jsonschema:"only memories whose scope contains all these key/value pairs"`
	Type    string            `json:"type,omitempty" jsonschema:"only memories of this type"`
	Tags    []string          `json:"tags,omitempty" jsonschema:"only memories carrying all these tags"`
	Since   string            `json:"since,omitempty" jsonschema:"only memories created at or after this time: RFC 3339, YYYY-MM-DD, or an age such as 7d"`
	Until   string            `json:"until,omitempty" jsonschema:"only memories created before this time (same forms as since)"`
	Order   string            `json:"order,omitempty" jsonschema:"-created_at (default, newest first), created_at, -updated_at, updated_at, -uses (most used first), uses, id, -id, seq (an episode in order), -seq, occurred_at or -occurred_at"`
	Episode string            `json:"episode,omitempty" jsonschema:"only the memories of this episode (with order seq: in its order)"`
	Current bool              `json:"current,omitempty" jsonschema:"only what is current: leave out memories a newer memory supersedes"`
	AsOf    string            `json:"as_of,omitempty" jsonschema:"only what was current at this time (RFC 3339, YYYY-MM-DD or an age)"`
	Limit   int               `json:"limit,omitempty" jsonschema:"memories in this page (1 to 100, default 20)"`
	Cursor  string            `json:"cursor,omitempty" jsonschema:"next_cursor of the previous page, to continue the listing (same order)"`
}

// inputSchema derives T's schema once and lets edit tighten it (enums,
// bounds); one pointer per type keeps the SDK's schema cache effective.
func inputSchema[T any](edit func(props map[string]*jsonschema.Schema)) func() *jsonschema.Schema {
	return sync.OnceValue(func() *jsonschema.Schema {
		s, err := jsonschema.For[T](nil)
		if err != nil {
			panic(fmt.Sprintf("mcpserver: schema of %T: %v", *new(T), err)) // fixed types: a bug, caught by tests
		}
		if edit != nil {
			edit(s.Properties)
		}
		return s
	})
}

func bounds(s *jsonschema.Schema, lo, hi float64) {
	s.Minimum, s.Maximum = &lo, &hi
}

var (
	searchSchema = inputSchema[SearchInput](func(p map[string]*jsonschema.Schema) {
		bounds(p["limit"], 1, MaxSearchLimit)
		bounds(p["min_relevance"], 0, 1)
		bounds(p["budget"], 0, MaxBudget)
		p["mode"].Enum = []any{"hybrid", "bm25", "vector"}
		p["query"].MinLength = ptr(1)
		bounds(p["neighbours"], 0, 20)
	})
	addSchema = inputSchema[AddInput](func(p map[string]*jsonschema.Schema) {
		p["text"].MinLength = ptr(1)
	})
	updateSchema   = inputSchema[UpdateInput](func(p map[string]*jsonschema.Schema) { p["id"].MinLength = ptr(1) })
	idSchema       = inputSchema[IDInput](func(p map[string]*jsonschema.Schema) { p["id"].MinLength = ptr(1) })
	favoriteSchema = inputSchema[FavoriteInput](func(p map[string]*jsonschema.Schema) { p["id"].MinLength = ptr(1) })
	listSchema     = inputSchema[ListInput](func(p map[string]*jsonschema.Schema) {
		bounds(p["limit"], 0, MaxListLimit)
		p["order"].Enum = []any{"-created_at", "created_at", "-updated_at", "updated_at", "-uses", "uses", "id", "-id",
			"seq", "-seq", "occurred_at", "-occurred_at"}
	})
	episodeSchema = inputSchema[EpisodeInput](func(p map[string]*jsonschema.Schema) {
		p["episode"].MinLength = ptr(1)
		p["messages"].MinItems = ptr(1)
	})
	briefSchema = inputSchema[BriefInput](func(p map[string]*jsonschema.Schema) {
		bounds(p["budget"], 0, MaxBudget)
		bounds(p["limit"], 0, 1000)
		bounds(p["neighbours"], 0, 20)
	})
)

func ptr[T any](v T) *T { return &v }

// metadataJSON encodes a metadata argument; nil stays nil.
func metadataJSON(m map[string]any) (json.RawMessage, error) {
	if m == nil {
		return nil, nil
	}
	b, err := json.Marshal(m)
	if err != nil {
		return nil, fmt.Errorf("metadata: %w", err)
	}
	return b, nil
}

func boolp(b bool) *bool { return &b }

// Tool definitions: names, descriptions an LLM can choose by, and schemas.

func toolSearch() *mcp.Tool {
	return &mcp.Tool{
		Name:  "memory_search",
		Title: "Search memory",
		Description: "Recall stored memories relevant to a question or topic. Use it before answering " +
			"anything that may depend on what was learned in earlier sessions: the user's preferences, " +
			"people, projects, decisions, instructions, past events. The search is hybrid: it matches exact " +
			"keywords and identifiers (BM25) and meaning (vector similarity), so ask in natural language or " +
			"with the exact names, codes or paths you have. Filter by type, scene, scope, tags or time when " +
			"you know them. Returns the best memories first, each with its id and a relevance from 0 to 1.",
		InputSchema: searchSchema(),
		Annotations: &mcp.ToolAnnotations{Title: "Search memory", ReadOnlyHint: true, OpenWorldHint: boolp(false)},
	}
}

func toolAdd() *mcp.Tool {
	return &mcp.Tool{
		Name:  "memory_add",
		Title: "Add a memory",
		Description: "Store one new memory for later sessions: a durable fact, preference, decision, " +
			"instruction, person, organisation or event worth recalling. Write it self-contained (it will be " +
			"read without this conversation), one idea per memory. Set type to classify it and scope to say " +
			"whom or what it belongs to (user, agent, team, project, session). If a stored memory says " +
			"something close, prefer memory_update on it. Returns the new id.",
		InputSchema: addSchema(),
		Annotations: &mcp.ToolAnnotations{Title: "Add a memory", DestructiveHint: boolp(false), OpenWorldHint: boolp(false)},
	}
}

func toolUpdate() *mcp.Tool {
	return &mcp.Tool{
		Name:  "memory_update",
		Title: "Update a memory",
		Description: "Change fields of an existing memory by id: correct or extend its text, retitle it, " +
			"retype it, change its scope or tags. Only the fields given change. Use it when a stored memory " +
			"is outdated or incomplete, rather than adding a contradicting one.",
		InputSchema: updateSchema(),
		Annotations: &mcp.ToolAnnotations{Title: "Update a memory", IdempotentHint: true, DestructiveHint: boolp(true), OpenWorldHint: boolp(false)},
	}
}

func toolDelete() *mcp.Tool {
	return &mcp.Tool{
		Name:  "memory_delete",
		Title: "Delete a memory",
		Description: "Delete a memory by id, permanently. Use it when a memory is wrong, obsolete or the " +
			"user asks to forget it. An unknown id is an error.",
		InputSchema: idSchema(),
		Annotations: &mcp.ToolAnnotations{Title: "Delete a memory", DestructiveHint: boolp(true), IdempotentHint: true, OpenWorldHint: boolp(false)},
	}
}

func toolGet() *mcp.Tool {
	return &mcp.Tool{
		Name:        "memory_get",
		Title:       "Get a memory",
		Description: "Read one memory in full by id: every field, including text that search results shortened.",
		InputSchema: idSchema(),
		Annotations: &mcp.ToolAnnotations{Title: "Get a memory", ReadOnlyHint: true, IdempotentHint: true, OpenWorldHint: boolp(false)},
	}
}

func toolBrief() *mcp.Tool {
	return &mcp.Tool{
		Name:  "memory_brief",
		Title: "Session briefing",
		Description: "Get a briefing of what to know at the start of a session or task: favorite memories " +
			"first, then the most used, then the most recent, within a character budget. Narrow it with " +
			"scope (such as the current project) and type. Use memory_search instead for a specific question.",
		InputSchema: briefSchema(),
		Annotations: &mcp.ToolAnnotations{Title: "Session briefing", ReadOnlyHint: true, OpenWorldHint: boolp(false)},
	}
}

func toolFavorite() *mcp.Tool {
	return &mcp.Tool{
		Name:  "memory_favorite",
		Title: "Mark a favorite",
		Description: "Mark a memory as a favorite (or unmark it with favorite=false). Favorites rank a little " +
			"higher in searches and always lead briefings: use it for what matters in most sessions.",
		InputSchema: favoriteSchema(),
		Annotations: &mcp.ToolAnnotations{Title: "Mark a favorite", IdempotentHint: true, OpenWorldHint: boolp(false)},
	}
}

func toolList() *mcp.Tool {
	return &mcp.Tool{
		Name:  "memory_list",
		Title: "List memories",
		Description: "List stored memories without a query: filtered by scope, type, tags or time, newest first " +
			"(or by order), a page at a time with a cursor for the next. Use it to review what is remembered " +
			"about a user, project or session, or to find memories to update or delete; use memory_search to " +
			"answer a question.",
		InputSchema: listSchema(),
		Annotations: &mcp.ToolAnnotations{Title: "List memories", ReadOnlyHint: true, IdempotentHint: true, OpenWorldHint: boolp(false)},
	}
}

func toolHistory() *mcp.Tool {
	return &mcp.Tool{
		Name:  "memory_history",
		Title: "Versions of a memory",
		Description: "List every version of what a memory says, oldest first: the memories it superseded and " +
			"those that supersede it (memory_add with supersedes), each marked current or superseded by which " +
			"and when. Nothing is deleted by supersession: use it to see how a fact changed over time.",
		InputSchema: idSchema(),
		Annotations: &mcp.ToolAnnotations{Title: "Versions of a memory", ReadOnlyHint: true, IdempotentHint: true, OpenWorldHint: boolp(false)},
	}
}

func toolAddEpisode() *mcp.Tool {
	return &mcp.Tool{
		Name:  "memory_add_episode",
		Title: "Store a conversation",
		Description: "Store the turns of a conversation (or a session, a task) in one call, each with its speaker " +
			"and time, as an episode that keeps their order: a search then finds an answer with the question " +
			"before it, and a question about a date finds what was said that day. Storing the same episode again " +
			"updates the turns at the same positions instead of duplicating them; send the new turns with " +
			"first_seq set to continue it.",
		InputSchema: episodeSchema(),
		Annotations: &mcp.ToolAnnotations{Title: "Store a conversation", IdempotentHint: true, DestructiveHint: boolp(false), OpenWorldHint: boolp(false)},
	}
}
