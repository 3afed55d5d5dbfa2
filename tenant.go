package engram

import (
	"context"
	"io"
)

// What a tenant does with a store, split by capability. *DB (the whole
// store) and *Scoped (one tenant's view) do all of it, and so does the CLI's
// client of the HTTP API; the servers act on these: the HTTP API on Tenant,
// the MCP tools on Memories and Recall.

// Memories are the single-memory operations and listing them. (Favorite is
// Update with Patch.Favorite.)
type Memories interface {
	Add(ctx context.Context, mems ...*Memory) (AddResult, error)
	Get(ctx context.Context, id string) (*Memory, error)
	Update(ctx context.Context, id string, p Patch) (*Memory, error)
	Delete(ctx context.Context, ids ...string) (int, error)
	List(ctx context.Context, opt ListOptions) (*ListPage, error)
	// AddEpisode stores a conversation's messages as an episode's memories.
	AddEpisode(ctx context.Context, ep Episode) (AddResult, error)
	// History lists every version of a memory (supersession).
	History(ctx context.Context, id string) ([]Version, error)
}

// Recall is searching, the delivery paths, and counting a use as they do.
type Recall interface {
	Search(ctx context.Context, q Query) (*Response, error)
	Brief(ctx context.Context, opt BriefOptions) (*Brief, error)
	Inject(ctx context.Context, prompt string, opt InjectOptions) (*Injection, error)
	Touch(ctx context.Context, ids ...string) error
}

// Bulk is moving, counting and forgetting a tenant's memories as a whole.
type Bulk interface {
	Import(ctx context.Context, r io.Reader, opt ImportOptions) (ImportResult, error)
	Export(ctx context.Context, w io.Writer) error
	Stats(ctx context.Context) (Stats, error)
	DeleteScope(ctx context.Context, scope map[string]string) (int, error)
}

// Tenant is everything a tenant can do.
type Tenant interface {
	Memories
	Recall
	Bulk
}

var (
	_ Tenant = (*DB)(nil)
	_ Tenant = (*Scoped)(nil)
)
