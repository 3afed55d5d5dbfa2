package datephrase

// Calendar arithmetic: the windows each phrase names, computed from dates in
// now's location. Dates are plain (year, month, day) ints that time.Date
// normalises, so "the 0th of March" is the last day of February and month 13 is
// January of the next year.

import "time"

// Window units.
const (
	unitDay     = "day"
	unitWeek    = "week"
	unitWeekend = "weekend"
	unitMonth   = "month"
	unitQuarter = "quarter"
	unitSeason  = "season"
	unitYear    = "year"
	unitDecade  = "decade"
	unitRange   = "range"
)

// The years a window may touch. time.Time's UnixNano covers 1677-09-21 to
// 2262-04-11; whole years inside it convert to nanoseconds wherever the engine
// stores them, so a phrase whose window leaves them is dropped.
const (
	minYear = 1678
	maxYear = 2261
)

// Calendar sizes.
const (
	daysPerWeek      = 7
	monthsPerYear    = 12
	monthsPerQuarter = 3
	monthsPerSeason  = 3
	yearsPerDecade   = 10
	yearsPerCentury  = 100

	monthsPerYearThird = 4  // early, mid and late parts of a year: Jan–Apr, May–Aug, Sep–Dec
	daysPerMonthThird  = 10 // early and mid parts of a month: days 1–10 and 11–20; late takes the rest
	monthsPerHalfYear  = 6  // 上半年, 下半年, and "half a year"
	weeksPerHalfMonth  = 2  // "half a month ago" and "半个月前": two weeks back
	hoursPerHalfDay    = 12
	minutesPerHalfHour = 30
	yearsPerHalfDecade = 5

	// maxLeapGap is the longest run of years without a February 29 (1896 to 1904).
	maxLeapGap = 8
	// twoDigitYearAhead is how far into the future a two-digit year ('23) may point.
	twoDigitYearAhead = 10
	// satOffset is Saturday's ISO weekday: Monday is 0.
	satOffset = 5
	// weekendDays is Saturday and Sunday.
	weekendDays = 2
)

// Seasons, by their index in the year: spring begins in March, winter in December.
const (
	spring = iota
	summer
	autumn
	winter
)

// span is a window before it is tied to a phrase.
type span struct {
	since, until time.Time
	unit         string
	relative     bool
}

// valid reports whether s is a well-formed window inside [minYear, maxYear].
func (s span) valid() bool {
	return s.until.After(s.since) && s.since.Year() >= minYear && s.until.Year() <= maxYear
}

// rel marks s as depending on the reference time.
func rel(s span) span {
	s.relative = true
	return s
}

// cal does calendar arithmetic in now's location around today's date.
type cal struct {
	now     time.Time
	loc     *time.Location
	y, m, d int // today in loc
	wd      int // today's ISO weekday: 0 Monday … 6 Sunday
}

func newCal(now time.Time) cal {
	y, m, d := now.Date()
	return cal{now: now, loc: now.Location(), y: y, m: int(m), d: d, wd: isoWeekday(y, int(m), d)}
}

// at is local midnight at the start of y-m-d.
func (c cal) at(y, m, d int) time.Time {
	return time.Date(y, time.Month(m), d, 0, 0, 0, 0, c.loc)
}

// days is the n days from y-m-d.
func (c cal) days(y, m, d, n int, unit string) span {
	return span{since: c.at(y, m, d), until: c.at(y, m, d+n), unit: unit}
}

// months is the n months from the first of y-m.
func (c cal) months(y, m, n int, unit string) span {
	return span{since: c.at(y, m, 1), until: c.at(y, m+n, 1), unit: unit}
}

func (c cal) day(y, m, d int) span { return c.days(y, m, d, 1, unitDay) }

// week is the ISO week (Monday to Sunday) that holds y-m-d.
func (c cal) week(y, m, d int) span {
	return c.days(y, m, d-isoWeekday(y, m, d), daysPerWeek, unitWeek)
}

// weekend is the Saturday and Sunday of the ISO week that holds y-m-d.
func (c cal) weekend(y, m, d int) span {
	return c.days(y, m, d-isoWeekday(y, m, d)+satOffset, weekendDays, unitWeekend)
}

func (c cal) month(y, m int) span { return c.months(y, m, 1, unitMonth) }

func (c cal) quarter(y, q int) span {
	return c.months(y, (q-1)*monthsPerQuarter+1, monthsPerQuarter, unitQuarter)
}

// season is season s of year y; winter y runs from December y to February y+1.
func (c cal) season(y, s int) span {
	return c.months(y, seasonStart(s), monthsPerSeason, unitSeason)
}

func (c cal) year(y int) span { return c.months(y, 1, monthsPerYear, unitYear) }

// decade is the decade that holds year y: 1990 to 1999 for any of them.
func (c cal) decade(y int) span {
	return c.months(floorDiv(y, yearsPerDecade)*yearsPerDecade, 1, yearsPerDecade*monthsPerYear, unitDecade)
}

// yearThird is the early (0), mid (1) or late (2) third of year y.
func (c cal) yearThird(y, third int) span {
	return c.months(y, 1+third*monthsPerYearThird, monthsPerYearThird, unitRange)
}

// monthThird is days 1–10 (0), 11–20 (1) or 21 to the end (2) of y-m.
func (c cal) monthThird(y, m, third int) span {
	first := 1 + third*daysPerMonthThird
	s := span{since: c.at(y, m, first), until: c.at(y, m, first+daysPerMonthThird), unit: unitRange}
	if third == 2 {
		s.until = c.at(y, m+1, 1)
	}
	return s
}

// halfYear is January–June (0) or July–December (1) of year y.
func (c cal) halfYear(y, half int) span {
	return c.months(y, 1+half*monthsPerHalfYear, monthsPerHalfYear, unitRange)
}

// Offsets from today, all relative.

func (c cal) dayOffset(n int) span  { return rel(c.day(c.y, c.m, c.d+n)) }
func (c cal) weekOffset(n int) span { return rel(c.week(c.y, c.m, c.d+daysPerWeek*n)) }
func (c cal) weekendOffset(n int) span {
	return rel(c.weekend(c.y, c.m, c.d+daysPerWeek*n))
}
func (c cal) monthOffset(n int) span { return rel(c.month(c.y, c.m+n)) }
func (c cal) quarterOffset(n int) span {
	q := (c.m - 1) / monthsPerQuarter
	return rel(c.months(c.y, (q+n)*monthsPerQuarter+1, monthsPerQuarter, unitQuarter))
}
func (c cal) yearOffset(n int) span   { return rel(c.year(c.y + n)) }
func (c cal) decadeOffset(n int) span { return rel(c.decade(c.y + yearsPerDecade*n)) }

// weekdayOfWeek is ISO weekday wd (0 Monday) of the ISO week n weeks from this one.
func (c cal) weekdayOfWeek(n, wd int) span {
	return c.dayOffset(daysPerWeek*n + wd - c.wd)
}

// weekdayBack is the latest day with ISO weekday wd on or before today, or
// strictly before today when strict ("last Monday").
func (c cal) weekdayBack(wd int, strict bool) span {
	back := (c.wd - wd + daysPerWeek) % daysPerWeek
	if strict && back == 0 {
		back = daysPerWeek
	}
	return c.dayOffset(-back)
}

// weekdayAhead is the first day with ISO weekday wd strictly after today ("next Tuesday").
func (c cal) weekdayAhead(wd int) span {
	ahead := (wd - c.wd + daysPerWeek) % daysPerWeek
	if ahead == 0 {
		ahead = daysPerWeek
	}
	return c.dayOffset(ahead)
}

// latestDay is the latest m-d on or before today: the year is the one that
// makes the date not after today and, for February 29, a leap year.
func (c cal) latestDay(m, d int) (span, bool) {
	for y := c.y; y >= c.y-maxLeapGap; y-- {
		if d > daysIn(y, m) || (y == c.y && (m > c.m || m == c.m && d > c.d)) {
			continue
		}
		return rel(c.day(y, m, d)), true
	}
	return span{}, false
}

// monthOnOrBefore is the latest month m that has begun ("in February").
func (c cal) monthOnOrBefore(m int) span {
	y := c.y
	if m > c.m {
		y--
	}
	return rel(c.month(y, m))
}

// monthBefore is the latest month m before the current month ("last March").
func (c cal) monthBefore(m int) span {
	y := c.y
	if m >= c.m {
		y--
	}
	return rel(c.month(y, m))
}

// monthAfter is the first month m after the current month ("next June").
func (c cal) monthAfter(m int) span {
	y := c.y
	if m <= c.m {
		y++
	}
	return rel(c.month(y, m))
}

// monthThisYear is month m of the current year ("this May").
func (c cal) monthThisYear(m int) span { return rel(c.month(c.y, m)) }

// Seasons relative to today, compared by month index (year*12 + month-1): a
// season begins on the first of its first month and ends on the first of the
// month after its last.

func (c cal) monthIndex() int { return c.y*monthsPerYear + c.m - 1 }

func seasonStartIndex(y, s int) int { return y*monthsPerYear + seasonStart(s) - 1 }

// seasonOnOrBefore is the latest season s that has begun ("in the summer").
func (c cal) seasonOnOrBefore(s int) span {
	y := c.y
	if seasonStartIndex(y, s) > c.monthIndex() {
		y--
	}
	return rel(c.season(y, s))
}

// seasonBefore is the latest season s that has ended ("last winter"): in the
// summer, "last summer" is the previous year's.
func (c cal) seasonBefore(s int) span {
	y := c.y
	for seasonStartIndex(y, s)+monthsPerSeason > c.monthIndex() {
		y--
	}
	return rel(c.season(y, s))
}

// seasonThis is season s of the current year ("this summer"); in January and
// February "this winter" is the one that began in December.
func (c cal) seasonThis(s int) span {
	y := c.y
	if s == winter && c.m < seasonStart(spring) {
		y--
	}
	return rel(c.season(y, s))
}

// seasonAfter is the first season s that begins after the current month ("next summer").
func (c cal) seasonAfter(s int) span {
	y := c.y - 1
	for seasonStartIndex(y, s) <= c.monthIndex() {
		y++
	}
	return rel(c.season(y, s))
}

// twoDigitYear reads '23 as the latest year ending in 23 at most
// twoDigitYearAhead years after today's.
func (c cal) twoDigitYear(yy int) int {
	y := floorDiv(c.y, yearsPerCentury)*yearsPerCentury + yy
	if y > c.y+twoDigitYearAhead {
		y -= yearsPerCentury
	}
	return y
}

// twoDigitDecade reads '90s as the latest decade ending in 90 that has begun.
func (c cal) twoDigitDecade(dd int) int {
	y := floorDiv(c.y, yearsPerCentury)*yearsPerCentury + dd
	if y > c.y {
		y -= yearsPerCentury
	}
	return y
}

// halve turns half of unit u into whole smaller units: half a year is six
// months, half a month two weeks, half a day twelve hours, half an hour thirty
// minutes, half a decade five years. Other halves are not read.
func halve(u unit) (unit, int, bool) {
	switch u {
	case uYear:
		return uMonth, monthsPerHalfYear, true
	case uMonth:
		return uWeek, weeksPerHalfMonth, true
	case uDay:
		return uHour, hoursPerHalfDay, true
	case uHour:
		return uMinute, minutesPerHalfHour, true
	case uDecade:
		return uYear, yearsPerHalfDecade, true
	}
	return uNone, 0, false
}

// back is the date n units before today. Months and years keep the day of the
// month, clamped to the month's length; hours and smaller count back from now.
func (c cal) back(n int, u unit) (y, m, d int) {
	switch u {
	case uSecond, uMinute, uHour:
		t := c.now.Add(-time.Duration(n) * u.duration())
		yy, mm, dd := t.Date()
		return yy, int(mm), dd
	case uDay:
		return c.y, c.m, c.d - n
	case uWeek:
		return c.y, c.m, c.d - daysPerWeek*n
	case uMonth:
		return clampDay(c.y, c.m-n, c.d)
	case uYear:
		return clampDay(c.y-n, c.m, c.d)
	case uDecade:
		return clampDay(c.y-yearsPerDecade*n, c.m, c.d)
	}
	return c.y, c.m, c.d
}

// ago is the calendar unit holding the date n units (half a unit when half)
// before today: "3 days ago" a day, "two weeks ago" an ISO week, "an hour ago"
// the day of that hour.
func (c cal) ago(n int, half bool, u unit) (span, bool) {
	if half {
		var ok bool
		if u, n, ok = halve(u); !ok {
			return span{}, false
		}
	}
	y, m, d := c.back(n, u)
	switch u {
	case uSecond, uMinute, uHour, uDay:
		return rel(c.day(y, m, d)), true
	case uWeek:
		return rel(c.week(y, m, d)), true
	case uMonth:
		return rel(c.month(y, m)), true
	case uYear:
		return rel(c.year(y)), true
	case uDecade:
		return rel(c.decade(y)), true
	}
	return span{}, false
}

// spanBack is the range from midnight of the day n units before today to the
// end of today ("the past 3 days" on the 4th is the 1st to the 4th).
func (c cal) spanBack(n int, half bool, u unit) (span, bool) {
	if half {
		var ok bool
		if u, n, ok = halve(u); !ok {
			return span{}, false
		}
	}
	if u == uNone {
		return span{}, false
	}
	y, m, d := c.back(n, u)
	return span{since: c.at(y, m, d), until: c.at(c.y, c.m, c.d+1), unit: unitRange, relative: true}, true
}

// seasonStart is the first month of season s.
func seasonStart(s int) int { return (s + 1) * monthsPerSeason }

// isoWeekday is the ISO weekday of y-m-d: 0 Monday … 6 Sunday.
func isoWeekday(y, m, d int) int {
	wd := time.Date(y, time.Month(m), d, 0, 0, 0, 0, time.UTC).Weekday()
	return (int(wd) + daysPerWeek - 1) % daysPerWeek
}

// daysIn is the number of days of month m of year y.
func daysIn(y, m int) int {
	return time.Date(y, time.Month(m)+1, 0, 0, 0, 0, 0, time.UTC).Day()
}

// clampDay normalises y-m and clamps d to that month's length, so that a month
// before March 31 is the last day of February.
func clampDay(y, m, d int) (int, int, int) {
	t := time.Date(y, time.Month(m), 1, 0, 0, 0, 0, time.UTC)
	y, mm, _ := t.Date()
	return y, int(mm), min(d, daysIn(y, int(mm)))
}

func floorDiv(a, b int) int {
	q := a / b
	if a%b != 0 && (a < 0) != (b < 0) {
		q--
	}
	return q
}
