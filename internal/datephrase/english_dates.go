package datephrase

// English calendar dates: days, months, years, quarters, seasons, decades and
// their early, mid and late parts. Each rule takes the token index i where its
// phrase starts, the cue before it and whether "the" came before it.

// monthName reads a month name at i: a full name, or an abbreviation when abbr
// is allowed, with its period ("Sept.").
func (p *english) monthName(i int, abbr bool) (m, end int, ok bool) {
	switch l := p.lexAt(i); {
	case l.cls == wMonth:
		return int(l.val), i + 1, true
	case l.cls == wMonthAbbr && abbr:
		end = i + 1
		if p.punctAt(end, '.') && p.tight(end) {
			end++
		}
		return int(l.val), end, true
	}
	return 0, 0, false
}

// dayOfMonth reads a day number 1–31 at i: "9", "09", "9th", and, when words
// is set, "ninth" or "twenty-first".
func (p *english) dayOfMonth(i int, words bool) (d, end int, word, ok bool) {
	t := p.at(i)
	switch t.kind {
	case tokNum:
		if v, n, ok := p.number(i); ok && n <= 2 && v >= 1 && v <= 31 {
			return v, i + 1, false, true
		}
	case tokOrd:
		if v, e, ok := p.ordinal(i); ok && v >= 1 && v <= 31 {
			return v, e, false, true
		}
	case tokWord:
		if !words {
			break
		}
		if v, e, ok := p.ordinal(i); ok {
			return v, e, true, true
		}
		if l := p.lexAt(i); l.cls == wNumber && (l.val == 20 || l.val == 30) {
			j := i + 1
			if p.punctAt(j, '-') && p.tight(j) && p.tight(j+1) {
				j++
			}
			if v, e, ok := p.ordinal(j); ok && p.at(j).kind == tokWord && v < 10 && int(l.val)+v <= 31 {
				return int(l.val) + v, e, true, true
			}
		}
	}
	return 0, 0, false, false
}

// yearNumber reads a year at i: four digits, or an apostrophe and two digits
// ("'23", relative: see cal.twoDigitYear).
func (p *english) yearNumber(i int) (y, end int, relative, ok bool) {
	if v, n, ok := p.number(i); ok && n == 4 {
		return v, i + 1, false, true
	}
	if p.punctAt(i, '\'') && p.tight(i+1) {
		if v, n, ok := p.number(i + 1); ok && n == 2 {
			return p.cal.twoDigitYear(v), i + 2, true, true
		}
	}
	return 0, 0, false, false
}

// withYear ends a date whose day and month end before token j: with a year
// after an optional comma it is that day; without one, the latest such day on
// or before today. A day the year lacks (February 29, 2023) is no date.
func (p *english) withYear(j, m, d int) (int, span, bool) {
	if y, e, relative, ok := p.yearNumber(p.skipComma(j)); ok {
		if d > daysIn(y, m) {
			return fail()
		}
		sp := p.cal.day(y, m, d)
		sp.relative = relative
		return e, sp, true
	}
	sp, ok := p.cal.latestDay(m, d)
	return j, sp, ok
}

// dayFirst reads "9 February, 2023", "9th of February 2023", "the first of May",
// "9 Feb". A day in words needs the "of".
func (p *english) dayFirst(i int, cue key, the bool) (int, span, bool) {
	if !selfCue(cue) {
		return fail()
	}
	d, j, word, ok := p.dayOfMonth(i, true)
	if !ok {
		return fail()
	}
	if p.is(j, kOf) {
		j++
	} else if word {
		return fail()
	}
	m, j, ok := p.monthName(j, true)
	if !ok {
		return fail()
	}
	return p.withYear(j, m, d)
}

// monthFirst reads "February 9, 2023", "Feb 9th, 2023", "Sept. 3 2021", "May 8".
func (p *english) monthFirst(i int, cue key, the bool) (int, span, bool) {
	if the || !selfCue(cue) {
		return fail()
	}
	m, j, ok := p.monthName(i, true)
	if !ok {
		return fail()
	}
	d, j, _, ok := p.dayOfMonth(j, false)
	if !ok {
		return fail()
	}
	return p.withYear(j, m, d)
}

// iso reads year-first numeric dates, "2023-02-09" and "2023/02/09", and
// year-months, "2023-02". The parts touch; the year has four digits.
func (p *english) iso(i int, cue key, the bool) (int, span, bool) {
	if the || !selfCue(cue) {
		return fail()
	}
	yt, sep, mt := p.at(i), p.at(i+1), p.at(i+2)
	if yt.kind != tokNum || yt.digits != 4 || p.joinedTo(i, i-1, i-2) ||
		sep.kind != tokPunct || (sep.punct != '-' && sep.punct != '/') || !p.tight(i+1) ||
		mt.kind != tokNum || mt.digits > 2 || !p.tight(i+2) || mt.val < 1 || mt.val > monthsPerYear {
		return fail()
	}
	y, m := yt.val, mt.val
	if p.punctAt(i+3, sep.punct) && p.tight(i+3) {
		dt := p.at(i + 4)
		if dt.kind != tokNum || dt.digits > 2 || !p.tight(i+4) || dt.val < 1 || dt.val > daysIn(y, m) || p.joinedTo(i+4, i+5, i+6) {
			return fail()
		}
		return i + 5, p.cal.day(y, m, dt.val), true
	}
	if sep.punct != '-' || mt.digits != 2 || mt.glued || p.joinedTo(i+2, i+3, i+4) {
		return fail()
	}
	return i + 3, p.cal.month(y, m), true
}

// monthYear reads "May 2023", "May, 2023", "May of 2023", "Feb '23".
func (p *english) monthYear(i int, cue key, the bool) (int, span, bool) {
	if the || !selfCue(cue) {
		return fail()
	}
	m, j, ok := p.monthName(i, true)
	if !ok {
		return fail()
	}
	y, e, relative, ok := p.yearNumber(p.skip(p.skipComma(j), kOf))
	if !ok {
		return fail()
	}
	sp := p.cal.month(y, m)
	sp.relative = relative
	return e, sp, true
}

// monthAlone reads a full month name after a cue, "in February", as the latest
// such month that has begun. Abbreviations are not read alone ("in Jan" is as
// likely a person).
func (p *english) monthAlone(i int, cue key, the bool) (int, span, bool) {
	if the || !monthCue(cue) {
		return fail()
	}
	m, j, ok := p.monthName(i, false)
	if !ok {
		return fail()
	}
	return j, p.cal.monthOnOrBefore(m), true
}

// cuedYear reads a four-digit year from minCuedYear to maxCuedYear after a year
// cue: "in 2023", "since 2020". "in 2000 years" is a count, not a year.
func (p *english) cuedYear(i int, cue key, the bool) (int, span, bool) {
	if the || !yearCue(cue) {
		return fail()
	}
	v, n, ok := p.number(i)
	if !ok || n != 4 || v < minCuedYear || v > maxCuedYear || p.unitAt(i+1) != uNone || p.punctAt(i+1, '%') {
		return fail()
	}
	return i + 1, p.cal.year(v), true
}

// yearWord reads "year 2023" and "the year 2023".
func (p *english) yearWord(i int, cue key, the bool) (int, span, bool) {
	if !selfCue(cue) && !yearCue(cue) {
		return fail()
	}
	if p.unitAt(i) != uYear {
		return fail()
	}
	if v, n, ok := p.number(i + 1); ok && n == 4 {
		return i + 2, p.cal.year(v), true
	}
	return fail()
}

// yearRange reads "2020-2023" and "2020 – 2023": two years from minCuedYear to
// maxCuedYear, the second after the first.
func (p *english) yearRange(i int, cue key, the bool) (int, span, bool) {
	if the || !selfCue(cue) {
		return fail()
	}
	a, b := p.at(i), p.at(i+2)
	if a.kind != tokNum || a.digits != 4 || a.glued || !p.punctAt(i+1, '-') ||
		b.kind != tokNum || b.digits != 4 || b.glued ||
		p.joinedTo(i, i-1, i-2) || p.joinedTo(i+2, i+3, i+4) ||
		a.val < minCuedYear || b.val > maxCuedYear || b.val <= a.val {
		return fail()
	}
	return i + 3, span{since: p.cal.year(a.val).since, until: p.cal.year(b.val).until, unit: unitRange}, true
}

// partial reads an early, mid or late part of a year or month: "early 2023",
// "mid-2021", "late May", "the end of 2023", "the beginning of March 2024".
// Years split into Jan–Apr, May–Aug, Sep–Dec; months into days 1–10, 11–20, 21–end.
func (p *english) partial(i int, cue key, the bool) (int, span, bool) {
	if !selfCue(cue) {
		return fail()
	}
	third, j := -1, i+1
	switch p.keyAt(i) {
	case kEarly:
		third = 0
	case kMid:
		third = 1
	case kLate:
		third = 2
	case kBeginning, kStart:
		third, j = 0, i+2
	case kMiddle:
		third, j = 1, i+2
	case kEnd:
		third, j = 2, i+2
	}
	switch {
	case third < 0:
		return fail()
	case j == i+2 && !p.is(i+1, kOf):
		return fail()
	case j == i+1 && the:
		return fail()
	case j == i+1 && p.punctAt(j, '-') && p.tight(j) && p.tight(j+1):
		j++ // mid-2021
	}
	end, whole, ok := p.partTarget(j)
	if !ok {
		return fail()
	}
	var sp span
	y, m, _ := whole.since.Date()
	if whole.unit == unitYear {
		sp = p.cal.yearThird(y, third)
	} else {
		sp = p.cal.monthThird(y, int(m), third)
	}
	sp.relative = whole.relative
	return end, sp, true
}

// partTarget reads the year or month a part is taken of: "2023", "May 2023",
// "May", "this year", "last month".
func (p *english) partTarget(j int) (int, span, bool) {
	if y, e, relative, ok := p.yearNumber(j); ok {
		sp := p.cal.year(y)
		sp.relative = relative
		return e, sp, true
	}
	if m, e, ok := p.monthName(j, true); ok {
		if y, e2, relative, ok := p.yearNumber(p.skip(p.skipComma(e), kOf)); ok {
			sp := p.cal.month(y, m)
			sp.relative = relative
			return e2, sp, true
		}
		if p.lexAt(j).cls == wMonth {
			return e, p.cal.monthOnOrBefore(m), true
		}
		return fail()
	}
	off := 0
	switch p.keyAt(j) {
	case kThis:
	case kLast:
		off = -1
	case kNext:
		off = 1
	default:
		return fail()
	}
	switch p.unitAt(j + 1) {
	case uYear:
		return j + 2, p.cal.yearOffset(off), true
	case uMonth:
		return j + 2, p.cal.monthOffset(off), true
	}
	return fail()
}

// quarter reads "Q3 2023", "Q3 of 2023", "the third quarter of 2023", "3rd quarter 2023".
func (p *english) quarter(i int, cue key, the bool) (int, span, bool) {
	if !selfCue(cue) {
		return fail()
	}
	q, j := 0, 0
	if t := p.at(i); t.kind == tokQuarter && !the {
		q, j = t.val, i+1
	} else if n, e, ok := p.ordinal(i); ok && n >= 1 && n <= 4 && p.is(e, kQuarter) {
		q, j = n, e+1
	}
	if q == 0 {
		return fail()
	}
	y, e, relative, ok := p.yearNumber(p.skip(p.skipComma(j), kOf))
	if !ok {
		return fail()
	}
	sp := p.cal.quarter(y, q)
	sp.relative = relative
	return e, sp, true
}

// season reads "summer 2023", "the summer of 2022", "fall, 2021" and, after a
// month cue, "in the summer" (the latest that has begun). A bare season name
// is not read.
func (p *english) season(i int, cue key, the bool) (int, span, bool) {
	l := p.lexAt(i)
	if l.cls != wSeason {
		return fail()
	}
	s := int(l.val)
	if y, e, relative, ok := p.yearNumber(p.skip(p.skipComma(i+1), kOf)); ok && selfCue(cue) {
		sp := p.cal.season(y, s)
		sp.relative = relative
		return e, sp, true
	}
	if monthCue(cue) {
		return i + 1, p.cal.seasonOnOrBefore(s), true
	}
	return fail()
}

// decade reads "1990s", "1990's", "'90s" and "the 90s"; two-digit decades are
// the latest that has begun. "90s" without "the" or an apostrophe is an age
// ("in her 90s") and not read.
func (p *english) decade(i int, cue key, the bool) (int, span, bool) {
	if !selfCue(cue) {
		return fail()
	}
	c, t := p.cal, p.at(i)
	switch {
	case t.kind == tokDecade && t.digits == 4 && t.val%yearsPerDecade == 0:
		return i + 1, c.decade(t.val), true
	case t.kind == tokNum && t.digits == 4 && t.val%yearsPerDecade == 0 && !t.glued &&
		p.punctAt(i+1, '\'') && p.tight(i+1) && p.is(i+2, kS) && p.tight(i+2):
		return i + 3, c.decade(t.val), true
	case p.punctAt(i, '\'') && p.tight(i+1):
		if n := p.at(i + 1); n.kind == tokDecade && n.digits == 2 && n.val%yearsPerDecade == 0 {
			return i + 2, rel(c.decade(c.twoDigitDecade(n.val))), true
		}
	case the && t.kind == tokDecade && t.digits == 2 && t.val%yearsPerDecade == 0:
		return i + 1, rel(c.decade(c.twoDigitDecade(t.val))), true
	}
	return fail()
}
