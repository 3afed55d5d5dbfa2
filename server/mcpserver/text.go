package mcpserver

import (
	"encoding/json"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/engram-memory/engram"
	"github.com/engram-memory/engram/internal/format"
)

// The text content is what most clients put in front of the model, so it is
// compact: one memory a line, "- ID [type date, favorite, relevance] name: text",
// whitespace folded, within a character budget; the ids let the model act on
// a memory with the other tools.

// minCut is the least of a memory's line worth showing cut.
const minCut = 60

// resultLine is one memory in compact form.
func resultLine(r engram.Result, relevance bool) string {
	var b strings.Builder
	b.WriteString("- " + r.ID + " [" + r.Type)
	if !r.CreatedAt.IsZero() {
		b.WriteString(" " + r.CreatedAt.UTC().Format("2006-01-02"))
	}
	if r.Favorite {
		b.WriteString(", favorite")
	}
	if relevance && r.Explain != nil {
		fmt.Fprintf(&b, ", relevance %.2f", r.Explain.Relevance)
	}
	b.WriteString("] ")
	if r.Name != "" {
		b.WriteString(format.OneLine(r.Name) + ": ")
	}
	b.WriteString(format.OneLine(r.Text))
	return b.String()
}

// list joins header and lines within budget runes (the header always
// shows): the first line that does not fit is cut with "…" when enough of it
// fits, and what is left out is counted on a last line when that fits.
func list(header string, lines []string, budget int) string {
	return format.Fit(header, lines, budget, minCut,
		func(k int) string { return moreNote(k, false) }, func(k int) string { return moreNote(k, true) })
}

// moreNote counts memories left out of a list.
func moreNote(k int, short bool) string {
	if short {
		return fmt.Sprintf("(+%d more)", k)
	}
	return fmt.Sprintf("(+%d more not shown: use memory_get by id, a smaller limit or a larger budget)", k)
}

// searchText renders a search response.
func searchText(resp *engram.Response, budget int) string {
	if len(resp.Results) == 0 {
		return fmt.Sprintf("No memories matched %q.", resp.Query)
	}
	lines := make([]string, len(resp.Results))
	for i, r := range resp.Results {
		lines[i] = resultLine(r, true)
	}
	header := fmt.Sprintf("%d %s for %q, best first:", len(lines), plural(len(lines), "memory", "memories"), resp.Query)
	return list(header, lines, budget)
}

// briefText renders a briefing; its items already fit the briefing's budget.
func briefText(b *engram.Brief) string {
	if len(b.Items) == 0 {
		return "No memories to brief from in this scope yet."
	}
	lines := make([]string, len(b.Items))
	for i, it := range b.Items {
		lines[i] = resultLine(it.Result, false)
	}
	header := fmt.Sprintf("Briefing: %d %s (favorites first, then most used, then most recent):",
		len(lines), plural(len(lines), "memory", "memories"))
	return list(header, lines, MaxBudget)
}

// memoryText renders one memory whole, a field a line, the text last.
func memoryText(m *MemoryOut) string {
	var b strings.Builder
	field := func(k, v string) {
		if v != "" {
			b.WriteString(k + ": " + v + "\n")
		}
	}
	field("id", m.ID)
	field("type", m.Type)
	field("name", m.Name)
	field("description", m.Description)
	field("scene", m.Scene)
	field("scope", scopeString(m.Scope))
	field("tags", strings.Join(m.Tags, ", "))
	field("source", m.Source)
	if len(m.Metadata) > 0 {
		meta, _ := json.Marshal(m.Metadata) // decoded from JSON: encodes
		field("metadata", string(meta))
	}
	if m.Favorite {
		field("favorite", "yes")
	}
	field("created", m.CreatedAt.UTC().Format(time.RFC3339))
	if !m.UpdatedAt.Equal(m.CreatedAt) {
		field("updated", m.UpdatedAt.UTC().Format(time.RFC3339))
	}
	if m.Uses > 0 {
		field("uses", fmt.Sprint(m.Uses))
	}
	b.WriteString("text:\n" + m.Text)
	return b.String()
}

// scopeString is a scope as "k=v, k=v", keys sorted.
func scopeString(s map[string]string) string {
	keys := make([]string, 0, len(s))
	for k := range s {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = k + "=" + s[k]
	}
	return strings.Join(parts, ", ")
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}
