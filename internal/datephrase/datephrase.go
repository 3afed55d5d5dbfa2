// Package datephrase reads the date phrases of a query ("on 9 February, 2023",
// "in May 2023", "last week", "two years ago", "去年", "2023年5月") as time windows,
// relative to a reference time, without a model.
package datephrase

// How the phrases are read, where English or Chinese leaves a choice (each rule
// repeats its own choice next to its code):
//
//   - Calendar arithmetic runs in now's location; every window runs from one
//     local midnight to another. Weeks are ISO weeks, Monday first; a weekend is
//     the Saturday and Sunday of an ISO week.
//   - A date without a year ("9 February", "5月8日") is the latest such day on or
//     before today; a month without a year ("in February", "5月") is the latest
//     such month that has begun. "last March" is the latest March before the
//     current month, "next June" the first June after it, "this May" May of the
//     current year.
//   - "on Monday" (or "Monday") is the latest Monday on or before today, "last
//     Monday" the latest strictly before today, "next Tuesday" the first strictly
//     after today, "this Friday" and a bare "周三" the day of the current ISO week.
//   - "N units ago" is the calendar unit (day, ISO week, month, year, decade) that
//     holds today minus N units; hours, minutes and seconds ago give their day.
//     "a few" and "几" count three, "a couple" two; "half a year ago" and "半年前"
//     are the month six months back.
//   - "the past N units", "最近N天" and the like are a "range" from midnight of
//     the day N units before today (the same date N months or years back, clamped
//     to the month's end) to the end of today: "the past year" is the last twelve
//     months and a day, not the previous calendar year.
//   - Seasons are northern meteorological: spring March–May, summer June–August,
//     autumn (fall) September–November, winter December–February, named by the
//     year of its December ("winter 2023" is December 2023 to February 2024).
//   - "early", "mid" and "late" split a year into January–April, May–August and
//     September–December, a month into days 1–10, 11–20 and 21 to its end; "the
//     beginning / middle / end of", "年初" and "年底" take the same thirds.
//   - "since X" and "from X" alone name X itself; "from X to Y" and "between X
//     and Y" name the range from X's start to Y's end.
//   - Two-digit years and decades depend on today: "'23" is the latest year
//     ending in 23 no more than ten years ahead, "the '90s", "the 90s" and
//     "90年代" the latest decade that has begun.
//   - Numeric dates other than year first (02/09/2023, 9.2.2023) are never read:
//     day-first and month-first orders cannot be told apart.
//   - A four-digit number is a year only after in, during, of, from, since, by,
//     around or throughout and from 1900 to 2100 ("in 2023", "2020-2023"), after
//     "year" ("the year 1850"), or inside a longer date ("May 2023", "2023年"):
//     "the 2023 release" and "room 2023" name no year. A month name needs a day, a year, a cue or a modifier: "May I"
//     and "march on" name no month.
//   - Vague words ("recently", "lately", "earlier", "最近" without a count, "前几天")
//     and durations that are as often lengths as dates ("in 3 days") are not read.

import "time"

// Window is one date phrase of a text and the span of time it names: [Since, Until).
type Window struct {
	Phrase     string    // the phrase as it appears in the text: Text[Start:End]
	Start, End int       // byte offsets of the phrase in the text
	Since      time.Time // inclusive
	Until      time.Time // exclusive; always after Since
	Unit       string    // the phrase's granularity: "day", "week", "weekend", "month", "quarter", "season", "year", "decade", or "range" for an explicit span
	Relative   bool      // the window depends on the reference time (yesterday, last week, 3 days ago, a date without a year)
}

// Find returns the date phrases of text in order of appearance, each read
// relative to now (calendar arithmetic in now's location). Phrases never overlap; a longer reading wins over
// a shorter one at the same place ("9 February, 2023" is one phrase, not "February, 2023").
//
// Find scans the text once: at each token it tries every rule, each of which
// looks a bounded number of tokens ahead, keeps the longest well-formed
// reading and resumes after it, so its time is linear in the text's length.
func Find(text string, now time.Time) []Window {
	toks := tokenize(text)
	if len(toks) == 0 {
		return nil
	}
	c := newCal(now)
	en := english{toks: toks, cal: c}
	zh := chinese{text: text, cal: c}
	var out []Window
	for i := 0; i < len(toks); {
		var b best
		b.offer(en.match(i))
		if start := toks[i].start; mayStartChinese(text[start]) {
			b.offer(zh.match(start))
		}
		if !b.ok {
			i++
			continue
		}
		start := toks[i].start
		out = append(out, Window{
			Phrase:   text[start:b.end],
			Start:    start,
			End:      b.end,
			Since:    b.sp.since,
			Until:    b.sp.until,
			Unit:     b.sp.unit,
			Relative: b.sp.relative,
		})
		for i < len(toks) && toks[i].start < b.end {
			i++
		}
	}
	return out
}

// best keeps the longest well-formed reading offered at one place.
type best struct {
	end int // where the phrase ends: a token index or a byte offset, never both in one best
	sp  span
	ok  bool
}

// offer keeps sp if ok, well formed and longer than what best holds.
func (b *best) offer(end int, sp span, ok bool) {
	if ok && sp.valid() && (!b.ok || end > b.end) {
		*b = best{end: end, sp: sp, ok: true}
	}
}

// fail is what a rule returns when it does not apply.
func fail() (int, span, bool) { return 0, span{}, false }
