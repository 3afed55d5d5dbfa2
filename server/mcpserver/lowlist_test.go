package mcpserver

import (
	"strings"
	"testing"
)

// TestZeroTimeRefused: occurred_at given as the zero instant (or the date
// 0001-01-01) is a tool error naming the field, on every tool that takes it,
// not a memory stored as of now (issue 25); and memory_update with no field
// to change is refused, as the CLI refuses it.
func TestZeroTimeRefused(t *testing.T) {
	cs := connectInMemory(t, openDB(t))
	var added struct{ ID string }
	ok(t, cs, "memory_add", map[string]any{"text": "a memory to update"}, &added)
	for _, c := range []struct {
		name, tool string
		args       map[string]any
		want       string
	}{
		{"add", "memory_add", map[string]any{"text": "x", "occurred_at": "0001-01-01T00:00:00Z"}, "occurred_at"},
		{"add, a date", "memory_add", map[string]any{"text": "x", "occurred_at": "0001-01-01"}, "occurred_at"},
		{"update", "memory_update", map[string]any{"id": added.ID, "occurred_at": "0001-01-01T00:00:00Z"}, "occurred_at"},
		{"episode", "memory_add_episode", map[string]any{"episode": "e1",
			"messages": []map[string]any{{"text": "hi", "occurred_at": "0001-01-01T00:00:00Z"}}}, "message 1: occurred_at"},
		{"update without a field", "memory_update", map[string]any{"id": added.ID}, "nothing to change"},
	} {
		t.Run(c.name, func(t *testing.T) {
			res := call(t, cs, c.tool, c.args)
			if got := text(res); !res.IsError || !strings.Contains(got, c.want) || strings.Count(got, "\n") > 0 {
				t.Fatalf("%s: error %v, %q; want one line naming %q", c.tool, res.IsError, got, c.want)
			}
		})
	}
}
