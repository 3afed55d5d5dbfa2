package mcpserver

import (
	"fmt"
	"strings"
	"testing"
	"time"
)

// TestLongQuery: memory_search with a 5 MB query answers, says it was
// reduced, and does not echo the query into the model's context.
func TestLongQuery(t *testing.T) {
	cs := connectInMemory(t, openDB(t))
	ok(t, cs, "memory_add", map[string]any{"text": "The kubernetes cluster upgrade needs the staging nodes drained first"}, nil)
	var b strings.Builder
	for i := 0; b.Len() < 5<<20; i++ {
		if i%50 == 0 {
			b.WriteString("the kubernetes cluster upgrade failed on the staging nodes. ")
			continue
		}
		fmt.Fprintf(&b, "w%x ", i*2654435761%(1<<24))
	}
	prompt := strings.TrimSpace(b.String())
	start := time.Now()
	var resp struct {
		Query   string
		Reduced *struct{ Kept []string }
		Results []struct{ Text string }
	}
	txt := ok(t, cs, "memory_search", map[string]any{"query": prompt, "min_relevance": 0}, &resp)
	if took := time.Since(start); took > time.Minute {
		t.Errorf("took %v", took)
	}
	if resp.Reduced == nil || len(resp.Results) == 0 || !strings.Contains(resp.Results[0].Text, "kubernetes") {
		t.Errorf("reduced %v, results %v: want a reduction and the upgrade memory first", resp.Reduced, resp.Results)
	}
	if len(resp.Query) > 1<<10 {
		t.Errorf("structured content echoes %d bytes of the query", len(resp.Query))
	}
	if len(txt) > 16<<10 || !strings.Contains(txt, fmt.Sprintf("(%d bytes)", len(prompt))) {
		t.Errorf("text of %d bytes, want a short one naming the query's length: %.300s", len(txt), txt)
	}
}

// TestAddRepeat: memory_add of a text a memory already holds in the scope
// merges into it and says what changed.
func TestAddRepeat(t *testing.T) {
	cs := connectInMemory(t, openDB(t))
	var first, again AddOutput
	ok(t, cs, "memory_add", map[string]any{"text": "Prefers dark themes", "name": "Theme", "tags": []string{"ui"}}, &first)
	txt := ok(t, cs, "memory_add", map[string]any{"text": "Prefers  dark themes", "tags": []string{"editor"}, "favorite": true}, &again)
	if again.ID != first.ID || again.Merged == nil || !again.Merged.Favorite || len(again.Merged.Tags) != 1 {
		t.Fatalf("repeat: %+v", again)
	}
	if want := "Not stored again: memory " + first.ID + " already holds this text in this scope. Merged into it: tags editor; favorite."; txt != want {
		t.Fatalf("text %q, want %q", txt, want)
	}
}
