package datephrase

// The English reader: at a token it tries an optional cue ("in", "on", "since",
// …) and an optional "the" before every rule and keeps the longest reading.
// Rules return the index of the token after their phrase; each looks a bounded
// number of tokens ahead.

import "time"

// The years a bare four-digit number after a cue is read as ("in 2023"); outside
// them "in 1500" and "in 3000" are more likely counts than years.
const (
	minCuedYear = 1900
	maxCuedYear = 2100
)

// english reads date phrases from the tokens of a text.
type english struct {
	toks []token
	cal  cal
	none token // what at returns past either end: a token no rule reads
}

// match returns the end (a byte offset) and window of the longest phrase that
// starts at token i.
func (p *english) match(i int) (int, span, bool) {
	if !p.canStart(i) {
		return fail()
	}
	var b best
	b.offer(p.core(i, kNone, false))
	if p.is(i, kThe) {
		b.offer(p.core(i+1, kNone, true))
	}
	if cue := p.keyAt(i); isCue(cue) {
		j, the := i+1, false
		if p.is(j, kThe) {
			j, the = j+1, true
		}
		b.offer(p.core(j, cue, the))
		if cue == kFrom {
			b.offer(p.fromTo(i))
		}
	}
	if p.is(i, kBetween) {
		b.offer(p.fromTo(i))
	}
	if !b.ok {
		return fail()
	}
	return p.toks[b.end-1].end, b.sp, true
}

// core returns the longest reading of the rules at token i after cue (kNone
// when there is none) and, when the, after "the".
func (p *english) core(i int, cue key, the bool) (int, span, bool) {
	if i >= len(p.toks) || !p.canStart(i) {
		return fail()
	}
	var b best
	b.offer(p.dayFirst(i, cue, the))
	b.offer(p.monthFirst(i, cue, the))
	b.offer(p.iso(i, cue, the))
	b.offer(p.monthYear(i, cue, the))
	b.offer(p.monthAlone(i, cue, the))
	b.offer(p.cuedYear(i, cue, the))
	b.offer(p.yearWord(i, cue, the))
	b.offer(p.yearRange(i, cue, the))
	b.offer(p.partial(i, cue, the))
	b.offer(p.quarter(i, cue, the))
	b.offer(p.season(i, cue, the))
	b.offer(p.decade(i, cue, the))
	b.offer(p.relativeDay(i, cue, the))
	b.offer(p.weekday(i, cue, the))
	b.offer(p.relUnit(i, cue, the))
	b.offer(p.ago(i, cue, the))
	b.offer(p.spanBack(i, cue, the))
	return b.end, b.sp, b.ok
}

// canStart reports whether a phrase may start at token i: a known word, a
// number, or the apostrophe of '90s.
func (p *english) canStart(i int) bool {
	switch t := &p.toks[i]; t.kind {
	case tokWord:
		return t.lex.cls != wNone
	case tokNum, tokOrd, tokDecade, tokQuarter:
		return true
	case tokPunct:
		return t.punct == '\''
	}
	return false
}

// Cues. Which cue a rule takes is part of the rule: a month name or a bare year
// needs one; a full date takes one into its phrase but stands without.

// isCue reports whether k may open a phrase.
func isCue(k key) bool {
	switch k {
	case kIn, kOn, kDuring, kSince, kFrom, kOf, kBy, kAround, kThroughout, kWithin, kOver, kFor:
		return true
	}
	return false
}

// selfCue reports whether a rule that needs no cue takes k before it. kBetween
// and kTo are the cues fromTo passes to the two ends of a range.
func selfCue(k key) bool {
	switch k {
	case kNone, kIn, kOn, kDuring, kSince, kFrom, kBy, kAround, kThroughout, kBetween, kTo:
		return true
	}
	return false
}

// yearCue reports whether k lets a bare four-digit number be a year: "in 2023",
// "of 2023", "since 2020".
func yearCue(k key) bool {
	switch k {
	case kIn, kDuring, kOf, kFrom, kSince, kBy, kAround, kThroughout, kBetween, kTo:
		return true
	}
	return false
}

// monthCue reports whether k lets a month or season name stand without a day or
// a year: "in May", "since March", "during the summer". Without one, "May" and
// "march" are verbs.
func monthCue(k key) bool {
	switch k {
	case kIn, kDuring, kFrom, kSince, kBy, kAround, kThroughout, kBetween, kTo:
		return true
	}
	return false
}

// spanCue reports whether k may open a span back from today: "in the past 3 days",
// "over the last two weeks", "within the last week".
func spanCue(k key) bool {
	switch k {
	case kNone, kIn, kOver, kWithin, kFor, kDuring, kThroughout, kSince:
		return true
	}
	return false
}

// Token access; out-of-range indexes read as a token no rule reads.

func (p *english) at(i int) *token {
	if i < 0 || i >= len(p.toks) {
		return &p.none
	}
	return &p.toks[i]
}

func (p *english) lexAt(i int) lex {
	if t := p.at(i); t.kind == tokWord {
		return t.lex
	}
	return lex{}
}

func (p *english) keyAt(i int) key {
	if l := p.lexAt(i); l.cls == wKey {
		return key(l.val)
	}
	return kNone
}

func (p *english) is(i int, k key) bool { return p.keyAt(i) == k }

func (p *english) unitAt(i int) unit {
	if l := p.lexAt(i); l.cls == wUnit {
		return unit(l.val)
	}
	return uNone
}

func (p *english) punctAt(i int, c byte) bool {
	t := p.at(i)
	return t.kind == tokPunct && t.punct == c
}

// tight reports whether token i touches token i-1, with no space between.
func (p *english) tight(i int) bool { return i > 0 && i < len(p.toks) && !p.toks[i].space }

// skip returns j+1 when token j is k, else j.
func (p *english) skip(j int, k key) int {
	if p.is(j, k) {
		return j + 1
	}
	return j
}

// skipComma returns j+1 when token j is a comma, else j.
func (p *english) skipComma(j int) int {
	if p.punctAt(j, ',') {
		return j + 1
	}
	return j
}

// number reads token i as a free-standing number: digits not glued to Chinese
// and not part of a decimal, a time, a fraction, a range or a thousands group.
func (p *english) number(i int) (val, digits int, ok bool) {
	t := p.at(i)
	if t.kind != tokNum || t.val < 0 || t.glued || p.joined(i) {
		return 0, 0, false
	}
	return t.val, t.digits, true
}

// joined reports whether the digits of token i continue into digits next to
// them through a mark: "1.2.3", "10:30", "02/09", "2020-21", "1,500".
func (p *english) joined(i int) bool {
	return p.joinedTo(i, i+1, i+2) || p.joinedTo(i, i-1, i-2)
}

// joinedTo reports whether token mark, a punctuation mark, touches both token i
// and token other, and other starts with a digit.
func (p *english) joinedTo(i, mark, other int) bool {
	m, o := p.at(mark), p.at(other)
	if m.kind != tokPunct || o.digits == 0 {
		return false
	}
	lo, hi := min(i, other), max(i, other)
	if !p.tight(lo+1) || !p.tight(hi) {
		return false
	}
	switch m.punct {
	case '.', ':', '/', '-':
		return true
	case ',':
		// A comma joins digits only before a thousands group, so "May 8,2023" stays a date.
		return p.at(hi).kind == tokNum && p.at(hi).digits == 3
	}
	return false
}

// count reads how many units a phrase counts back: "3", "two", "twenty-one",
// "a", "an", "a couple of" (2), "a few" (3), "a hundred", or "half a" (half
// is set, n is 1). "several" and "many" are not read.
func (p *english) count(i int) (n int, half bool, end int, ok bool) {
	if v, _, ok := p.number(i); ok {
		return v, false, i + 1, true
	}
	switch p.keyAt(i) {
	case kA, kAn:
		switch p.keyAt(i + 1) {
		case kCouple:
			return 2, false, p.skip(i+2, kOf), true
		case kFew:
			return 3, false, i + 2, true
		case kHundred:
			return 100, false, i + 2, true
		}
		return 1, false, i + 1, true
	case kCouple:
		return 2, false, p.skip(i+1, kOf), true
	case kFew:
		return 3, false, i + 1, true
	case kHalf:
		if k := p.keyAt(i + 1); k == kA || k == kAn {
			return 1, true, i + 2, true
		}
		return 0, false, 0, false
	}
	n, end, ok = p.numberWords(i)
	return n, false, end, ok
}

// numberWords reads a number in words: "seven", "twenty-one", "thirty two",
// "two hundred".
func (p *english) numberWords(i int) (n, end int, ok bool) {
	l := p.lexAt(i)
	if l.cls != wNumber {
		return 0, 0, false
	}
	n, end = int(l.val), i+1
	if n >= 20 && n%10 == 0 {
		j := end
		if p.punctAt(j, '-') && p.tight(j) && p.tight(j+1) {
			j++
		}
		if o := p.lexAt(j); o.cls == wNumber && o.val < 10 {
			n, end = n+int(o.val), j+1
		}
	}
	if n < 10 && p.is(end, kHundred) {
		n, end = n*100, end+1
	}
	return n, end, true
}

// ordinal reads an ordinal: "3rd", "third", "second".
func (p *english) ordinal(i int) (n, end int, ok bool) {
	t := p.at(i)
	switch {
	case t.kind == tokOrd && t.digits <= 2 && !p.joined(i):
		return t.val, i + 1, true
	case t.kind == tokWord && t.lex.cls == wOrdinal:
		return int(t.lex.val), i + 1, true
	case p.unitAt(i) == uSecond && t.end-t.start == len("second"):
		return 2, i + 1, true
	}
	return 0, 0, false
}

// fromTo reads a range: "from X to Y" (or until, till, through, a dash) and
// "between X and Y", token i being "from" or "between". It spans from X's start
// to Y's end. A relative X before an absolute Y is read relative to Y's last
// day, so "from May to July 2023" starts in May 2023.
func (p *english) fromTo(i int) (int, span, bool) {
	cue := p.keyAt(i)
	xEnd, x, ok := p.point(i+1, cue)
	if !ok {
		return fail()
	}
	switch k := p.keyAt(xEnd); {
	case cue == kBetween && k == kAnd:
	case cue == kFrom && (k == kTo || k == kUntil || k == kThrough || p.punctAt(xEnd, '-')):
	default:
		return fail()
	}
	yEnd, y, ok := p.point(xEnd+1, kTo)
	if !ok {
		return fail()
	}
	if x.relative && !y.relative {
		q := *p
		q.cal = newCal(y.until.Add(-time.Nanosecond))
		if end, x2, ok := q.point(i+1, cue); ok && end == xEnd {
			x, x.relative = x2, false
		}
	}
	if y.since.Before(x.since) {
		return fail()
	}
	return yEnd, span{since: x.since, until: y.until, unit: unitRange, relative: x.relative || y.relative}, true
}

// point reads one end of a range at i, after an optional "the".
func (p *english) point(i int, cue key) (int, span, bool) {
	var b best
	if p.is(i, kThe) {
		b.offer(p.core(i+1, cue, true))
	}
	b.offer(p.core(i, cue, false))
	return b.end, b.sp, b.ok
}
