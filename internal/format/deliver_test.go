package format

import (
	"fmt"
	"math/rand"
	"strings"
	"testing"
	"unicode/utf8"
)

func entry(id string, body int) Entry {
	return Entry{Head: "- " + id + ": ", Body: strings.Repeat("x", body), Mark: " [excerpt of " + id + "]"}
}

func more(k int) string { return fmt.Sprintf("(+%d more)", k) }

// TestDeliver: short memories stay whole, long ones share what is left
// equally as excerpts, the best one is never dropped while a minimal excerpt
// of it fits, and what is left out is counted.
func TestDeliver(t *testing.T) {
	cases := []struct {
		name    string
		entries []Entry
		budget  int
		max     int
		want    []string // per shown entry: "id whole" or "id cut N" (body runes)
		note    bool
	}{
		{"all fit whole", []Entry{entry("a", 10), entry("b", 20)}, 100, 0, []string{"a whole", "b whole"}, false},
		{"one long among short ones", []Entry{entry("a", 1000), entry("b", 20), entry("c", 30)}, 300, 0,
			[]string{"a cut 217", "b whole", "c whole"}, false},
		{"all long share equally", []Entry{entry("a", 1000), entry("b", 1000), entry("c", 1000)}, 600, 0,
			[]string{"a cut 179", "b cut 179", "c cut 179"}, false},
		{"minimal excerpts fill the budget: the rest counted", []Entry{entry("a", 1000), entry("b", 1000), entry("c", 1000)}, 250, 0,
			[]string{"a cut 99", "b cut 99"}, true},
		{"the best answer alone in a tiny budget", []Entry{entry("a", 1000), entry("b", 5)}, 60, 0, []string{"a cut 29"}, true},
		{"max bounds the count", []Entry{entry("a", 10), entry("b", 10), entry("c", 10)}, 0, 2, []string{"a whole", "b whole"}, true},
		{"unlimited", []Entry{entry("a", 5000)}, 0, 0, []string{"a whole"}, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			shown, text := Deliver(c.entries, DeliverOptions{Budget: c.budget, Max: c.max, More: more})
			var got []string
			for _, s := range shown {
				id := strings.TrimSuffix(strings.TrimPrefix(c.entries[s.Index].Head, "- "), ": ")
				if s.Cut {
					got = append(got, fmt.Sprintf("%s cut %d", id, utf8.RuneCountInString(s.Body)))
				} else {
					got = append(got, id+" whole")
				}
			}
			if fmt.Sprint(got) != fmt.Sprint(c.want) {
				t.Fatalf("shown %v, want %v\n%s", got, c.want, text)
			}
			if n := utf8.RuneCountInString(text); c.budget > 0 && n > c.budget {
				t.Fatalf("%d runes over a budget of %d", n, c.budget)
			}
			if hasNote := strings.Contains(text, "more)"); hasNote != c.note {
				t.Fatalf("count line %v, want %v:\n%s", hasNote, c.note, text)
			}
			if strings.Count(text, "[excerpt of") != strings.Count(fmt.Sprint(got), "cut") {
				t.Fatalf("every cut line must carry its mark, and only those:\n%s", text)
			}
		})
	}
}

// TestDeliverProperties: on random entries and budgets the text stays within
// the budget, every excerpt shows at least MinExcerpt runes (or is the best
// entry alone), and the best entry is shown whenever its least form fits.
func TestDeliverProperties(t *testing.T) {
	r := rand.New(rand.NewSource(3))
	for range 5000 {
		var es []Entry
		for i := range 1 + r.Intn(8) {
			es = append(es, entry(fmt.Sprint(i), r.Intn(400)))
		}
		budget := r.Intn(900)
		shown, text := Deliver(es, DeliverOptions{Budget: budget, More: more})
		if n := utf8.RuneCountInString(text); budget > 0 && n > budget {
			t.Fatalf("%d runes over a budget of %d:\n%s", n, budget, text)
		}
		first := utf8.RuneCountInString(es[0].Head+es[0].Mark) + minFirst + 1
		if budget > 0 && min(first, utf8.RuneCountInString(es[0].Head+es[0].Body)+1) <= budget-len("(+9 more)")-1 &&
			(len(shown) == 0 || shown[0].Index != 0) {
			t.Fatalf("budget %d: the best entry was dropped:\n%s", budget, text)
		}
		for _, s := range shown {
			if s.Cut && utf8.RuneCountInString(s.Body) < MinExcerpt && len(shown) > 1 {
				t.Fatalf("budget %d: an excerpt of %d runes beside others:\n%s", budget, utf8.RuneCountInString(s.Body), text)
			}
		}
	}
}
