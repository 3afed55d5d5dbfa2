package mcpserver

import (
	"encoding/json"
	"fmt"
	"sort"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/engram-memory/engram"
	"github.com/engram-memory/engram/internal/excerpt"
	"github.com/engram-memory/engram/internal/format"
	"github.com/engram-memory/engram/internal/tokenize"
)

// The text content is what most clients put in front of the model, so it is
// compact: one memory a line, "- ID [type date, favorite, relevance] name: text",
// whitespace folded, within a character budget; the ids let the model act on
// a memory with the other tools.

// minCut is the least of a memory's line worth showing cut.
const minCut = 60

// resultLine is one memory in compact form.
func resultLine(r engram.Result, relevance bool) string {
	e := resultEntry(r, relevance)
	if r.Excerpt != "" {
		return e.Head + r.Excerpt + e.Mark
	}
	return e.Head + e.Body
}

// resultEntry is resultLine in parts, for format.Deliver: the head, the text
// and the mark of a text shown cut.
func resultEntry(r engram.Result, relevance bool) format.Entry {
	var b strings.Builder
	b.WriteString("- " + r.ID + " [" + r.Type)
	when := r.OccurredAt
	if when.IsZero() {
		when = r.CreatedAt
	}
	if !when.IsZero() {
		b.WriteString(" " + when.UTC().Format("2006-01-02"))
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
	return format.Entry{Head: b.String(), Body: format.EpisodeText(r), Mark: excerptMark}
}

// excerptMark ends the line of a memory shown cut.
const excerptMark = " (excerpt: memory_get returns the whole memory)"

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

// searchText renders a search response within budget runes: a memory too
// long for its share shows the passage that best matches the query, marked
// (format.Deliver's rule).
func searchText(resp *engram.Response, budget int) string {
	if len(resp.Results) == 0 {
		if resp.BelowBar > 0 {
			return fmt.Sprintf("Nothing relevant to %q: no memory cleared the relevance bar %.2f (%d weaker %s left out; min_relevance 0 lists them).",
				format.ShownQuery(resp), resp.MinRelevance, resp.BelowBar, plural(resp.BelowBar, "match", "matches"))
		}
		return fmt.Sprintf("No memories matched %q.", format.ShownQuery(resp))
	}
	entries := make([]format.Entry, len(resp.Results))
	for i, r := range resp.Results {
		entries[i] = resultEntry(r, true)
	}
	header := fmt.Sprintf("%d %s for %q, best first:", len(entries), plural(len(entries), "memory", "memories"), format.ShownQuery(resp))
	q := excerpt.ForResponse(excerptTokenizer(), resp.Query, resp.Reduced)
	_, text := format.Deliver(entries, format.DeliverOptions{Budget: budget - utf8.RuneCountInString(header) - 1,
		Passage: func(_ int, body string, room int) string { return q.Passage(body, room) },
		More:    func(k int) string { return moreNote(k, false) }})
	return header + "\n" + text
}

// excerptTokenizer finds a query's terms in a long memory (the BM25 leg's
// default analysis).
var excerptTokenizer = sync.OnceValue(func() *tokenize.Tokenizer { return tokenize.New(tokenize.DefaultOptions()) })

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

// listText renders a page of a listing, one memory a line, and how to get
// the next page.
func listText(page *engram.ListPage) string {
	if len(page.Memories) == 0 {
		return "No memories listed."
	}
	lines := make([]string, len(page.Memories))
	for i, m := range page.Memories {
		lines[i] = resultLine(memoryResult(m), false)
	}
	header := fmt.Sprintf("%d %s:", len(lines), plural(len(lines), "memory", "memories"))
	text := list(header, lines, DefaultSearchBudget)
	if page.NextCursor != "" {
		text += "More: call memory_list again with cursor " + page.NextCursor + "\n"
	}
	return text
}

// memoryResult is a memory as a result line shows it.
func memoryResult(m *engram.Memory) engram.Result {
	return engram.Result{ID: m.ID, Text: m.Text, Name: m.Name, Type: m.Type, Favorite: m.Favorite, CreatedAt: m.CreatedAt,
		OccurredAt: m.OccurredAt, Speaker: m.Speaker}
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
	if m.Episode != "" {
		field("episode", m.Episode)
		if m.Seq > 0 {
			field("seq", fmt.Sprint(m.Seq))
		}
	}
	field("speaker", m.Speaker)
	field("supersedes", m.Supersedes)
	if !m.OccurredAt.IsZero() && !m.OccurredAt.Equal(m.CreatedAt) {
		field("occurred", m.OccurredAt.UTC().Format(time.RFC3339))
	}
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

// historyText renders a memory's versions, oldest first.
func historyText(vs []engram.Version) string {
	lines := make([]string, len(vs))
	for i, v := range vs {
		state := "current"
		if !v.Current {
			state = "superseded by " + v.SupersededBy + " on " + v.SupersededAt.UTC().Format("2006-01-02")
		}
		lines[i] = "- " + v.ID + " [" + v.OccurredAt.UTC().Format("2006-01-02") + ", " + state + "] " + format.OneLine(v.Text)
	}
	return list(fmt.Sprintf("%d %s, oldest first:", len(vs), plural(len(vs), "version", "versions")), lines, DefaultSearchBudget)
}
