package datephrase

// The Chinese reader: simplified Chinese date phrases, which have no spaces and
// take Arabic digits or Chinese numerals. Each rule takes the byte offset where
// its phrase starts and returns the offset where it ends.

import (
	"strings"
	"unicode/utf8"
)

// match returns the end and window of the longest phrase at pos.
func (z *chinese) match(pos int) (int, span, bool) {
	r, _ := z.runeAt(pos)
	if _, digit := arabicDigit(r); !digit && !isNumeral(r) && !strings.ContainsRune(cnStarts, r) {
		return fail()
	}
	var b best
	b.offer(z.years(pos))
	b.offer(z.monthDay(pos))
	b.offer(z.days(pos))
	b.offer(z.relWeek(pos))
	b.offer(z.relMonth(pos))
	b.offer(z.relQuarter(pos))
	b.offer(z.weekday(pos))
	b.offer(z.ago(pos))
	b.offer(z.spanBack(pos))
	b.offer(z.decade(pos))
	return b.end, b.sp, b.ok
}

// yearHead reads a year and its 年: "2023年", "二〇二三年", "两千零二十三年", or
// one relative to now's: 大前年, 前年, 去年, 今年, 明年, 后年, 大后年.
func (z *chinese) yearHead(pos int) (y, end int, relative, ok bool) {
	words := [...]struct {
		word string
		off  int
	}{{"大前年", -3}, {"大后年", 3}, {"前年", -2}, {"后年", 2}, {"去年", -1}, {"今年", 0}, {"明年", 1}}
	rest := z.text[pos:]
	for _, w := range words {
		if !strings.HasPrefix(rest, w.word) {
			continue
		}
		if (w.off == -2 || w.off == 2) && strings.ContainsRune(relBlockers, z.prevRune(pos)) {
			return 0, 0, false, false
		}
		return z.cal.y + w.off, pos + len(w.word), true, true
	}
	if !z.startsFree(pos) {
		return 0, 0, false, false
	}
	v, e, digits, form, ok := z.number(pos)
	if !ok || !(form != formUnits && digits == 4 || form == formUnits && v >= 1000) {
		return 0, 0, false, false
	}
	if e, ok = z.lit(e, "年"); !ok {
		return 0, 0, false, false
	}
	return v, e, false, true
}

// years reads a year and what may follow it: a month (2023年5月), a day
// (2023年5月8日, 去年5月8号), a part of a month (5月初, 5月下旬), a season
// (去年夏天, 2023年的冬天), a part of the year (年初 and 初 the first third, 年底,
// 年末, 底 and 末 the last, 上半年 and 下半年 the halves) or a quarter
// (2023年第三季度, 2023年Q3).
func (z *chinese) years(pos int) (int, span, bool) {
	y, e, relative, ok := z.yearHead(pos)
	if !ok {
		return fail()
	}
	c := z.cal
	var b best
	offer := func(end int, sp span) {
		sp.relative = relative
		b.offer(end, sp, true)
	}
	offer(e, c.year(y))
	if m, e2, ok := z.monthNum(e); ok {
		if e3, ok := z.lit(e2, "份"); ok {
			e2 = e3
		}
		offer(e2, c.month(y, m))
		if d, e3, ok := z.dayOfMonth(e2); ok && d <= daysIn(y, m) {
			offer(e3, c.day(y, m, d))
		}
		if third, e3, ok := z.monthPart(e2); ok {
			offer(e3, c.monthThird(y, m, third))
		}
	}
	k, _ := z.lit(e, "的")
	if s, e2, ok := z.prefix(k, "春天", "春季", "夏天", "夏季", "秋天", "秋季", "冬天", "冬季"); ok {
		offer(e2, c.season(y, s/2))
	}
	if p, e2, ok := z.prefix(e, "年初", "初", "年底", "年末", "底", "末"); ok {
		thirds := [...]int{0, 0, 2, 2, 2, 2}
		offer(e2, c.yearThird(y, thirds[p]))
	}
	if h, e2, ok := z.prefix(e, "上半年", "下半年"); ok {
		offer(e2, c.halfYear(y, h))
	}
	if q, e2, ok := z.quarterTail(e); ok {
		offer(e2, c.quarter(y, q))
	}
	return b.end, b.sp, b.ok
}

// quarterTail reads 第三季度, 三季度, 第3季度 or Q3 after a year.
func (z *chinese) quarterTail(pos int) (int, int, bool) {
	if r, size := z.runeAt(pos); r == 'Q' || r == 'q' {
		d, _ := z.runeAt(pos + size)
		after, _ := z.runeAt(pos + size + 1)
		if d >= '1' && d <= '4' && !(after < utf8.RuneSelf && isAlnum(byte(after))) {
			return int(d - '0'), pos + size + 1, true
		}
		return 0, 0, false
	}
	k, _ := z.lit(pos, "第")
	q, e, ok := z.smallNumber(k, 1, 4)
	if !ok {
		return 0, 0, false
	}
	if e, ok := z.lit(e, "季度"); ok {
		return q, e, true
	}
	return 0, 0, false
}

// monthDay reads a month without a year: 5月, 5月份, 五月八号, 5月初. A day is the
// latest such day on or before today, a month the latest such month that has
// begun. A month after 年 belongs to a year this reader could not read
// ("99999年5月") and is skipped with it.
func (z *chinese) monthDay(pos int) (int, span, bool) {
	if !z.startsFree(pos) || z.prevRune(pos) == '年' {
		return fail()
	}
	m, e, ok := z.monthNum(pos)
	if !ok {
		return fail()
	}
	c := z.cal
	var b best
	whole := c.monthOnOrBefore(m)
	if e2, ok := z.lit(e, "份"); ok {
		b.offer(e2, whole, true)
	}
	b.offer(e, whole, true)
	if d, e2, ok := z.dayOfMonth(e); ok {
		sp, ok := c.latestDay(m, d)
		b.offer(e2, sp, ok)
	}
	if third, e2, ok := z.monthPart(e); ok {
		y, _, _ := whole.since.Date()
		b.offer(e2, rel(c.monthThird(y, m, third)), true)
	}
	return b.end, b.sp, b.ok
}

// days reads 今天, 昨天, 前天, 大前天, 明天, 后天, 大后天 and their variants
// (今晚, 今早, 昨晚, 明日, …).
func (z *chinese) days(pos int) (int, span, bool) {
	words := [...]struct {
		word string
		off  int
	}{
		{"大前天", -3}, {"大后天", 3},
		{"今天", 0}, {"今日", 0}, {"今晚", 0}, {"今早", 0}, {"今夜", 0}, {"今儿", 0},
		{"昨天", -1}, {"昨日", -1}, {"昨晚", -1}, {"昨夜", -1}, {"昨儿", -1},
		{"明天", 1}, {"明日", 1}, {"明晚", 1}, {"明早", 1},
		{"前天", -2}, {"后天", 2},
	}
	rest := z.text[pos:]
	for _, w := range words {
		if !strings.HasPrefix(rest, w.word) {
			continue
		}
		if (w.off == -2 || w.off == 2) && strings.ContainsRune(relBlockers, z.prevRune(pos)) {
			return fail()
		}
		return pos + len(w.word), z.cal.dayOffset(w.off), true
	}
	return fail()
}

// relWeek reads a week from this one: 上周, 上个星期, 上礼拜, 本周, 这周, 下周,
// 上上周, 这一周; with a day after it, that day of the week (上周一, 下星期天);
// with 末, its weekend (上周末). 这周围 (around here) and 上个周期 (the last
// cycle) are not weeks, nor is 下周 in 看一下周报.
func (z *chinese) relWeek(pos int) (int, span, bool) {
	off, e, ok := z.relPrefix(pos)
	if !ok {
		return fail()
	}
	if _, e2, ok := z.prefix(e, "一个", "个", "一"); ok {
		e = e2
	}
	if _, e, ok = z.prefix(e, "星期", "礼拜", "周"); !ok {
		return fail()
	}
	c := z.cal
	if wd, e2, ok := z.weekdayChar(e); ok {
		return e2, c.weekdayOfWeek(off, wd), true
	}
	if e2, ok := z.lit(e, "末"); ok {
		return e2, c.weekendOffset(off), true
	}
	if next, _ := z.runeAt(e); strings.ContainsRune(weekBlockers, next) {
		return fail()
	}
	return e, c.weekOffset(off), true
}

// relMonth reads a month from this one: 上个月, 上月, 这个月, 本月, 下个月, 上上个月;
// with a day after it, that day (上个月5号); with a part, that part (上个月底).
// A bare 上月 or 下月 before 球, 亮, 光 or 台 is not a month ("上月球").
func (z *chinese) relMonth(pos int) (int, span, bool) {
	off, e, ok := z.relPrefix(pos)
	if !ok {
		return fail()
	}
	e, counted := z.lit(e, "个")
	if e, ok = z.lit(e, "月"); !ok {
		return fail()
	}
	if next, _ := z.runeAt(e); !counted && strings.ContainsRune("球亮光台", next) {
		return fail()
	}
	c := z.cal
	whole := c.monthOffset(off)
	y, mm, _ := whole.since.Date()
	m := int(mm)
	var b best
	b.offer(e, whole, true)
	if d, e2, ok := z.dayOfMonth(e); ok && d <= daysIn(y, m) {
		b.offer(e2, rel(c.day(y, m, d)), true)
	}
	if third, e2, ok := z.monthPart(e); ok {
		b.offer(e2, rel(c.monthThird(y, m, third)), true)
	}
	return b.end, b.sp, b.ok
}

// relQuarter reads 上个季度, 本季度, 这个季度, 下季度.
func (z *chinese) relQuarter(pos int) (int, span, bool) {
	off, e, ok := z.relPrefix(pos)
	if !ok {
		return fail()
	}
	e, _ = z.lit(e, "个")
	if e, ok = z.lit(e, "季度"); !ok {
		return fail()
	}
	return e, z.cal.quarterOffset(off), true
}

// weekday reads a bare weekday, 周三, 星期三, 礼拜天, as that day of the current
// ISO week, whether before or after today. After 每 (every), a numeral (一周三次)
// or a week prefix it is not read here.
func (z *chinese) weekday(pos int) (int, span, bool) {
	prev := z.prevRune(pos)
	if _, digit := arabicDigit(prev); digit || isNumeral(prev) || strings.ContainsRune(weekdayBlockers, prev) {
		return fail()
	}
	_, e, ok := z.prefix(pos, "星期", "礼拜", "周")
	if !ok {
		return fail()
	}
	wd, e, ok := z.weekdayChar(e)
	if !ok {
		return fail()
	}
	return e, z.cal.weekdayOfWeek(0, wd), true
}

// ago reads 三天前, 3天前, 两周前, 两个星期前, 一个月前, 两年前, 几天前 (three),
// 半年前 (the month six months back), 半个月前 (the week two weeks back), with
// 前, 以前 or 之前: the calendar unit holding today minus that many units.
func (z *chinese) ago(pos int) (int, span, bool) {
	if !z.startsFree(pos) {
		return fail()
	}
	n, half, e, ok := z.count(pos)
	if !ok {
		return fail()
	}
	u, e, ok := z.unit(e, false)
	if !ok {
		return fail()
	}
	if _, e, ok = z.prefix(e, "以前", "之前", "前"); !ok {
		return fail()
	}
	sp, ok := z.cal.ago(n, half, u)
	return e, sp, ok
}

// spanBack reads 最近三天, 过去两周, 近一个月, 过去一年, 最近几天, 近半年, with an
// optional 内, 里, 以来, 来 or 中 after: a range from the day that many units back
// to the end of today. 最近 without a count is vague and not read.
func (z *chinese) spanBack(pos int) (int, span, bool) {
	_, e, ok := z.prefix(pos, "最近的", "过去的", "最近", "过去", "近")
	if !ok || e-pos == len("近") && strings.ContainsRune(nearBlockers, z.prevRune(pos)) {
		return fail()
	}
	n, half, e, ok := z.count(e)
	if !ok {
		return fail()
	}
	u, e, ok := z.unit(e, true)
	if !ok {
		return fail()
	}
	if _, e2, ok := z.prefix(e, "以来", "之内", "以内", "内", "里", "来", "中"); ok {
		e = e2
	}
	sp, ok := z.cal.spanBack(n, half, u)
	return e, sp, ok
}

// decade reads 90年代, 九十年代 (the latest decade ending in 90 that has begun)
// and 1990年代.
func (z *chinese) decade(pos int) (int, span, bool) {
	if !z.startsFree(pos) {
		return fail()
	}
	v, e, digits, form, ok := z.number(pos)
	if !ok || v%yearsPerDecade != 0 {
		return fail()
	}
	if e, ok = z.lit(e, "年代"); !ok {
		return fail()
	}
	c := z.cal
	switch {
	case form == formArabic && digits == 2, form == formUnits && v >= 10 && v < yearsPerCentury:
		return e, rel(c.decade(c.twoDigitDecade(v))), true
	case form != formUnits && digits == 4:
		return e, c.decade(v), true
	}
	return fail()
}
