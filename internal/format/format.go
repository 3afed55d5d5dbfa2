// Package format renders search responses: compact text for an LLM's context
// within a character budget, a human-readable explanation, and JSON.
package format

import (
	"encoding/json"
	"fmt"
	"io"
	"sort"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/engram-memory/engram/internal/excerpt"
	"github.com/engram-memory/engram/memory"
)

// JSON writes v as indented JSON (or one line when compact).
func JSON(w io.Writer, v any, compact bool) error {
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	if !compact {
		enc.SetIndent("", "  ")
	}
	return enc.Encode(v)
}

// Context writes the results as compact text for insertion into an LLM's
// context, one memory a line, never more than budget characters (runes) in all;
// budget ≤ 0 means unlimited. A memory too long for its share is shown as an
// excerpt of its beginning (see Deliver; FitContext picks passages by query),
// and what is left out is counted on a last line.
func Context(w io.Writer, results []memory.Result, budget int) error {
	_, text := FitContext(results, ContextOptions{Budget: budget})
	_, err := io.WriteString(w, text)
	return err
}

// ContextOptions bound FitContext.
type ContextOptions struct {
	Budget int // runes in all, newlines included; ≤ 0 is unlimited
	Limit  int // memories at most; 0 means no bound
	// Passage picks the part of a text to show in room runes; nil takes whole
	// words from its beginning.
	Passage func(text string, room int) string
	// NoCount leaves out the line counting the memories not shown.
	NoCount bool
}

// FitContext fits results into the budget as Context lines by the delivery
// rule (Deliver) and returns the results shown, in order, Excerpt set on
// those shown cut, and the text. A result with neighbours (Result.Neighbours)
// is shown in one line with them, in episode order; results of one episode
// whose turns meet or overlap share one line, at the place of the best.
func FitContext(results []memory.Result, o ContextOptions) ([]memory.Result, string) {
	blocks := episodeBlocks(results)
	entries := make([]Entry, len(blocks))
	for i, b := range blocks {
		r := results[b.members[0]]
		body := turnText(r.Speaker, r.Text)
		if len(b.turns) > 0 {
			body = turnsText(b.turns)
		}
		entries[i] = Entry{Head: contextHead(r), Body: body, Mark: ExcerptMark(r.ID)}
	}
	passage := o.Passage
	if passage == nil {
		passage = excerpt.NewQuery(nil, "").Passage // whole words from the beginning
	}
	do := DeliverOptions{Budget: o.Budget, Max: o.Limit,
		Passage: func(_ int, body string, room int) string { return passage(body, room) }}
	if !o.NoCount {
		do.More = func(k int) string { return fmt.Sprintf("(+%d more not shown)", k) }
	}
	shown, text := Deliver(entries, do)
	out := make([]memory.Result, 0, len(shown))
	for _, s := range shown {
		for _, j := range blocks[s.Index].members {
			r := results[j]
			if s.Cut {
				r.Excerpt = s.Body
			}
			out = append(out, r)
		}
	}
	return out, text
}

// ExcerptMark ends the line of a memory shown cut: it names the id that
// fetches the whole (engram get ID, memory_get, GET /v1/memories/ID).
func ExcerptMark(id string) string { return " [excerpt of " + id + "]" }

// Fit joins header (when not empty) and lines, one a line, in at most budget
// characters (runes, newlines included; budget ≤ 0 means unlimited); the
// header always shows. The first line that does not fit whole is cut with "…"
// when at least minCut runes of it fit, leaving room for more[0]'s count of
// the lines after it; what is left out is then counted on a last line: the
// first of the more notes that fits, if any.
func Fit(header string, lines []string, budget, minCut int, more ...func(left int) string) string {
	var b strings.Builder
	used := 0
	if header != "" {
		b.WriteString(header + "\n")
		used = utf8.RuneCountInString(header) + 1
	}
	for i, line := range lines {
		n := utf8.RuneCountInString(line) + 1 // with its newline
		if budget <= 0 || used+n <= budget {
			b.WriteString(line + "\n")
			used += n
			continue
		}
		left := len(lines) - i
		room := budget - used - 1
		if left > 1 && len(more) > 0 {
			room -= utf8.RuneCountInString(more[0](left-1)) + 1
		}
		if room >= minCut {
			line = Truncate(line, room)
			b.WriteString(line + "\n")
			used += utf8.RuneCountInString(line) + 1
			left--
		}
		if left > 0 {
			for _, note := range more {
				if s := note(left); used+utf8.RuneCountInString(s)+1 <= budget {
					b.WriteString(s + "\n")
					break
				}
			}
		}
		break
	}
	return b.String()
}

// minCut is the least of a memory worth showing cut.
const minCut = 40

// ContextLen is how many characters (runes) Context spends on r shown whole,
// newline included.
func ContextLen(r memory.Result) int {
	return utf8.RuneCountInString(contextHead(r)+OneLine(r.Text)) + 1
}

// contextHead starts a memory's compact line: "- [type date] name: ", the
// date the day it occurred.
func contextHead(r memory.Result) string {
	var b strings.Builder
	b.WriteString("- [")
	b.WriteString(r.Type)
	when := r.OccurredAt
	if when.IsZero() {
		when = r.CreatedAt
	}
	if !when.IsZero() {
		b.WriteString(" " + when.Format("2006-01-02"))
	}
	b.WriteString("] ")
	if r.Name != "" {
		b.WriteString(OneLine(r.Name) + ": ")
	}
	return b.String()
}

// OneLine folds runs of whitespace, newlines included, into single spaces.
func OneLine(s string) string { return strings.Join(strings.Fields(s), " ") }

// Truncate cuts s to at most n runes, ending with "…" when cut.
func Truncate(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	if n < 1 {
		return ""
	}
	rs := []rune(s)
	return strings.TrimRight(string(rs[:n-1]), " ") + "…"
}

// shownQueryRunes is how much of a long (reduced) query a rendered response
// repeats.
const shownQueryRunes = 200

// ShownQuery is the query as a rendered response repeats it: whole, or a
// long query's (memory.Reduced) first words with its length, so that a
// pasted megabyte is not echoed into a context.
func ShownQuery(resp *memory.Response) string {
	if resp.Reduced == nil || utf8.RuneCountInString(resp.Query) <= shownQueryRunes {
		return resp.Query
	}
	end, n := 0, 0
	for end < len(resp.Query) && n < 4*shownQueryRunes { // enough runes to fold and cut
		_, size := utf8.DecodeRuneInString(resp.Query[end:])
		end += size
		n++
	}
	return fmt.Sprintf("%s (%d bytes)", Truncate(OneLine(resp.Query[:end]), shownQueryRunes), len(resp.Query))
}

// Explained writes a response for a person: what ran, what degraded, and each
// result with where its score came from.
func Explained(w io.Writer, resp *memory.Response) error {
	var b strings.Builder
	fmt.Fprintf(&b, "query: %s\nstrategy: %s", ShownQuery(resp), resp.Strategy)
	if f := resp.Fusion; f != nil {
		fmt.Fprintf(&b, "   fusion: %s", f.Method)
		if f.K > 0 {
			fmt.Fprintf(&b, " k=%g", f.K)
		}
		keys := make([]string, 0, len(f.Weights))
		for k := range f.Weights {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			fmt.Fprintf(&b, " w_%s=%g", k, f.Weights[k])
		}
		if f.WeightSource != "" {
			fmt.Fprintf(&b, " (weights from %s)", f.WeightSource)
		}
		if g := f.Gated; g != nil {
			fmt.Fprintf(&b, " bm25 gated: its best match's keyword relevance %.3g < %g", g.Best, g.Gate)
		}
	}
	b.WriteString("\n")
	for _, d := range resp.Degraded {
		fmt.Fprintf(&b, "degraded: %s: %s\n", d.Stage, d.Reason)
	}
	for _, w := range resp.Time {
		fmt.Fprintf(&b, "time: %q read as %s to %s (what occurred then ×%g)\n", w.Phrase,
			w.Since.Format(time.RFC3339), w.Until.Format(time.RFC3339), w.Boost)
	}
	if len(resp.Results) == 0 {
		b.WriteString("no results\n")
	}
	relevant := 0
	for i, r := range resp.Results {
		fmt.Fprintf(&b, "%2d. %s  score %.5f  %s\n", i+1, r.ID, r.Score, explainLine(r.Explain))
		title := ""
		if r.Name != "" {
			title = r.Name + ": "
		}
		fmt.Fprintf(&b, "    [%s] %s\n", r.Type, Truncate(title+OneLine(r.Text), 160))
		if r.SupersededBy != "" {
			fmt.Fprintf(&b, "    (superseded by %s)\n", r.SupersededBy)
		}
		if r.Explain != nil && r.Explain.Relevance >= resp.RelevanceBar {
			relevant++
		}
	}
	if resp.RelevanceBar > 0 && len(resp.Results) > 0 && relevant == 0 {
		fmt.Fprintf(&b, "none of these clears the relevance bar %.2f: the store may hold nothing about this query\n", resp.RelevanceBar)
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// explainLine is one result's explanation in a line.
func explainLine(e *memory.Explain) string {
	if e == nil {
		return ""
	}
	var parts []string
	if e.BM25 != nil {
		parts = append(parts, fmt.Sprintf("bm25 #%d (%.3f)", e.BM25.Rank, e.BM25.Score))
	} else {
		parts = append(parts, "bm25 —")
	}
	if e.Vector != nil {
		parts = append(parts, fmt.Sprintf("vector #%d (cos %.3f)", e.Vector.Rank, e.Vector.Cosine))
	} else {
		parts = append(parts, "vector —")
	}
	parts = append(parts, fmt.Sprintf("fused %.5f", e.RRF))
	if e.Boosts.Favorite != 1 && e.Boosts.Favorite != 0 {
		parts = append(parts, fmt.Sprintf("favorite ×%.2f", e.Boosts.Favorite))
	}
	if e.Boosts.Demand > 1 {
		parts = append(parts, fmt.Sprintf("demand ×%.3f", e.Boosts.Demand))
	}
	if e.Boosts.Time > 1 {
		parts = append(parts, fmt.Sprintf("time ×%g", e.Boosts.Time))
	}
	if e.Rerank != nil {
		parts = append(parts, fmt.Sprintf("rerank %.3f (was #%d)", e.Rerank.Score, e.Rerank.PreRank))
	}
	if e.MMR != nil {
		parts = append(parts, fmt.Sprintf("mmr (was #%d)", e.MMR.PreRank))
	}
	parts = append(parts, fmt.Sprintf("relevance %.2f", e.Relevance))
	return strings.Join(parts, "  ")
}
