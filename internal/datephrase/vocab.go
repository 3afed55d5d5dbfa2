package datephrase

// The English vocabulary: every word a rule reads, with what it names.

import "time"

// wordClass says what a known word names.
type wordClass uint8

const (
	wNone      wordClass = iota
	wMonth               // a full month name; val 1 … 12
	wMonthAbbr           // an abbreviated month name, read only next to a day or a year; val 1 … 12
	wWeekday             // val: ISO weekday, 0 Monday … 6 Sunday
	wNumber              // one … ninety; val its value
	wOrdinal             // first … thirtieth; val its value ("second" is a unit)
	wUnit                // val: a unit
	wSeason              // val: spring … winter
	wKey                 // val: a key
)

// lex is a known word: its class and its value within the class.
type lex struct {
	cls wordClass
	val int8
}

// unit is a length of time that counts and modifiers apply to.
type unit int8

const (
	uNone unit = iota
	uSecond
	uMinute
	uHour
	uDay
	uWeek
	uMonth
	uYear
	uDecade
)

// duration is the length of the units shorter than a day.
func (u unit) duration() time.Duration {
	switch u {
	case uSecond:
		return time.Second
	case uMinute:
		return time.Minute
	case uHour:
		return time.Hour
	}
	return 0
}

// key is a function word or time word: neither a month, a weekday, a number nor a unit.
type key int8

const (
	kNone key = iota
	kIn
	kOn
	kDuring
	kSince
	kFrom
	kOf
	kBy
	kAround
	kThroughout
	kWithin
	kOver
	kFor
	kThe
	kThis
	kLast
	kNext
	kPast
	kPrevious
	kAgo
	kBefore
	kAfter
	kEarly
	kMid
	kLate
	kBeginning
	kStart
	kEnd
	kMiddle
	kToday
	kTonight
	kTomorrow
	kYesterday
	kMorning
	kAfternoon
	kEvening
	kNight
	kWeekend
	kQuarter
	kA
	kAn
	kCouple
	kFew
	kHalf
	kHundred
	kAnd
	kTo
	kUntil
	kThrough
	kBetween
	kS // the s of "1990's"
)

// lookup finds the lower-case word w.
func lookup(w string) lex {
	switch w {
	case "january":
		return lex{wMonth, 1}
	case "february":
		return lex{wMonth, 2}
	case "march":
		return lex{wMonth, 3}
	case "april":
		return lex{wMonth, 4}
	case "may":
		return lex{wMonth, 5}
	case "june":
		return lex{wMonth, 6}
	case "july":
		return lex{wMonth, 7}
	case "august":
		return lex{wMonth, 8}
	case "september":
		return lex{wMonth, 9}
	case "october":
		return lex{wMonth, 10}
	case "november":
		return lex{wMonth, 11}
	case "december":
		return lex{wMonth, 12}
	case "jan":
		return lex{wMonthAbbr, 1}
	case "feb":
		return lex{wMonthAbbr, 2}
	case "mar":
		return lex{wMonthAbbr, 3}
	case "apr":
		return lex{wMonthAbbr, 4}
	case "jun":
		return lex{wMonthAbbr, 6}
	case "jul":
		return lex{wMonthAbbr, 7}
	case "aug":
		return lex{wMonthAbbr, 8}
	case "sep", "sept":
		return lex{wMonthAbbr, 9}
	case "oct":
		return lex{wMonthAbbr, 10}
	case "nov":
		return lex{wMonthAbbr, 11}
	case "dec":
		return lex{wMonthAbbr, 12}

	case "monday":
		return lex{wWeekday, 0}
	case "tuesday":
		return lex{wWeekday, 1}
	case "wednesday":
		return lex{wWeekday, 2}
	case "thursday":
		return lex{wWeekday, 3}
	case "friday":
		return lex{wWeekday, 4}
	case "saturday":
		return lex{wWeekday, 5}
	case "sunday":
		return lex{wWeekday, 6}

	case "one":
		return lex{wNumber, 1}
	case "two":
		return lex{wNumber, 2}
	case "three":
		return lex{wNumber, 3}
	case "four":
		return lex{wNumber, 4}
	case "five":
		return lex{wNumber, 5}
	case "six":
		return lex{wNumber, 6}
	case "seven":
		return lex{wNumber, 7}
	case "eight":
		return lex{wNumber, 8}
	case "nine":
		return lex{wNumber, 9}
	case "ten":
		return lex{wNumber, 10}
	case "eleven":
		return lex{wNumber, 11}
	case "twelve":
		return lex{wNumber, 12}
	case "thirteen":
		return lex{wNumber, 13}
	case "fourteen":
		return lex{wNumber, 14}
	case "fifteen":
		return lex{wNumber, 15}
	case "sixteen":
		return lex{wNumber, 16}
	case "seventeen":
		return lex{wNumber, 17}
	case "eighteen":
		return lex{wNumber, 18}
	case "nineteen":
		return lex{wNumber, 19}
	case "twenty":
		return lex{wNumber, 20}
	case "thirty":
		return lex{wNumber, 30}
	case "forty":
		return lex{wNumber, 40}
	case "fifty":
		return lex{wNumber, 50}
	case "sixty":
		return lex{wNumber, 60}
	case "seventy":
		return lex{wNumber, 70}
	case "eighty":
		return lex{wNumber, 80}
	case "ninety":
		return lex{wNumber, 90}

	case "first":
		return lex{wOrdinal, 1}
	case "third":
		return lex{wOrdinal, 3}
	case "fourth":
		return lex{wOrdinal, 4}
	case "fifth":
		return lex{wOrdinal, 5}
	case "sixth":
		return lex{wOrdinal, 6}
	case "seventh":
		return lex{wOrdinal, 7}
	case "eighth":
		return lex{wOrdinal, 8}
	case "ninth":
		return lex{wOrdinal, 9}
	case "tenth":
		return lex{wOrdinal, 10}
	case "eleventh":
		return lex{wOrdinal, 11}
	case "twelfth":
		return lex{wOrdinal, 12}
	case "thirteenth":
		return lex{wOrdinal, 13}
	case "fourteenth":
		return lex{wOrdinal, 14}
	case "fifteenth":
		return lex{wOrdinal, 15}
	case "sixteenth":
		return lex{wOrdinal, 16}
	case "seventeenth":
		return lex{wOrdinal, 17}
	case "eighteenth":
		return lex{wOrdinal, 18}
	case "nineteenth":
		return lex{wOrdinal, 19}
	case "twentieth":
		return lex{wOrdinal, 20}
	case "thirtieth":
		return lex{wOrdinal, 30}

	case "second", "seconds":
		return lex{wUnit, int8(uSecond)}
	case "minute", "minutes":
		return lex{wUnit, int8(uMinute)}
	case "hour", "hours":
		return lex{wUnit, int8(uHour)}
	case "day", "days":
		return lex{wUnit, int8(uDay)}
	case "week", "weeks":
		return lex{wUnit, int8(uWeek)}
	case "month", "months":
		return lex{wUnit, int8(uMonth)}
	case "year", "years":
		return lex{wUnit, int8(uYear)}
	case "decade", "decades":
		return lex{wUnit, int8(uDecade)}

	case "spring":
		return lex{wSeason, spring}
	case "summer":
		return lex{wSeason, summer}
	case "autumn", "fall":
		return lex{wSeason, autumn}
	case "winter":
		return lex{wSeason, winter}
	}
	return lookupKey(w)
}

// lookupKey finds the lower-case key word w.
func lookupKey(w string) lex {
	k := kNone
	switch w {
	case "in":
		k = kIn
	case "on":
		k = kOn
	case "during":
		k = kDuring
	case "since":
		k = kSince
	case "from":
		k = kFrom
	case "of":
		k = kOf
	case "by":
		k = kBy
	case "around":
		k = kAround
	case "throughout":
		k = kThroughout
	case "within":
		k = kWithin
	case "over":
		k = kOver
	case "for":
		k = kFor
	case "the":
		k = kThe
	case "this":
		k = kThis
	case "last":
		k = kLast
	case "next":
		k = kNext
	case "past":
		k = kPast
	case "previous":
		k = kPrevious
	case "ago":
		k = kAgo
	case "before":
		k = kBefore
	case "after":
		k = kAfter
	case "early":
		k = kEarly
	case "mid":
		k = kMid
	case "late":
		k = kLate
	case "beginning":
		k = kBeginning
	case "start":
		k = kStart
	case "end":
		k = kEnd
	case "middle":
		k = kMiddle
	case "today":
		k = kToday
	case "tonight":
		k = kTonight
	case "tomorrow":
		k = kTomorrow
	case "yesterday":
		k = kYesterday
	case "morning":
		k = kMorning
	case "afternoon":
		k = kAfternoon
	case "evening":
		k = kEvening
	case "night":
		k = kNight
	case "weekend":
		k = kWeekend
	case "quarter":
		k = kQuarter
	case "a":
		k = kA
	case "an":
		k = kAn
	case "couple":
		k = kCouple
	case "few":
		k = kFew
	case "half":
		k = kHalf
	case "hundred":
		k = kHundred
	case "and":
		k = kAnd
	case "to":
		k = kTo
	case "until", "till":
		k = kUntil
	case "through", "thru":
		k = kThrough
	case "between":
		k = kBetween
	case "s":
		k = kS
	default:
		return lex{}
	}
	return lex{wKey, int8(k)}
}
