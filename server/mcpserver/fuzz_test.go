package mcpserver

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/engram-memory/engram"
)

// FuzzToolArguments calls every tool with arbitrary JSON arguments on one
// session over a real store: the server never panics or drops the session;
// each call is answered (a result or a tool error), and the store stays
// readable (a search and a brief still answer).
func FuzzToolArguments(f *testing.F) {
	db := openDB(f)
	if _, err := db.Add(context.Background(), &engram.Memory{ID: "m1", Text: "the deploy key lives in the vault"}); err != nil {
		f.Fatal(err)
	}
	cs := connectInMemory(f, db)
	for _, seed := range []string{`{}`, `{"query": "deploy"}`, `{"id": "m1"}`, `{"id": "m1", "favorite": false}`,
		`{"text": "x", "uses": 9223372036854775807}`, `{"query": "x", "limit": -5}`, `{"query": "x", "since": "9999d"}`,
		`{"id": "m1", "text": ""}`, `{"text": "y", "scope": {"a": "b,c"}}`, `{"budget": 1e300}`, `{"query": ["x"]}`, `null`, `[1]`,
		`{"text": "z", "metadata": "not an object"}`, `{"id": "", "text": "w"}`, `{"query": "x", "scope": {"": ""}}`} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, args []byte) {
		var arguments any
		if json.Unmarshal(args, &arguments) != nil {
			arguments = map[string]any{"raw": string(args)}
		}
		for _, name := range toolNames {
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: arguments})
			cancel()
			if err != nil && ctx.Err() != nil {
				t.Fatalf("%s %s: no answer: %v", name, args, err)
			}
			if err == nil && res == nil {
				t.Fatalf("%s %s: an empty answer", name, args)
			}
		}
		ctx := context.Background()
		if _, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "memory_search", Arguments: map[string]any{"query": "deploy"}}); err != nil {
			t.Fatalf("the session is broken after %s: %v", args, err)
		}
		if _, err := db.Brief(ctx, engram.BriefOptions{NoRecord: true}); err != nil {
			t.Fatalf("the store is broken after %s: %v", args, err)
		}
	})
}
