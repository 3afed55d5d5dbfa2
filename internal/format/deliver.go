package format

// Delivery within a budget (inject, brief, the hooks, search --context): a
// memory too long for its share is shown as an excerpt — its best-matching
// passage, marked, with the id to fetch the rest — never dropped while a
// minimal excerpt of it still fits.
//
// The rule, in order:
//  1. Entries are taken best first while the minimal form of every entry taken
//     so far fits (whole when short, else MinExcerpt runes of its body with the
//     head and mark); one whose minimal form does not fit is skipped, and a
//     later, shorter one may still be taken. Max bounds how many.
//  2. Every taken entry then gets the same cap c, the largest that fits the
//     budget (max-min fairness): an entry no longer than c is shown whole, a
//     longer one as an excerpt of c runes. Short memories stay whole; long ones
//     share what is left equally.
//  3. What was left out is counted on a last line ("(+k more not shown)")
//     when that line fits; its room is set aside first.

import (
	"strings"
	"unicode/utf8"
)

// MinExcerpt is the least of a memory's body an excerpt shows: about one
// sentence, the smallest passage that can carry an answer.
const MinExcerpt = 80

// minFirst is the least body the best entry may get when not even MinExcerpt
// of it fits the budget: better a short excerpt of the best answer than none.
const minFirst = 20

// Entry is one memory to deliver as one line: Head + Body, or, when Body must
// be shortened, Head + a passage of Body + Mark.
type Entry struct {
	Head, Body, Mark string
}

// DeliverOptions bound a delivery.
type DeliverOptions struct {
	// Budget is the most runes of the text, newlines included; 0 or less is
	// unlimited.
	Budget int
	// Max is the most entries shown; 0 means no bound.
	Max int
	// Passage shortens entry i's body to at most room runes (the best-matching
	// passage, with its ellipses); nil takes the body's beginning.
	Passage func(i int, body string, room int) string
	// More counts k entries left out; nil writes no count.
	More func(k int) string
}

// Shown is one entry as delivered.
type Shown struct {
	Index int    // into the entries given
	Body  string // the body as shown: whole, or the passage
	Cut   bool   // Body is a passage (an excerpt)
}

// Deliver fits entries into the budget by the rule above and returns what it
// showed, in order, and the text: one entry a line.
func Deliver(entries []Entry, o DeliverOptions) ([]Shown, string) {
	whole := make([]int, len(entries)) // runes of each whole line, newline included
	least := make([]int, len(entries)) // runes of each minimal line
	for i, e := range entries {
		head := runes(e.Head)
		whole[i] = head + runes(e.Body) + 1
		least[i] = min(whole[i], head+MinExcerpt+runes(e.Mark)+1)
	}
	var taken []int
	room := o.Budget
	if o.Budget > 0 {
		// The count line's length depends on the count: settle it in a few rounds.
		base := append([]int(nil), least...)
		reserve := 0
		for range 3 {
			room = o.Budget - reserve
			copy(least, base)
			if len(entries) > 0 && least[0] > room {
				// Not even the best entry's minimal form fits: give it what
				// there is, down to a short excerpt, rather than drop it.
				e := entries[0]
				if runes(e.Head)+minFirst+runes(e.Mark)+1 <= room {
					least[0] = room
				}
			}
			taken = choose(least, room, o.Max)
			left := len(entries) - len(taken)
			r := 0
			if left > 0 && o.More != nil {
				r = runes(o.More(left)) + 1
			}
			if r == reserve {
				break
			}
			reserve = r
		}
		room = o.Budget - reserve
	} else {
		for i := range entries {
			if o.Max > 0 && i == o.Max {
				break
			}
			taken = append(taken, i)
		}
	}
	c := capFor(taken, whole, least, room)
	var b strings.Builder
	shown := make([]Shown, 0, len(taken))
	for _, i := range taken {
		e := entries[i]
		s := Shown{Index: i, Body: e.Body}
		if n := min(whole[i], max(c, least[i])); n < whole[i] {
			bodyRoom := n - runes(e.Head) - runes(e.Mark) - 1
			if o.Passage != nil {
				s.Body = o.Passage(i, e.Body, bodyRoom)
			} else {
				s.Body = Truncate(e.Body, bodyRoom)
			}
			s.Cut = true
		}
		b.WriteString(e.Head + s.Body)
		if s.Cut {
			b.WriteString(e.Mark)
		}
		b.WriteByte('\n')
		shown = append(shown, s)
	}
	if left := len(entries) - len(taken); left > 0 && o.More != nil {
		if note := o.More(left); o.Budget <= 0 || runes(b.String())+runes(note)+1 <= o.Budget {
			b.WriteString(note + "\n")
		}
	}
	return shown, b.String()
}

// choose takes entries best first while their minimal lines fit the budget,
// skipping one that does not, at most max of them (0: no bound).
func choose(least []int, budget, maxN int) []int {
	var taken []int
	spent := 0
	for i, n := range least {
		if maxN > 0 && len(taken) == maxN {
			break
		}
		if spent+n <= budget {
			taken = append(taken, i)
			spent += n
		}
	}
	return taken
}

// capFor is the largest cap c for which the taken entries' lines, each
// min(whole, max(c, least)) runes, fit the budget; unlimited (every entry
// whole) when the budget is.
func capFor(taken, whole, least []int, budget int) int {
	hi := 0
	for _, i := range taken {
		hi = max(hi, whole[i])
	}
	if budget <= 0 {
		return hi
	}
	total := func(c int) int {
		t := 0
		for _, i := range taken {
			t += min(whole[i], max(c, least[i]))
		}
		return t
	}
	lo := 0 // total(lo) ≤ budget holds: choose made sure of the minimal lines
	for lo < hi {
		mid := (lo + hi + 1) / 2
		if total(mid) <= budget {
			lo = mid
		} else {
			hi = mid - 1
		}
	}
	return lo
}

func runes(s string) int { return utf8.RuneCountInString(s) }
