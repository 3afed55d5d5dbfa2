package mcpserver

import (
	"context"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/engram-memory/engram"
	"github.com/engram-memory/engram/internal/golden"
)

// openDB opens a real store in a temporary directory with the built-in embedder.
func openDB(tb testing.TB) *engram.DB {
	tb.Helper()
	db, err := engram.Open(context.Background(), filepath.Join(tb.TempDir(), "test.db"), engram.Options{})
	if err != nil {
		tb.Fatalf("open: %v", err)
	}
	tb.Cleanup(func() { db.Close() })
	return db
}

// connectInMemory serves b with New and returns a connected SDK client session.
func connectInMemory(tb testing.TB, b Backend) *mcp.ClientSession {
	tb.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	st, ct := mcp.NewInMemoryTransports()
	ss, err := New(b, Options{}).Connect(ctx, st, nil)
	if err != nil {
		tb.Fatalf("server connect: %v", err)
	}
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "test-client", Version: "0"}, nil).Connect(ctx, ct, nil)
	if err != nil {
		tb.Fatalf("client connect: %v", err)
	}
	tb.Cleanup(func() {
		cs.Close()
		ss.Wait()
		cancel()
	})
	return cs
}

// call calls a tool and fails the test on a protocol error.
func call(tb testing.TB, cs *mcp.ClientSession, name string, args any) *mcp.CallToolResult {
	tb.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		tb.Fatalf("%s: protocol error: %v", name, err)
	}
	return res
}

// ok calls a tool that must succeed and decodes its structured content into out.
func ok(tb testing.TB, cs *mcp.ClientSession, name string, args, out any) string {
	tb.Helper()
	res := call(tb, cs, name, args)
	if res.IsError {
		tb.Fatalf("%s(%v): tool error: %s", name, args, text(res))
	}
	if out != nil {
		b, err := json.Marshal(res.StructuredContent)
		if err != nil {
			tb.Fatalf("%s: structured content: %v", name, err)
		}
		if err := json.Unmarshal(b, out); err != nil {
			tb.Fatalf("%s: decode structured content %s: %v", name, b, err)
		}
	}
	return text(res)
}

// text joins a result's text content.
func text(res *mcp.CallToolResult) string {
	var parts []string
	for _, c := range res.Content {
		if t, ok := c.(*mcp.TextContent); ok {
			parts = append(parts, t.Text)
		}
	}
	return strings.Join(parts, "\n")
}

// checkGolden compares got with testdata/name (go test -update rewrites it).
func checkGolden(tb testing.TB, name, got string) {
	tb.Helper()
	golden.Check(tb, filepath.Join("testdata", name), []byte(got))
}
