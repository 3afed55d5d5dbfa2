package mcpserver

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/engram-memory/engram"
)

var day = time.Date(2026, 3, 14, 9, 30, 0, 0, time.UTC)

func results() []engram.Result {
	return []engram.Result{
		{ID: "01AAA", Type: "preference", Name: "Theme", Text: "The user prefers\n dark themes   in every editor.",
			CreatedAt: day, Favorite: true, Explain: &engram.Explain{Relevance: 0.91}},
		{ID: "01BBB", Type: "fact", Text: "Ticket OPS-4512 tracks the blue-green cutover; " + strings.Repeat("more detail ", 20),
			CreatedAt: day.Add(-48 * time.Hour), Explain: &engram.Explain{Relevance: 0.4}},
		{ID: "01CCC", Type: "person", Name: "Ana", Text: "Ana leads the platform team.", CreatedAt: day, Explain: &engram.Explain{Relevance: 0.2}},
	}
}

func TestTextGolden(t *testing.T) {
	rs := results()
	for _, tc := range []struct {
		name string
		got  func() string
	}{
		{"search.txt", func() string { return searchText(&engram.Response{Query: "dark theme", Results: rs}, 2000) }},
		{"search_budget.txt", func() string { return searchText(&engram.Response{Query: "dark theme", Results: rs}, 260) }},
		{"search_empty.txt", func() string { return searchText(&engram.Response{Query: "nothing"}, 2000) }},
		{"brief.txt", func() string {
			return briefText(&engram.Brief{Items: []engram.BriefItem{{Result: rs[0], Reason: "favorite"}, {Result: rs[2], Reason: "recent"}}})
		}},
		{"brief_empty.txt", func() string { return briefText(&engram.Brief{}) }},
		{"get.txt", func() string {
			return memoryText(&MemoryOut{ID: "01AAA", Type: "preference", Name: "Theme", Description: "editor colours",
				Text: "The user prefers dark themes.\nAlso in the terminal.", Scope: map[string]string{"user": "u7", "project": "engram"},
				Tags: []string{"ui", "editor"}, Source: "chat", Metadata: map[string]any{"confidence": 0.9}, Favorite: true,
				CreatedAt: day, UpdatedAt: day.Add(time.Hour), Uses: 3})
		}},
	} {
		t.Run(tc.name, func(t *testing.T) { checkGolden(t, tc.name, tc.got()) })
	}
}

func TestListBudget(t *testing.T) {
	lines := []string{strings.Repeat("a", 50), strings.Repeat("b", 200), strings.Repeat("c", 50)}
	for _, budget := range []int{0, 10, 60, 100, 200, 300, 1000} {
		got := list("h", lines, budget)
		if n := len([]rune(got)); budget >= 2 && n > budget {
			t.Errorf("budget %d: %d runes", budget, n)
		}
		if !strings.HasPrefix(got, "h\n") {
			t.Errorf("budget %d: header lost: %q", budget, got)
		}
	}
}

// TestSearchSinceOverflow: since and until go through the one time parser,
// which refuses an age longer than a duration holds.
func TestSearchSinceOverflow(t *testing.T) {
	for _, field := range []string{"since", "until"} {
		in := SearchInput{Query: "x"}
		if field == "since" {
			in.Since = "106752d"
		} else {
			in.Until = "106752d"
		}
		_, err := in.query(day)
		if !errors.Is(err, engram.ErrInvalidQuery) || !strings.Contains(err.Error(), field) || !strings.Contains(err.Error(), "106751 days") {
			t.Errorf("%s 106752d: %v", field, err)
		}
	}
	q, err := SearchInput{Query: "x", Since: "7d"}.query(day)
	if err != nil || q.Since == nil || !q.Since.Equal(day.Add(-7*24*time.Hour)) {
		t.Errorf("since 7d: %v, %v", q.Since, err)
	}
}
