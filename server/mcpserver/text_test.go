package mcpserver

import (
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

func TestParseWhen(t *testing.T) {
	now := day
	for _, tc := range []struct {
		in   string
		want time.Time
		err  bool
	}{
		{"2026-01-02", time.Date(2026, 1, 2, 0, 0, 0, 0, time.UTC), false},
		{"2026-01-02T03:04:05Z", time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC), false},
		{"7d", now.Add(-7 * 24 * time.Hour), false},
		{"36h", now.Add(-36 * time.Hour), false},
		{"-3d", time.Time{}, true},
		{"yesterday", time.Time{}, true},
		{"99999999999d", time.Time{}, true},
	} {
		got, err := parseWhen(tc.in, now)
		if (err != nil) != tc.err || (!tc.err && !got.Equal(tc.want)) {
			t.Errorf("parseWhen(%q) = %v, %v", tc.in, got, err)
		}
	}
}
