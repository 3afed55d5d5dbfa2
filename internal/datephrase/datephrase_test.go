package datephrase

import (
	"reflect"
	"testing"
	"time"
	_ "time/tzdata" // Asia/Shanghai and America/New_York on systems without zoneinfo
)

// Reference times.
var (
	// friday is the default: 2026-12-04, a Friday; its ISO week runs Nov 30 to Dec 6.
	friday  = time.Date(2026, 12, 4, 15, 30, 0, 0, time.UTC)
	sunday  = time.Date(2026, 12, 6, 10, 0, 0, 0, time.UTC)
	newYear = time.Date(2027, 1, 1, 9, 0, 0, 0, time.UTC)   // a Friday
	leapDay = time.Date(2028, 2, 29, 12, 0, 0, 0, time.UTC) // a Tuesday
)

// want is one expected window; since and until are dates in now's location.
type want struct {
	phrase, since, until, unit string
	relative                   bool
}

// w builds a want.
func w(phrase, since, until, unit string, relative bool) want {
	return want{phrase, since, until, unit, relative}
}

type findCase struct {
	name string
	text string
	now  time.Time // zero: friday
	want []want    // nil: no phrase
}

// findCases are the table of TestFind and the seeds of FuzzFind.
func findCases(tb testing.TB) []findCase {
	tb.Helper()
	shanghai := location(tb, "Asia/Shanghai")
	newYork := location(tb, "America/New_York")
	// Saturday 04:00 in Shanghai while it is still Friday in UTC.
	shanghaiSat := time.Date(2026, 12, 4, 20, 0, 0, 0, time.UTC).In(shanghai)
	// The day clocks spring forward: 23 hours long.
	dstDay := time.Date(2026, 3, 8, 12, 0, 0, 0, newYork)

	cases := []findCase{
		// Full dates.
		{"retreat question", "What did Deborah do at the retreat on 9 February, 2023?", time.Time{},
			[]want{w("on 9 February, 2023", "2023-02-09", "2023-02-10", "day", false)}},
		{"conference question", "What did Caroline do at the LGBTQ conference on 10 July, 2023?", time.Time{},
			[]want{w("on 10 July, 2023", "2023-07-10", "2023-07-11", "day", false)}},
		{"day of month year", "9th of February 2023", time.Time{}, []want{w("9th of February 2023", "2023-02-09", "2023-02-10", "day", false)}},
		{"month day comma year", "February 9, 2023", time.Time{}, []want{w("February 9, 2023", "2023-02-09", "2023-02-10", "day", false)}},
		{"abbreviation ordinal", "Feb 9th, 2023", time.Time{}, []want{w("Feb 9th, 2023", "2023-02-09", "2023-02-10", "day", false)}},
		{"abbreviation period", "born Sept. 3 2021", time.Time{}, []want{w("Sept. 3 2021", "2021-09-03", "2021-09-04", "day", false)}},
		{"iso dash", "deploy on 2023-02-09", time.Time{}, []want{w("on 2023-02-09", "2023-02-09", "2023-02-10", "day", false)}},
		{"iso slash", "2023/02/09", time.Time{}, []want{w("2023/02/09", "2023-02-09", "2023-02-10", "day", false)}},
		{"iso timestamp", "at 2023-02-09T10:00:00Z", time.Time{}, []want{w("2023-02-09", "2023-02-09", "2023-02-10", "day", false)}},
		{"weekday then date", "Monday, May 8, 2023", time.Time{}, []want{w("Monday, May 8, 2023", "2023-05-08", "2023-05-09", "day", false)}},
		{"ordinal word", "on the first of May", time.Time{}, []want{w("on the first of May", "2026-05-01", "2026-05-02", "day", true)}},
		{"impossible day falls back to month", "31 April 2023", time.Time{}, []want{w("April 2023", "2023-04-01", "2023-05-01", "month", false)}},

		// Months, years, ranges.
		{"camping question", "When did Melanie go camping in June 2023?", time.Time{},
			[]want{w("in June 2023", "2023-06-01", "2023-07-01", "month", false)}},
		{"month of year", "in May of 2023", time.Time{}, []want{w("in May of 2023", "2023-05-01", "2023-06-01", "month", false)}},
		{"two-digit year", "Feb '23", time.Time{}, []want{w("Feb '23", "2023-02-01", "2023-03-01", "month", true)}},
		{"iso month", "report 2023-02", time.Time{}, []want{w("2023-02", "2023-02-01", "2023-03-01", "month", false)}},
		{"in year", "What happened in 2023?", time.Time{}, []want{w("in 2023", "2023-01-01", "2024-01-01", "year", false)}},
		{"during year", "during 2019", time.Time{}, []want{w("during 2019", "2019-01-01", "2020-01-01", "year", false)}},
		{"since year", "since 2020", time.Time{}, []want{w("since 2020", "2020-01-01", "2021-01-01", "year", false)}},
		{"the year", "the year 1850", time.Time{}, []want{w("the year 1850", "1850-01-01", "1851-01-01", "year", false)}},
		{"year range", "2020-2023", time.Time{}, []want{w("2020-2023", "2020-01-01", "2024-01-01", "range", false)}},
		{"from to years", "from 2020 to 2023", time.Time{}, []want{w("from 2020 to 2023", "2020-01-01", "2024-01-01", "range", false)}},
		{"between days", "between May 1 and May 3, 2023", time.Time{},
			[]want{w("between May 1 and May 3, 2023", "2023-05-01", "2023-05-04", "range", false)}},
		{"from month to month year", "from May to July 2023", time.Time{},
			[]want{w("from May to July 2023", "2023-05-01", "2023-08-01", "range", false)}},
		{"early year", "early 2023", time.Time{}, []want{w("early 2023", "2023-01-01", "2023-05-01", "range", false)}},
		{"late year", "late 2022", time.Time{}, []want{w("late 2022", "2022-09-01", "2023-01-01", "range", false)}},
		{"mid year", "mid-2021", time.Time{}, []want{w("mid-2021", "2021-05-01", "2021-09-01", "range", false)}},
		{"early month", "in early May", time.Time{}, []want{w("in early May", "2026-05-01", "2026-05-11", "range", true)}},
		{"end of month", "at the end of May", time.Time{}, []want{w("the end of May", "2026-05-21", "2026-06-01", "range", true)}},
		{"end of this year", "by the end of this year", time.Time{},
			[]want{w("by the end of this year", "2026-09-01", "2027-01-01", "range", true)}},

		// Dates and months without a year.
		{"day month", "on 9 February", time.Time{}, []want{w("on 9 February", "2026-02-09", "2026-02-10", "day", true)}},
		{"month ordinal", "February 9th", time.Time{}, []want{w("February 9th", "2026-02-09", "2026-02-10", "day", true)}},
		{"may day", "May 8", time.Time{}, []want{w("May 8", "2026-05-08", "2026-05-09", "day", true)}},
		{"later this year is last year", "December 5", time.Time{}, []want{w("December 5", "2025-12-05", "2025-12-06", "day", true)}},
		{"today by date", "dec 4", time.Time{}, []want{w("dec 4", "2026-12-04", "2026-12-05", "day", true)}},
		{"leap day", "Feb 29", time.Time{}, []want{w("Feb 29", "2024-02-29", "2024-03-01", "day", true)}},
		{"in month", "in February", time.Time{}, []want{w("in February", "2026-02-01", "2026-03-01", "month", true)}},
		{"in current month", "in December", time.Time{}, []want{w("in December", "2026-12-01", "2027-01-01", "month", true)}},
		{"last month name", "last March", time.Time{}, []want{w("last March", "2026-03-01", "2026-04-01", "month", true)}},
		{"this month name", "this May", time.Time{}, []want{w("this May", "2026-05-01", "2026-06-01", "month", true)}},
		{"next month name", "next June", time.Time{}, []want{w("next June", "2027-06-01", "2027-07-01", "month", true)}},
		{"since month", "since March", time.Time{}, []want{w("since March", "2026-03-01", "2026-04-01", "month", true)}},

		// Quarters, seasons, decades.
		{"quarter", "Q3 2023", time.Time{}, []want{w("Q3 2023", "2023-07-01", "2023-10-01", "quarter", false)}},
		{"quarter words", "the third quarter of 2023", time.Time{},
			[]want{w("the third quarter of 2023", "2023-07-01", "2023-10-01", "quarter", false)}},
		{"this quarter", "this quarter", time.Time{}, []want{w("this quarter", "2026-10-01", "2027-01-01", "quarter", true)}},
		{"last quarter", "last quarter", time.Time{}, []want{w("last quarter", "2026-07-01", "2026-10-01", "quarter", true)}},
		{"season year", "summer 2023", time.Time{}, []want{w("summer 2023", "2023-06-01", "2023-09-01", "season", false)}},
		{"season of year", "in the summer of 2022", time.Time{},
			[]want{w("in the summer of 2022", "2022-06-01", "2022-09-01", "season", false)}},
		{"winter crosses the year", "winter 2023", time.Time{}, []want{w("winter 2023", "2023-12-01", "2024-03-01", "season", false)}},
		{"last winter", "last winter", time.Time{}, []want{w("last winter", "2025-12-01", "2026-03-01", "season", true)}},
		{"this winter", "this winter", time.Time{}, []want{w("this winter", "2026-12-01", "2027-03-01", "season", true)}},
		{"last summer", "last summer", time.Time{}, []want{w("last summer", "2026-06-01", "2026-09-01", "season", true)}},
		{"next summer", "next summer", time.Time{}, []want{w("next summer", "2027-06-01", "2027-09-01", "season", true)}},
		{"in the fall", "in the fall", time.Time{}, []want{w("in the fall", "2026-09-01", "2026-12-01", "season", true)}},
		{"decade", "in the 1990s", time.Time{}, []want{w("in the 1990s", "1990-01-01", "2000-01-01", "decade", false)}},
		{"decade apostrophe", "1990's", time.Time{}, []want{w("1990's", "1990-01-01", "2000-01-01", "decade", false)}},
		{"short decade", "the '90s", time.Time{}, []want{w("the '90s", "1990-01-01", "2000-01-01", "decade", true)}},
		{"curly decade", "it’s the ’90s", time.Time{}, []want{w("the ’90s", "1990-01-01", "2000-01-01", "decade", true)}},
		{"the 90s", "the 90s", time.Time{}, []want{w("the 90s", "1990-01-01", "2000-01-01", "decade", true)}},

		// Days and weekdays from today.
		{"today", "today", time.Time{}, []want{w("today", "2026-12-04", "2026-12-05", "day", true)}},
		{"tonight", "tonight", time.Time{}, []want{w("tonight", "2026-12-04", "2026-12-05", "day", true)}},
		{"this morning", "this morning", time.Time{}, []want{w("this morning", "2026-12-04", "2026-12-05", "day", true)}},
		{"yesterday", "What did I do yesterday?", time.Time{}, []want{w("yesterday", "2026-12-03", "2026-12-04", "day", true)}},
		{"last night", "last night", time.Time{}, []want{w("last night", "2026-12-03", "2026-12-04", "day", true)}},
		{"day before yesterday", "the day before yesterday", time.Time{},
			[]want{w("the day before yesterday", "2026-12-02", "2026-12-03", "day", true)}},
		{"tomorrow", "tomorrow", time.Time{}, []want{w("tomorrow", "2026-12-05", "2026-12-06", "day", true)}},
		{"day after tomorrow", "the day after tomorrow", time.Time{},
			[]want{w("the day after tomorrow", "2026-12-06", "2026-12-07", "day", true)}},
		{"on monday", "on Monday", time.Time{}, []want{w("on Monday", "2026-11-30", "2026-12-01", "day", true)}},
		{"on today's weekday", "on Friday", time.Time{}, []want{w("on Friday", "2026-12-04", "2026-12-05", "day", true)}},
		{"last monday", "last Monday", time.Time{}, []want{w("last Monday", "2026-11-30", "2026-12-01", "day", true)}},
		{"last today's weekday", "last Friday", time.Time{}, []want{w("last Friday", "2026-11-27", "2026-11-28", "day", true)}},
		{"this past monday", "this past Monday", time.Time{}, []want{w("this past Monday", "2026-11-30", "2026-12-01", "day", true)}},
		{"this friday", "this Friday", time.Time{}, []want{w("this Friday", "2026-12-04", "2026-12-05", "day", true)}},
		{"this sunday", "this Sunday", time.Time{}, []want{w("this Sunday", "2026-12-06", "2026-12-07", "day", true)}},
		{"next tuesday", "next Tuesday", time.Time{}, []want{w("next Tuesday", "2026-12-08", "2026-12-09", "day", true)}},
		{"next today's weekday", "next Friday", time.Time{}, []want{w("next Friday", "2026-12-11", "2026-12-12", "day", true)}},
		{"bare weekday", "Sunday", time.Time{}, []want{w("Sunday", "2026-11-29", "2026-11-30", "day", true)}},
		{"march is a verb, friday a day", "Can you march on Friday?", time.Time{},
			[]want{w("on Friday", "2026-12-04", "2026-12-05", "day", true)}},

		// Weeks, months, years from today.
		{"this week", "this week", time.Time{}, []want{w("this week", "2026-11-30", "2026-12-07", "week", true)}},
		{"last week", "last week", time.Time{}, []want{w("last week", "2026-11-23", "2026-11-30", "week", true)}},
		{"week before last", "the week before last", time.Time{},
			[]want{w("the week before last", "2026-11-16", "2026-11-23", "week", true)}},
		{"next week", "next week", time.Time{}, []want{w("next week", "2026-12-07", "2026-12-14", "week", true)}},
		{"last weekend", "last weekend", time.Time{}, []want{w("last weekend", "2026-11-28", "2026-11-30", "weekend", true)}},
		{"this weekend", "this weekend", time.Time{}, []want{w("this weekend", "2026-12-05", "2026-12-07", "weekend", true)}},
		{"next weekend", "next weekend", time.Time{}, []want{w("next weekend", "2026-12-12", "2026-12-14", "weekend", true)}},
		{"this month", "this month", time.Time{}, []want{w("this month", "2026-12-01", "2027-01-01", "month", true)}},
		{"last month", "last month", time.Time{}, []want{w("last month", "2026-11-01", "2026-12-01", "month", true)}},
		{"next month", "next month", time.Time{}, []want{w("next month", "2027-01-01", "2027-02-01", "month", true)}},
		{"this year", "this year", time.Time{}, []want{w("this year", "2026-01-01", "2027-01-01", "year", true)}},
		{"last year", "last year's plan", time.Time{}, []want{w("last year", "2025-01-01", "2026-01-01", "year", true)}},
		{"next year", "next year", time.Time{}, []want{w("next year", "2027-01-01", "2028-01-01", "year", true)}},
		{"year before last", "the year before last", time.Time{},
			[]want{w("the year before last", "2024-01-01", "2025-01-01", "year", true)}},
		{"last decade", "last decade", time.Time{}, []want{w("last decade", "2010-01-01", "2020-01-01", "decade", true)}},

		// Ago.
		{"days ago", "3 days ago", time.Time{}, []want{w("3 days ago", "2026-12-01", "2026-12-02", "day", true)}},
		{"weeks ago", "two weeks ago", time.Time{}, []want{w("two weeks ago", "2026-11-16", "2026-11-23", "week", true)}},
		{"a month ago", "a month ago", time.Time{}, []want{w("a month ago", "2026-11-01", "2026-12-01", "month", true)}},
		{"couple of years ago", "a couple of years ago", time.Time{},
			[]want{w("a couple of years ago", "2024-01-01", "2025-01-01", "year", true)}},
		{"few days ago", "a few days ago", time.Time{}, []want{w("a few days ago", "2026-12-01", "2026-12-02", "day", true)}},
		{"hour ago", "an hour ago", time.Time{}, []want{w("an hour ago", "2026-12-04", "2026-12-05", "day", true)}},
		{"compound number", "twenty-one days ago", time.Time{}, []want{w("twenty-one days ago", "2026-11-13", "2026-11-14", "day", true)}},
		{"half a year ago", "half a year ago", time.Time{}, []want{w("half a year ago", "2026-06-01", "2026-07-01", "month", true)}},
		{"hundred years ago", "a hundred years ago", time.Time{}, []want{w("a hundred years ago", "1926-01-01", "1927-01-01", "year", true)}},
		{"decade ago", "a decade ago", time.Time{}, []want{w("a decade ago", "2010-01-01", "2020-01-01", "decade", true)}},

		// Spans back from today.
		{"past days", "in the past 3 days", time.Time{}, []want{w("in the past 3 days", "2026-12-01", "2026-12-05", "range", true)}},
		{"last weeks", "over the last two weeks", time.Time{},
			[]want{w("over the last two weeks", "2026-11-20", "2026-12-05", "range", true)}},
		{"past year", "the past year", time.Time{}, []want{w("the past year", "2025-12-04", "2026-12-05", "range", true)}},
		{"last months", "in the last 6 months", time.Time{}, []want{w("in the last 6 months", "2026-06-04", "2026-12-05", "range", true)}},
		{"within last week", "within the last week", time.Time{},
			[]want{w("within the last week", "2026-11-27", "2026-12-05", "range", true)}},
		{"last hours", "the last 24 hours", time.Time{}, []want{w("the last 24 hours", "2026-12-03", "2026-12-05", "range", true)}},
		{"past few months", "past few months", time.Time{}, []want{w("past few months", "2026-09-04", "2026-12-05", "range", true)}},

		{"three phrases", "3 days ago and last week and in 2023", time.Time{}, []want{
			w("3 days ago", "2026-12-01", "2026-12-02", "day", true),
			w("last week", "2026-11-23", "2026-11-30", "week", true),
			w("in 2023", "2023-01-01", "2024-01-01", "year", false),
		}},

		// English that names no window.
		{"modal may", "May I ask a question?", time.Time{}, nil},
		{"verb march", "march on", time.Time{}, nil},
		{"year as adjective", "the 2023 release notes", time.Time{}, nil},
		{"version", "version 1.2.3", time.Time{}, nil},
		{"room number", "room 2023", time.Time{}, nil},
		{"identifier", "tasks_claim", time.Time{}, nil},
		{"error code", "error code 404", time.Time{}, nil},
		{"count", "I have 3 cats", time.Time{}, nil},
		{"a few alone", "a few", time.Time{}, nil},
		{"recently", "recently", time.Time{}, nil},
		{"vague words", "lately, earlier, before and after", time.Time{}, nil},
		{"empty", "", time.Time{}, nil},
		{"punctuation", "?!..., ;:—-'\"", time.Time{}, nil},
		{"hiking question", "How many times has Joanna found new hiking trails?", time.Time{}, nil},
		{"future duration", "done in 3 days", time.Time{}, nil},
		{"count of years", "in 2000 years", time.Time{}, nil},
		{"thousands", "in 1,500 tries", time.Time{}, nil},
		{"time of day", "May 8:30", time.Time{}, nil},
		{"ambiguous numeric date", "on 02/09/2023", time.Time{}, nil},
		{"bad iso month", "2023-13-01", time.Time{}, nil},
		{"bad iso day", "2023-02-30", time.Time{}, nil},
		{"no february 29", "February 29, 2025", time.Time{}, nil},
		{"year out of range", "3000 years ago", time.Time{}, nil},
		{"year too long", "year 99999", time.Time{}, nil},
		{"uncued year past 2100", "in 2101", time.Time{}, nil},
		{"bare season", "the summer", time.Time{}, nil},
		{"season verb", "I fall", time.Time{}, nil},
		{"abbreviation alone", "in Jan", time.Time{}, nil},
		{"age", "in her 90s", time.Time{}, nil},
		{"no fifth quarter", "Q5 2023", time.Time{}, nil},
		{"plural weekday", "sundays", time.Time{}, nil},
		{"day without month", "on the 9th", time.Time{}, nil},
		{"last week of a month", "the last week of May", time.Time{}, nil},

		// Chinese dates.
		{"zh full date", "2023年5月8日", time.Time{}, []want{w("2023年5月8日", "2023-05-08", "2023-05-09", "day", false)}},
		{"zh full date hao", "2023年5月8号开会", time.Time{}, []want{w("2023年5月8号", "2023-05-08", "2023-05-09", "day", false)}},
		{"zh year month", "2023年5月", time.Time{}, []want{w("2023年5月", "2023-05-01", "2023-06-01", "month", false)}},
		{"zh year", "2023年", time.Time{}, []want{w("2023年", "2023-01-01", "2024-01-01", "year", false)}},
		{"zh numerals", "二〇二三年五月", time.Time{}, []want{w("二〇二三年五月", "2023-05-01", "2023-06-01", "month", false)}},
		{"zh month day", "5月8日", time.Time{}, []want{w("5月8日", "2026-05-08", "2026-05-09", "day", true)}},
		{"zh month day hao", "5月8号", time.Time{}, []want{w("5月8号", "2026-05-08", "2026-05-09", "day", true)}},
		{"zh fullwidth", "１２月３日", time.Time{}, []want{w("１２月３日", "2026-12-03", "2026-12-04", "day", true)}},
		{"zh month alone", "5月", time.Time{}, []want{w("5月", "2026-05-01", "2026-06-01", "month", true)}},
		{"zh numeral month", "十二月", time.Time{}, []want{w("十二月", "2026-12-01", "2027-01-01", "month", true)}},
		{"zh early month", "5月初", time.Time{}, []want{w("5月初", "2026-05-01", "2026-05-11", "range", true)}},
		{"zh last year's month", "去年5月", time.Time{}, []want{w("去年5月", "2025-05-01", "2025-06-01", "month", true)}},
		{"zh year before", "2023年前", time.Time{}, []want{w("2023年", "2023-01-01", "2024-01-01", "year", false)}},
		{"zh iso", "在2023-02-09的会议", time.Time{}, []want{w("2023-02-09", "2023-02-09", "2023-02-10", "day", false)}},
		{"zh mixed", "in 2023年5月", time.Time{}, []want{w("2023年5月", "2023-05-01", "2023-06-01", "month", false)}},

		// Chinese days and weeks.
		{"zh today", "今天", time.Time{}, []want{w("今天", "2026-12-04", "2026-12-05", "day", true)}},
		{"zh yesterday", "昨天", time.Time{}, []want{w("昨天", "2026-12-03", "2026-12-04", "day", true)}},
		{"zh day before yesterday", "前天", time.Time{}, []want{w("前天", "2026-12-02", "2026-12-03", "day", true)}},
		{"zh three days back", "大前天", time.Time{}, []want{w("大前天", "2026-12-01", "2026-12-02", "day", true)}},
		{"zh tomorrow", "明天", time.Time{}, []want{w("明天", "2026-12-05", "2026-12-06", "day", true)}},
		{"zh day after tomorrow", "后天", time.Time{}, []want{w("后天", "2026-12-06", "2026-12-07", "day", true)}},
		{"zh tonight", "今晚", time.Time{}, []want{w("今晚", "2026-12-04", "2026-12-05", "day", true)}},
		{"zh this morning", "今早", time.Time{}, []want{w("今早", "2026-12-04", "2026-12-05", "day", true)}},
		{"zh last week question", "上周我们讨论了什么", time.Time{}, []want{w("上周", "2026-11-23", "2026-11-30", "week", true)}},
		{"zh last week ge", "上个星期", time.Time{}, []want{w("上个星期", "2026-11-23", "2026-11-30", "week", true)}},
		{"zh last week xingqi", "上星期", time.Time{}, []want{w("上星期", "2026-11-23", "2026-11-30", "week", true)}},
		{"zh last week libai", "上礼拜", time.Time{}, []want{w("上礼拜", "2026-11-23", "2026-11-30", "week", true)}},
		{"zh this week ben", "本周", time.Time{}, []want{w("本周", "2026-11-30", "2026-12-07", "week", true)}},
		{"zh this week zhe", "这周", time.Time{}, []want{w("这周", "2026-11-30", "2026-12-07", "week", true)}},
		{"zh this week ge", "这个星期", time.Time{}, []want{w("这个星期", "2026-11-30", "2026-12-07", "week", true)}},
		{"zh next week", "下周", time.Time{}, []want{w("下周", "2026-12-07", "2026-12-14", "week", true)}},
		{"zh week before last", "上上周", time.Time{}, []want{w("上上周", "2026-11-16", "2026-11-23", "week", true)}},
		{"zh last monday", "上周一", time.Time{}, []want{w("上周一", "2026-11-23", "2026-11-24", "day", true)}},
		{"zh last sunday ri", "上周日", time.Time{}, []want{w("上周日", "2026-11-29", "2026-11-30", "day", true)}},
		{"zh last sunday tian", "上周天", time.Time{}, []want{w("上周天", "2026-11-29", "2026-11-30", "day", true)}},
		{"zh last weekend", "上周末", time.Time{}, []want{w("上周末", "2026-11-28", "2026-11-30", "weekend", true)}},
		{"zh wednesday", "周三", time.Time{}, []want{w("周三", "2026-12-02", "2026-12-03", "day", true)}},
		{"zh wednesday xingqi", "星期三", time.Time{}, []want{w("星期三", "2026-12-02", "2026-12-03", "day", true)}},
		{"zh saturday of this week", "星期六", time.Time{}, []want{w("星期六", "2026-12-05", "2026-12-06", "day", true)}},
		{"zh last week in all", "上周一共开了三次会", time.Time{}, []want{w("上周", "2026-11-23", "2026-11-30", "week", true)}},
		{"zh this week's weather", "这周天气不错", time.Time{}, []want{w("这周", "2026-11-30", "2026-12-07", "week", true)}},

		// Chinese months, years, quarters, seasons, decades.
		{"zh last month", "上个月", time.Time{}, []want{w("上个月", "2026-11-01", "2026-12-01", "month", true)}},
		{"zh last month short", "上月", time.Time{}, []want{w("上月", "2026-11-01", "2026-12-01", "month", true)}},
		{"zh this month", "这个月", time.Time{}, []want{w("这个月", "2026-12-01", "2027-01-01", "month", true)}},
		{"zh this month ben", "本月", time.Time{}, []want{w("本月", "2026-12-01", "2027-01-01", "month", true)}},
		{"zh next month", "下个月", time.Time{}, []want{w("下个月", "2027-01-01", "2027-02-01", "month", true)}},
		{"zh month before last", "上上个月", time.Time{}, []want{w("上上个月", "2026-10-01", "2026-11-01", "month", true)}},
		{"zh day of last month", "上个月5号", time.Time{}, []want{w("上个月5号", "2026-11-05", "2026-11-06", "day", true)}},
		{"zh last year question", "她去年做了什么", time.Time{}, []want{w("去年", "2025-01-01", "2026-01-01", "year", true)}},
		{"zh this year", "今年", time.Time{}, []want{w("今年", "2026-01-01", "2027-01-01", "year", true)}},
		{"zh next year", "明年", time.Time{}, []want{w("明年", "2027-01-01", "2028-01-01", "year", true)}},
		{"zh year before last", "前年", time.Time{}, []want{w("前年", "2024-01-01", "2025-01-01", "year", true)}},
		{"zh year after next", "后年", time.Time{}, []want{w("后年", "2028-01-01", "2029-01-01", "year", true)}},
		{"zh three years back", "大前年", time.Time{}, []want{w("大前年", "2023-01-01", "2024-01-01", "year", true)}},
		{"zh end of last year", "去年年底", time.Time{}, []want{w("去年年底", "2025-09-01", "2026-01-01", "range", true)}},
		{"zh start of year", "2023年初", time.Time{}, []want{w("2023年初", "2023-01-01", "2023-05-01", "range", false)}},
		{"zh quarter", "2023年第三季度", time.Time{}, []want{w("2023年第三季度", "2023-07-01", "2023-10-01", "quarter", false)}},
		{"zh quarter q", "2023年Q3", time.Time{}, []want{w("2023年Q3", "2023-07-01", "2023-10-01", "quarter", false)}},
		{"zh spring", "2023年春天", time.Time{}, []want{w("2023年春天", "2023-03-01", "2023-06-01", "season", false)}},
		{"zh winter", "2023年冬天", time.Time{}, []want{w("2023年冬天", "2023-12-01", "2024-03-01", "season", false)}},
		{"zh last summer question", "她去年夏天去了哪里？", time.Time{}, []want{w("去年夏天", "2025-06-01", "2025-09-01", "season", true)}},
		{"zh decade", "90年代", time.Time{}, []want{w("90年代", "1990-01-01", "2000-01-01", "decade", true)}},
		{"zh decade numerals", "九十年代", time.Time{}, []want{w("九十年代", "1990-01-01", "2000-01-01", "decade", true)}},
		{"zh decade four digits", "1990年代", time.Time{}, []want{w("1990年代", "1990-01-01", "2000-01-01", "decade", false)}},

		// Chinese ago and spans.
		{"zh days ago", "三天前", time.Time{}, []want{w("三天前", "2026-12-01", "2026-12-02", "day", true)}},
		{"zh days ago digits", "3天前", time.Time{}, []want{w("3天前", "2026-12-01", "2026-12-02", "day", true)}},
		{"zh weeks ago", "两周前", time.Time{}, []want{w("两周前", "2026-11-16", "2026-11-23", "week", true)}},
		{"zh weeks ago ge", "两个星期前", time.Time{}, []want{w("两个星期前", "2026-11-16", "2026-11-23", "week", true)}},
		{"zh month ago", "一个月前", time.Time{}, []want{w("一个月前", "2026-11-01", "2026-12-01", "month", true)}},
		{"zh years ago", "两年前", time.Time{}, []want{w("两年前", "2024-01-01", "2025-01-01", "year", true)}},
		{"zh half year ago", "半年前", time.Time{}, []want{w("半年前", "2026-06-01", "2026-07-01", "month", true)}},
		{"zh half month ago", "半个月前", time.Time{}, []want{w("半个月前", "2026-11-16", "2026-11-23", "week", true)}},
		{"zh few days ago", "几天前", time.Time{}, []want{w("几天前", "2026-12-01", "2026-12-02", "day", true)}},
		{"zh recent days", "最近三天", time.Time{}, []want{w("最近三天", "2026-12-01", "2026-12-05", "range", true)}},
		{"zh past weeks", "过去两周内", time.Time{}, []want{w("过去两周内", "2026-11-20", "2026-12-05", "range", true)}},
		{"zh near month", "近一个月", time.Time{}, []want{w("近一个月", "2026-11-04", "2026-12-05", "range", true)}},
		{"zh past year", "过去一年", time.Time{}, []want{w("过去一年", "2025-12-04", "2026-12-05", "range", true)}},
		{"zh recent few days", "最近几天", time.Time{}, []want{w("最近几天", "2026-12-01", "2026-12-05", "range", true)}},
		{"zh near half year", "近半年", time.Time{}, []want{w("近半年", "2026-06-04", "2026-12-05", "range", true)}},

		// Chinese that names no window.
		{"zh mysql question", "如何在 MySQL 中创建只读用户？", time.Time{}, nil},
		{"zh ordinal", "第三", time.Time{}, nil},
		{"zh every wednesday", "每周三", time.Time{}, nil},
		{"zh three times a week", "一周三次", time.Time{}, nil},
		{"zh from then on", "以后天天开会", time.Time{}, nil},
		{"zh close to", "接近3天", time.Time{}, nil},
		{"zh year too long", "99999年5月", time.Time{}, nil},
		{"zh no month 21", "二十一月", time.Time{}, nil},
		{"zh vague recent", "最近", time.Time{}, nil},
		{"zh vague few days", "前几天", time.Time{}, nil},
		{"zh around here", "这周围有什么", time.Time{}, nil},
		{"zh last cycle", "上个周期", time.Time{}, nil},
		{"zh weekly report", "看一下周报", time.Time{}, nil},
		{"zh morning meeting", "早上周会", time.Time{}, nil},
		{"zh to the moon", "上月球", time.Time{}, nil},

		// Reference time on a Sunday.
		{"sunday on sunday", "on Sunday", sunday, []want{w("on Sunday", "2026-12-06", "2026-12-07", "day", true)}},
		{"sunday last sunday", "last Sunday", sunday, []want{w("last Sunday", "2026-11-29", "2026-11-30", "day", true)}},
		{"sunday this weekend", "this weekend", sunday, []want{w("this weekend", "2026-12-05", "2026-12-07", "weekend", true)}},
		{"sunday last weekend", "last weekend", sunday, []want{w("last weekend", "2026-11-28", "2026-11-30", "weekend", true)}},
		{"sunday last week", "last week", sunday, []want{w("last week", "2026-11-23", "2026-11-30", "week", true)}},
		{"sunday next monday", "next Monday", sunday, []want{w("next Monday", "2026-12-07", "2026-12-08", "day", true)}},
		{"sunday this friday", "this Friday", sunday, []want{w("this Friday", "2026-12-04", "2026-12-05", "day", true)}},
		{"sunday zh sunday", "周日", sunday, []want{w("周日", "2026-12-06", "2026-12-07", "day", true)}},
		{"sunday zh monday", "周一", sunday, []want{w("周一", "2026-11-30", "2026-12-01", "day", true)}},
		{"sunday zh last sunday", "上周日", sunday, []want{w("上周日", "2026-11-29", "2026-11-30", "day", true)}},

		// Reference time on January 1st.
		{"new year yesterday", "yesterday", newYear, []want{w("yesterday", "2026-12-31", "2027-01-01", "day", true)}},
		{"new year last week", "last week", newYear, []want{w("last week", "2026-12-21", "2026-12-28", "week", true)}},
		{"new year this week", "this week", newYear, []want{w("this week", "2026-12-28", "2027-01-04", "week", true)}},
		{"new year last month", "last month", newYear, []want{w("last month", "2026-12-01", "2027-01-01", "month", true)}},
		{"new year last year", "last year", newYear, []want{w("last year", "2026-01-01", "2027-01-01", "year", true)}},
		{"new year in december", "in December", newYear, []want{w("in December", "2026-12-01", "2027-01-01", "month", true)}},
		{"new year christmas", "December 25", newYear, []want{w("December 25", "2026-12-25", "2026-12-26", "day", true)}},
		{"new year this winter", "this winter", newYear, []want{w("this winter", "2026-12-01", "2027-03-01", "season", true)}},
		{"new year last winter", "last winter", newYear, []want{w("last winter", "2025-12-01", "2026-03-01", "season", true)}},
		{"new year last quarter", "last quarter", newYear, []want{w("last quarter", "2026-10-01", "2027-01-01", "quarter", true)}},
		{"new year past days", "the past 3 days", newYear, []want{w("the past 3 days", "2026-12-29", "2027-01-02", "range", true)}},
		{"new year week ago", "a week ago", newYear, []want{w("a week ago", "2026-12-21", "2026-12-28", "week", true)}},
		{"new year zh last year", "去年", newYear, []want{w("去年", "2026-01-01", "2027-01-01", "year", true)}},
		{"new year zh christmas", "12月25日", newYear, []want{w("12月25日", "2026-12-25", "2026-12-26", "day", true)}},

		// Reference time on February 29 of a leap year.
		{"leap today by date", "Feb 29", leapDay, []want{w("Feb 29", "2028-02-29", "2028-03-01", "day", true)}},
		{"leap year ago", "a year ago", leapDay, []want{w("a year ago", "2027-01-01", "2028-01-01", "year", true)}},
		{"leap past year", "the past year", leapDay, []want{w("the past year", "2027-02-28", "2028-03-01", "range", true)}},
		{"leap past month", "the past month", leapDay, []want{w("the past month", "2028-01-29", "2028-03-01", "range", true)}},
		{"leap tomorrow", "tomorrow", leapDay, []want{w("tomorrow", "2028-03-01", "2028-03-02", "day", true)}},
		{"leap this week", "this week", leapDay, []want{w("this week", "2028-02-28", "2028-03-06", "week", true)}},
		{"leap zh", "2月29日", leapDay, []want{w("2月29日", "2028-02-29", "2028-03-01", "day", true)}},

		// Another location: Saturday in Shanghai while Friday in UTC.
		{"shanghai today", "today", shanghaiSat, []want{w("today", "2026-12-05", "2026-12-06", "day", true)}},
		{"shanghai yesterday", "昨天", shanghaiSat, []want{w("昨天", "2026-12-04", "2026-12-05", "day", true)}},
		{"shanghai this weekend", "this weekend", shanghaiSat, []want{w("this weekend", "2026-12-05", "2026-12-07", "weekend", true)}},
		{"shanghai last saturday", "上周六", shanghaiSat, []want{w("上周六", "2026-11-28", "2026-11-29", "day", true)}},
		{"shanghai date", "2023年5月8日", shanghaiSat, []want{w("2023年5月8日", "2023-05-08", "2023-05-09", "day", false)}},
		{"dst today", "today", dstDay, []want{w("today", "2026-03-08", "2026-03-09", "day", true)}},
		{"dst week", "this week", dstDay, []want{w("this week", "2026-03-02", "2026-03-09", "week", true)}},
	}
	for i := range cases {
		if cases[i].now.IsZero() {
			cases[i].now = friday
		}
	}
	return cases
}

func location(tb testing.TB, name string) *time.Location {
	tb.Helper()
	loc, err := time.LoadLocation(name)
	if err != nil {
		tb.Fatalf("LoadLocation(%q): %v", name, err)
	}
	return loc
}

func TestFind(t *testing.T) {
	for _, tc := range findCases(t) {
		t.Run(tc.name, func(t *testing.T) {
			got := Find(tc.text, tc.now)
			checkWindows(t, tc.text, tc.now, got)
			if len(got) != len(tc.want) {
				t.Fatalf("Find(%q) = %s; want %d windows", tc.text, describe(got), len(tc.want))
			}
			for i, wt := range tc.want {
				g := got[i]
				since, until := date(t, wt.since, tc.now), date(t, wt.until, tc.now)
				if g.Phrase != wt.phrase || !g.Since.Equal(since) || !g.Until.Equal(until) || g.Unit != wt.unit || g.Relative != wt.relative {
					t.Errorf("Find(%q)[%d] = %s; want %q [%s, %s) %s relative=%v",
						tc.text, i, describe(got[i:i+1]), wt.phrase, wt.since, wt.until, wt.unit, wt.relative)
				}
			}
		})
	}
}

// checkWindows checks what holds of every answer: phrases in order, apart,
// equal to their text; windows well formed, in now's location, inside the
// years minYear to maxYear.
func checkWindows(tb testing.TB, text string, now time.Time, ws []Window) {
	tb.Helper()
	prevEnd := 0
	for i, w := range ws {
		if w.Start < prevEnd || w.Start >= w.End || w.End > len(text) {
			tb.Fatalf("Find(%q)[%d] spans [%d, %d) after %d in %d bytes", text, i, w.Start, w.End, prevEnd, len(text))
		}
		if text[w.Start:w.End] != w.Phrase {
			tb.Fatalf("Find(%q)[%d].Phrase = %q; text has %q", text, i, w.Phrase, text[w.Start:w.End])
		}
		if !w.Until.After(w.Since) {
			tb.Fatalf("Find(%q)[%d] = [%v, %v): empty", text, i, w.Since, w.Until)
		}
		if w.Since.Year() < minYear || w.Until.Year() > maxYear {
			tb.Fatalf("Find(%q)[%d] = [%v, %v): outside %d–%d", text, i, w.Since, w.Until, minYear, maxYear)
		}
		if w.Since.Location() != now.Location() || w.Until.Location() != now.Location() {
			tb.Fatalf("Find(%q)[%d] in %v, now in %v", text, i, w.Since.Location(), now.Location())
		}
		switch w.Unit {
		case unitDay, unitWeek, unitWeekend, unitMonth, unitQuarter, unitSeason, unitYear, unitDecade, unitRange:
		default:
			tb.Fatalf("Find(%q)[%d].Unit = %q", text, i, w.Unit)
		}
		prevEnd = w.End
	}
}

func date(tb testing.TB, s string, now time.Time) time.Time {
	tb.Helper()
	d, err := time.ParseInLocation(time.DateOnly, s, now.Location())
	if err != nil {
		tb.Fatal(err)
	}
	return d
}

func describe(ws []Window) string {
	s := "["
	for i, w := range ws {
		if i > 0 {
			s += ", "
		}
		s += w.Phrase + " [" + w.Since.Format(time.DateOnly) + ", " + w.Until.Format(time.DateOnly) + ") " + w.Unit
		if w.Relative {
			s += " relative"
		}
	}
	return s + "]"
}

// TestFindDeterministic checks that Find answers the same twice and does not
// depend on the clock.
func TestFindDeterministic(t *testing.T) {
	for _, tc := range findCases(t) {
		if a, b := Find(tc.text, tc.now), Find(tc.text, tc.now); !reflect.DeepEqual(a, b) {
			t.Errorf("Find(%q) = %s, then %s", tc.text, describe(a), describe(b))
		}
	}
}
