package datephrase

// Chinese numbers, units and the text access the Chinese rules share.

import (
	"strings"
	"unicode/utf8"
)

// numForm is how a number is written.
type numForm uint8

const (
	formArabic numForm = iota + 1 // 2023, ２０２３
	formDigits                    // 二〇二三: one numeral per digit, for years
	formUnits                     // 二十三, 两千零二十三, 五: numerals with 十, 百, 千, or one numeral alone
)

// maxNumeralRunes bounds a run of Chinese numerals; longer runs are never a date
// part or a count.
const maxNumeralRunes = 8

// Rune sets.
const (
	// cnStarts are the runes a Chinese phrase may start with besides digits and
	// numerals (〇零一二两三四五六七八九十百千).
	cnStarts = "几半今昨前明后大上下这本去最过近周星礼"
	// relBlockers come before 前天, 后天, 前年, 后年 when those are not days or
	// years: 以后天 ("from then on, daily"), 之前年, 最后年.
	relBlockers = "以之然最先落提"
	// weekdayBlockers come before 周三 or 星期三 when that is not this week's
	// Wednesday: 每周三 (every Wednesday), 一周三次 (three times a week).
	weekdayBlockers = "每上下这本个第"
	// nearBlockers come before 近 when it is not "the last": 接近, 靠近, 将近, 附近, 临近.
	nearBlockers = "接靠将附临"
	// shiftBlockers come before 上 and 下 when those are not "last" and "next"
	// but end a word: 一下, 以上, 如下, 晚上, 早上, 马上, 线上, 地下, 楼上, 天下, 之上.
	shiftBlockers = "一以如晚早马线地楼天之"
	// weekBlockers follow 周 or 礼拜 when those are not a week: 周期 (cycle),
	// 周刊, 周边, 周围 (around), 周到, 周年, 周岁, 礼拜堂.
	weekBlockers = "期刊边围到年岁堂"
)

// chinese reads Chinese date phrases from the text itself, by byte offset.
type chinese struct {
	text string
	cal  cal
}

// mayStartChinese reports whether a Chinese phrase may start at a token whose
// first byte is b: a digit or a non-ASCII rune.
func mayStartChinese(b byte) bool { return isDigit(b) || b >= utf8.RuneSelf }

func (z *chinese) runeAt(pos int) (rune, int) {
	if pos >= len(z.text) {
		return utf8.RuneError, 0
	}
	return utf8.DecodeRuneInString(z.text[pos:])
}

func (z *chinese) prevRune(pos int) rune {
	if pos <= 0 {
		return utf8.RuneError
	}
	r, _ := utf8.DecodeLastRuneInString(z.text[:pos])
	return r
}

// lit returns the end of s when the text continues with s at pos.
func (z *chinese) lit(pos int, s string) (int, bool) {
	if strings.HasPrefix(z.text[pos:], s) {
		return pos + len(s), true
	}
	return pos, false
}

// prefix returns the index of the first of alts the text continues with at pos,
// and its end.
func (z *chinese) prefix(pos int, alts ...string) (int, int, bool) {
	rest := z.text[pos:]
	for k, a := range alts {
		if strings.HasPrefix(rest, a) {
			return k, pos + len(a), true
		}
	}
	return -1, pos, false
}

// startsFree reports whether a number may start at pos: the rune before it is
// not a digit, a numeral, a Latin letter, a decimal point or 第 (an ordinal), so
// "123年" is never read from its "23" nor "第三天" as a count.
func (z *chinese) startsFree(pos int) bool {
	r := z.prevRune(pos)
	_, digit := arabicDigit(r)
	return !digit && !isNumeral(r) && !(r < utf8.RuneSelf && isLetter(byte(r))) && r != '.' && r != '第' && r != '几'
}

// number reads a number at pos: Arabic digits (ASCII or fullwidth) or Chinese
// numerals. digits counts the digits or numerals read.
func (z *chinese) number(pos int) (val, end, digits int, form numForm, ok bool) {
	p := pos
	for {
		r, size := z.runeAt(p)
		dv, isDigit := arabicDigit(r)
		if !isDigit {
			break
		}
		if digits == maxNumDigits {
			return 0, 0, 0, 0, false
		}
		val, digits, p = val*10+dv, digits+1, p+size
	}
	if digits > 0 {
		return val, p, digits, formArabic, true
	}
	var rs [maxNumeralRunes]rune
	n := 0
	for {
		r, size := z.runeAt(p)
		if !isNumeral(r) {
			break
		}
		if n == maxNumeralRunes {
			return 0, 0, 0, 0, false
		}
		rs[n], n, p = r, n+1, p+size
	}
	if n == 0 {
		return 0, 0, 0, 0, false
	}
	val, form, ok = numeralValue(rs[:n])
	return val, p, n, form, ok
}

// numeralValue is the value of a run of Chinese numerals: digit by digit
// ("二〇二三" 2023) when it has no 十, 百 or 千, else by units ("两千零二十三"
// 2023, "十二" 12). 两 is two only as a count, never a digit of a year.
func numeralValue(rs []rune) (int, numForm, bool) {
	hasUnit := false
	for _, r := range rs {
		hasUnit = hasUnit || numeralUnit(r) > 0
	}
	if !hasUnit {
		if len(rs) == 1 {
			return numeralDigit(rs[0]), formUnits, true
		}
		v := 0
		for _, r := range rs {
			if r == '两' {
				return 0, 0, false
			}
			v = v*10 + numeralDigit(r)
		}
		return v, formDigits, true
	}
	total, cur, last := 0, -1, 1<<30
	for _, r := range rs {
		switch u := numeralUnit(r); {
		case u > 0:
			if u >= last {
				return 0, 0, false
			}
			if cur < 0 {
				if u != 10 || total != 0 {
					return 0, 0, false
				}
				cur = 1 // 十二: ten alone is one ten
			}
			total, cur, last = total+cur*u, -1, u
		case r == '零' || r == '〇':
			if cur >= 0 {
				return 0, 0, false
			}
		default:
			if cur >= 0 {
				return 0, 0, false
			}
			cur = numeralDigit(r)
		}
	}
	if cur >= 0 {
		total += cur
	}
	return total, formUnits, true
}

func numeralUnit(r rune) int {
	switch r {
	case '十':
		return 10
	case '百':
		return 100
	case '千':
		return 1000
	}
	return 0
}

func numeralDigit(r rune) int {
	switch r {
	case '一':
		return 1
	case '二', '两':
		return 2
	case '三':
		return 3
	case '四':
		return 4
	case '五':
		return 5
	case '六':
		return 6
	case '七':
		return 7
	case '八':
		return 8
	case '九':
		return 9
	}
	return 0
}

// isNumeral reports whether r is a Chinese numeral: 〇零一二两三四五六七八九十百千.
func isNumeral(r rune) bool {
	switch r {
	case '〇', '零', '一', '二', '两', '三', '四', '五', '六', '七', '八', '九', '十', '百', '千':
		return true
	}
	return false
}

// arabicDigit reads an ASCII or fullwidth digit.
func arabicDigit(r rune) (int, bool) {
	switch {
	case '0' <= r && r <= '9':
		return int(r - '0'), true
	case '０' <= r && r <= '９':
		return int(r - '０'), true
	}
	return 0, false
}

// smallNumber reads a number from lo to hi written in Arabic digits (at most
// two) or in numerals by units: a month, a day or a quarter. 两 is not read: "两月"
// is two months.
func (z *chinese) smallNumber(pos, lo, hi int) (int, int, bool) {
	if r, _ := z.runeAt(pos); r == '两' {
		return 0, 0, false
	}
	v, e, digits, form, ok := z.number(pos)
	if !ok || form == formDigits || form == formArabic && digits > 2 || v < lo || v > hi {
		return 0, 0, false
	}
	return v, e, true
}

// count reads how many units a phrase counts: a number, 几 (a few: three) or
// 半 (half: n is 1 and half is set). Numerals written digit by digit are not
// counts.
func (z *chinese) count(pos int) (n int, half bool, end int, ok bool) {
	if e, ok := z.lit(pos, "几"); ok {
		return 3, false, e, true
	}
	if e, ok := z.lit(pos, "半"); ok {
		return 1, true, e, true
	}
	v, e, _, form, ok := z.number(pos)
	if !ok || form == formDigits {
		return 0, false, 0, false
	}
	return v, false, e, true
}

// unit reads a unit of time after a count: 天, 周, 个星期, 个月, 年, 小时, 分钟, …;
// a bare 月 only when bareMonth ("近三月"), since "三月前" is "before March".
func (z *chinese) unit(pos int, bareMonth bool) (unit, int, bool) {
	words := [...]struct {
		word string
		u    unit
	}{
		{"个小时", uHour}, {"小时", uHour}, {"个钟头", uHour}, {"钟头", uHour},
		{"分钟", uMinute}, {"秒钟", uSecond}, {"秒", uSecond},
		{"个星期", uWeek}, {"星期", uWeek}, {"个礼拜", uWeek}, {"礼拜", uWeek}, {"周", uWeek},
		{"天", uDay}, {"日", uDay}, {"个月", uMonth}, {"年", uYear},
	}
	rest := z.text[pos:]
	for _, w := range words {
		if strings.HasPrefix(rest, w.word) {
			return w.u, pos + len(w.word), true
		}
	}
	if e, ok := z.lit(pos, "月"); ok && bareMonth {
		return uMonth, e, true
	}
	return uNone, 0, false
}

// weekdayChar reads the day after 周, 星期 or 礼拜: 一 … 六, 日 or 天 (Sunday).
// 一 before 共, 直, 起, … is "one", as in 上周一共 ("last week in all"), and
// 天 before 气 is weather.
func (z *chinese) weekdayChar(pos int) (int, int, bool) {
	r, size := z.runeAt(pos)
	next, _ := z.runeAt(pos + size)
	switch {
	case r == '日' || r == '天' && next != '气':
		return 6, pos + size, true
	case r == '一' && strings.ContainsRune("共直起样些般定切", next):
		return 0, 0, false
	case r >= '一' && strings.ContainsRune("一二三四五六", r):
		return numeralDigit(r) - 1, pos + size, true
	}
	return 0, 0, false
}

// relPrefix reads 上上, 上, 下下, 下, 这 or 本 as an offset from the current week,
// month or quarter.
func (z *chinese) relPrefix(pos int) (int, int, bool) {
	k, e, ok := z.prefix(pos, "上上", "下下", "上", "下", "这", "本")
	if !ok {
		return 0, 0, false
	}
	offsets := [...]int{-2, 2, -1, 1, 0, 0}
	if offsets[k] != 0 && strings.ContainsRune(shiftBlockers, z.prevRune(pos)) {
		return 0, 0, false
	}
	return offsets[k], e, true
}

// monthPart reads the part of a month after 月: 初 and 上旬 the early third, 中旬
// the middle, 下旬, 底 and 末 the late.
func (z *chinese) monthPart(pos int) (int, int, bool) {
	k, e, ok := z.prefix(pos, "初", "上旬", "中旬", "下旬", "底", "末")
	if !ok {
		return 0, 0, false
	}
	thirds := [...]int{0, 0, 1, 2, 2, 2}
	return thirds[k], e, true
}

// dayOfMonth reads a day after 月: 8日, 8号, 二十三号.
func (z *chinese) dayOfMonth(pos int) (int, int, bool) {
	d, e, ok := z.smallNumber(pos, 1, 31)
	if !ok {
		return 0, 0, false
	}
	if _, e, ok := z.prefix(e, "日", "号"); ok {
		return d, e, true
	}
	return 0, 0, false
}

// monthNum reads a month and its 月: 5月, 十二月.
func (z *chinese) monthNum(pos int) (int, int, bool) {
	m, e, ok := z.smallNumber(pos, 1, monthsPerYear)
	if !ok {
		return 0, 0, false
	}
	if e, ok := z.lit(e, "月"); ok {
		return m, e, true
	}
	return 0, 0, false
}
