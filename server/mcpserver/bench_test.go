package mcpserver

import (
	"context"
	"fmt"
	"net/http/httptest"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/engram-memory/engram"
)

// fill adds n synthetic memories.
func fill(tb testing.TB, db *engram.DB, n int) {
	tb.Helper()
	topics := []string{"deploy pipeline", "database migration", "editor theme", "team lunch", "backup bucket", "on-call rota", "API rate limit", "release notes"}
	mems := make([]*engram.Memory, n)
	for i := range mems {
		t := topics[i%len(topics)]
		mems[i] = &engram.Memory{Text: fmt.Sprintf("Note %d about the %s: owner u%d, ticket OPS-%d, decided in week %d.", i, t, i%37, 1000+i, i%52),
			Type: "fact", Scope: map[string]string{"team": fmt.Sprintf("t%d", i%4)}}
	}
	if _, err := db.Add(context.Background(), mems...); err != nil {
		tb.Fatal(err)
	}
}

// BenchmarkToolSearch is one memory_search tool call, end to end through an
// SDK client, over each transport.
func BenchmarkToolSearch(b *testing.B) {
	for _, n := range []int{1000, 10000} {
		db := openDB(b)
		fill(b, db, n)
		for _, transport := range []string{"inmemory", "http"} {
			b.Run(fmt.Sprintf("n=%d/%s", n, transport), func(b *testing.B) {
				var cs *mcp.ClientSession
				if transport == "http" {
					srv := httptest.NewServer(HTTPHandler(Fixed(db), HTTPOptions{}))
					defer srv.Close()
					cs = connectHTTP(b, srv.URL, "k")
				} else {
					cs = connectInMemory(b, db)
				}
				args := map[string]any{"query": "who owns the database migration ticket?", "limit": 10}
				b.ReportAllocs()
				b.ResetTimer()
				for b.Loop() {
					if res := call(b, cs, "memory_search", args); res.IsError {
						b.Fatal(text(res))
					}
				}
			})
		}
	}
}
