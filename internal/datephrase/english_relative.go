package datephrase

// English phrases read from today: "yesterday", "last Monday", "next week",
// "two years ago", "the past 3 days".

// relativeDay reads "today", "tonight", "this morning" (afternoon, evening),
// "yesterday", "last night", "tomorrow", "the day before yesterday" and "the
// day after tomorrow".
func (p *english) relativeDay(i int, cue key, the bool) (int, span, bool) {
	if !selfCue(cue) {
		return fail()
	}
	c := p.cal
	if the {
		if p.unitAt(i) != uDay {
			return fail()
		}
		switch {
		case p.is(i+1, kBefore) && p.is(i+2, kYesterday):
			return i + 3, c.dayOffset(-2), true
		case p.is(i+1, kAfter) && p.is(i+2, kTomorrow):
			return i + 3, c.dayOffset(2), true
		}
		return fail()
	}
	switch p.keyAt(i) {
	case kToday, kTonight:
		return i + 1, c.dayOffset(0), true
	case kYesterday:
		return i + 1, c.dayOffset(-1), true
	case kTomorrow:
		return i + 1, c.dayOffset(1), true
	case kThis:
		if k := p.keyAt(i + 1); k == kMorning || k == kAfternoon || k == kEvening {
			return i + 2, c.dayOffset(0), true
		}
	case kLast:
		if p.is(i+1, kNight) {
			return i + 2, c.dayOffset(-1), true
		}
	}
	return fail()
}

// modifier reads "this", "last", "next", "previous" and "this past" at i as an
// offset in units from the current one, and where what they modify starts.
// "this past" is "last".
func (p *english) modifier(i int) (off, j int, ok bool) {
	switch p.keyAt(i) {
	case kThis:
		if p.is(i+1, kPast) {
			return -1, i + 2, true
		}
		return 0, i + 1, true
	case kLast, kPrevious:
		return -1, i + 1, true
	case kNext:
		return 1, i + 1, true
	}
	return 0, 0, false
}

// weekday reads a weekday name. Alone or after "on" it is the latest such day
// on or before today; "last Monday" the latest strictly before today; "next
// Tuesday" the first strictly after today; "this Friday" the Friday of the
// current ISO week. A date after it ("Monday, May 8, 2023") is read instead.
func (p *english) weekday(i int, cue key, the bool) (int, span, bool) {
	if the || !selfCue(cue) {
		return fail()
	}
	off, j, modified := p.modifier(i)
	if !modified {
		j = i
	}
	l := p.lexAt(j)
	if l.cls != wWeekday {
		return fail()
	}
	wd, c := int(l.val), p.cal
	switch {
	case !modified:
		k := p.skipComma(j + 1)
		withThe := p.is(k, kThe)
		if withThe {
			k++
		}
		var b best
		b.offer(p.dayFirst(k, kNone, withThe))
		b.offer(p.monthFirst(k, kNone, withThe))
		b.offer(p.iso(k, kNone, withThe))
		if b.ok {
			return b.end, b.sp, true
		}
		return j + 1, c.weekdayBack(wd, false), true
	case off < 0:
		return j + 1, c.weekdayBack(wd, true), true
	case off > 0:
		return j + 1, c.weekdayAhead(wd), true
	}
	return j + 1, c.weekdayOfWeek(0, wd), true
}

// relUnit reads "this week", "last month", "next year", "last weekend", "this
// quarter", "last decade", "last March", "next summer", and "the week before
// last" or "the year after next". Weeks are ISO weeks; "last March" is the
// latest March before the current month, "next June" the first after it;
// "last winter" is the latest winter that has ended, "next summer" the first
// that has not begun. A unit followed by "of" is a part of something else.
func (p *english) relUnit(i int, cue key, the bool) (int, span, bool) {
	if !selfCue(cue) {
		return fail()
	}
	if the {
		off := 0
		switch {
		case p.is(i+1, kBefore) && p.is(i+2, kLast):
			off = -2
		case p.is(i+1, kAfter) && p.is(i+2, kNext):
			off = 2
		default:
			return fail()
		}
		sp, ok := p.unitOffset(i, off)
		return i + 3, sp, ok
	}
	off, j, ok := p.modifier(i)
	if !ok {
		return fail()
	}
	c := p.cal
	switch l := p.lexAt(j); l.cls {
	case wMonth, wMonthAbbr:
		m, e, _ := p.monthName(j, true)
		switch {
		case off < 0:
			return e, c.monthBefore(m), true
		case off > 0:
			return e, c.monthAfter(m), true
		}
		return e, c.monthThisYear(m), true
	case wSeason:
		s := int(l.val)
		switch {
		case off < 0:
			return j + 1, c.seasonBefore(s), true
		case off > 0:
			return j + 1, c.seasonAfter(s), true
		}
		return j + 1, c.seasonThis(s), true
	}
	// "the last week of May" and "the last year of college" are not last week or last year.
	if p.is(j+1, kOf) {
		return fail()
	}
	sp, ok := p.unitOffset(j, off)
	return j + 1, sp, ok
}

// unitOffset is the week, weekend, month, quarter, year or decade named at j,
// off of them from the current one.
func (p *english) unitOffset(j, off int) (span, bool) {
	c := p.cal
	switch p.unitAt(j) {
	case uWeek:
		return c.weekOffset(off), true
	case uMonth:
		return c.monthOffset(off), true
	case uYear:
		return c.yearOffset(off), true
	case uDecade:
		return c.decadeOffset(off), true
	}
	switch p.keyAt(j) {
	case kWeekend:
		return c.weekendOffset(off), true
	case kQuarter:
		return c.quarterOffset(off), true
	}
	return span{}, false
}

// ago reads "3 days ago", "two weeks ago", "a couple of years ago", "an hour
// ago": the calendar unit holding today minus that many units (see cal.ago).
func (p *english) ago(i int, cue key, the bool) (int, span, bool) {
	if the || !selfCue(cue) {
		return fail()
	}
	n, half, j, ok := p.count(i)
	if !ok {
		return fail()
	}
	u := p.unitAt(j)
	if u == uNone || !p.is(j+1, kAgo) {
		return fail()
	}
	sp, ok := p.cal.ago(n, half, u)
	return j + 2, sp, ok
}

// spanBack reads "the past 3 days", "over the last two weeks", "the past year",
// "in the last 6 months", "past week": a range from the day that many units
// back to the end of today (see cal.spanBack). Without a count, "last" needs
// "the" ("last week" is the previous ISO week), "previous" is never a span, and
// "the last week of May" is not read.
func (p *english) spanBack(i int, cue key, the bool) (int, span, bool) {
	if !spanCue(cue) {
		return fail()
	}
	mod := p.keyAt(i)
	if mod != kPast && mod != kLast && mod != kPrevious {
		return fail()
	}
	n, half, j, counted := p.count(i + 1)
	if !counted {
		if mod == kPrevious || mod == kLast && !the {
			return fail()
		}
		n, j = 1, i+1
	}
	u := p.unitAt(j)
	if u == uNone || !counted && p.is(j+1, kOf) {
		return fail()
	}
	sp, ok := p.cal.spanBack(n, half, u)
	return j + 1, sp, ok
}
