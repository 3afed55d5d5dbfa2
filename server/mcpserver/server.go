// Package mcpserver exposes an Engram store to LLM agents over the Model
// Context Protocol: ten memory tools (search, add, add_episode, update,
// delete, get, history, brief, favorite, list) with typed input schemas, answering with compact LLM-ready
// text plus the structured JSON, over stdio or streamable HTTP.
package mcpserver

import (
	"context"
	"errors"
	"io"
	"log/slog"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/engram-memory/engram"
)

// Backend is what the tools need from a store: *engram.DB (the whole store)
// or *engram.Scoped (one tenant's view), or anything else with the
// single-memory operations and recall.
type Backend interface {
	engram.Memories
	engram.Recall
}

var (
	_ Backend = (*engram.DB)(nil)
	_ Backend = (*engram.Scoped)(nil)
)

// Defaults of the tools' optional arguments.
const (
	DefaultSearchLimit = 10 // memory_search results when limit is not given
	// DefaultSearchNeighbours is how many turns before and after a result
	// of a conversation memory_search shows with it.
	DefaultSearchNeighbours = 1
	MaxSearchLimit          = 50       // the most memory_search returns in one call
	DefaultSearchBudget     = 6000     // characters of memory_search's text content
	DefaultListLimit        = 20       // memory_list's page when limit is not given
	MaxListLimit            = 100      // the largest page memory_list returns
	MaxBudget               = 100000   // the largest character budget a tool accepts
	DefaultName             = "engram" // the server's name for clients
)

// Options configure a server. The zero value is usable.
type Options struct {
	// Name and Version identify the server to clients; defaults "engram" and "dev".
	Name, Version string
	// Instructions are sent to clients on initialization; empty means
	// DefaultInstructions.
	Instructions string
	// Logger receives the SDK's protocol logging; nil is silent.
	Logger *slog.Logger
	// SchemaCache shares tool schemas between servers (one server per HTTP
	// request); nil builds them for this server.
	SchemaCache *mcp.SchemaCache
}

// DefaultInstructions tell a client's model how to use the memory tools.
const DefaultInstructions = `Engram is long-term memory. Use memory_search before answering anything that
may depend on earlier sessions (the user's preferences, people, projects, decisions,
instructions); use memory_add to keep a durable fact, preference, decision or
instruction worth remembering later, one self-contained memory per call; use
memory_update to correct a memory instead of adding a contradicting one, and
memory_delete when it is wrong or obsolete. When a fact changes (a move, a new
decision), memory_add the new one with supersedes set to the old one's id: searches
then return what is current, and memory_history shows every version. Every memory
has an id (shown in results) for memory_get, memory_update, memory_delete and
memory_favorite. memory_add_episode stores a conversation's turns in order.
memory_brief gives a session-start overview (favorites, most used, most recent).`

// New returns an MCP server whose tools act on b.
func New(b Backend, opts Options) *mcp.Server {
	if opts.Name == "" {
		opts.Name = DefaultName
	}
	if opts.Version == "" {
		opts.Version = "dev"
	}
	if opts.Instructions == "" {
		opts.Instructions = DefaultInstructions
	}
	s := mcp.NewServer(&mcp.Implementation{Name: opts.Name, Title: "Engram memory", Version: opts.Version},
		&mcp.ServerOptions{
			Instructions: opts.Instructions,
			Logger:       opts.Logger,
			SchemaCache:  opts.SchemaCache,
			Capabilities: &mcp.ServerCapabilities{Tools: &mcp.ToolCapabilities{}},
		})
	t := tools{b: b}
	mcp.AddTool(s, toolSearch(), t.search)
	mcp.AddTool(s, toolAdd(), t.add)
	mcp.AddTool(s, toolUpdate(), t.update)
	mcp.AddTool(s, toolDelete(), t.delete)
	mcp.AddTool(s, toolGet(), t.get)
	mcp.AddTool(s, toolBrief(), t.brief)
	mcp.AddTool(s, toolFavorite(), t.favorite)
	mcp.AddTool(s, toolList(), t.list)
	mcp.AddTool(s, toolHistory(), t.history)
	mcp.AddTool(s, toolAddEpisode(), t.addEpisode)
	return s
}

// ServeIO serves b over a line-delimited JSON-RPC stream (stdio: r is stdin,
// w stdout) until the input ends or ctx does. A line that is not a JSON-RPC
// message is answered with a JSON-RPC error and the session goes on; at the
// end of the input the answers to the calls already read are written first
// (see stdio.go). Nothing else may write to w.
func ServeIO(ctx context.Context, b Backend, opts Options, r io.Reader, w io.Writer) error {
	err := New(b, opts).Run(ctx, &lineTransport{r: r, w: w})
	if errors.Is(err, io.EOF) {
		return nil // the client closed its end: the normal way a session ends
	}
	return err
}
