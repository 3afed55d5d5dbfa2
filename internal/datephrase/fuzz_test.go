package datephrase

import (
	"reflect"
	"strings"
	"testing"
	"time"
)

// fuzzZones are the locations FuzzFind reads its reference time in: UTC, no
// DST, DST at 2:00, DST at midnight (São Paulo until 2019), a skipped day
// (Apia, 2011-12-30), UTC+14 and a 45-minute offset.
var fuzzZones = []string{
	"UTC", "Asia/Shanghai", "America/New_York", "America/Sao_Paulo",
	"Pacific/Apia", "Pacific/Kiritimati", "Asia/Kathmandu",
}

// slowFindBudget is how long one Find may take on a fuzz input before the
// input counts as pathological: a fixed allowance plus a per-byte one, both far
// above the linear cost (about a microsecond per 10 bytes) so that only a
// blow-up fails.
const (
	slowFindBase    = time.Second
	slowFindPerByte = 100 * time.Microsecond
)

// FuzzFind checks that Find never panics and that its answer is always well
// formed (see checkWindows), deterministic and quick, for any text and any
// reference time in any of fuzzZones.
func FuzzFind(f *testing.F) {
	locs := make([]*time.Location, len(fuzzZones))
	for i, name := range fuzzZones {
		locs[i] = location(f, name)
	}
	zoneOf := func(loc *time.Location) uint8 {
		for i, name := range fuzzZones {
			if loc.String() == name {
				return uint8(i)
			}
		}
		return 0
	}
	for _, tc := range findCases(f) {
		f.Add(tc.text, tc.now.Unix(), zoneOf(tc.now.Location()))
	}
	for _, s := range []string{
		strings.Repeat("the past ", 50), strings.Repeat("from 2020 to ", 30), strings.Repeat("1-", 40),
		strings.Repeat("一", 30), strings.Repeat("上上", 20), "２０２３年１２月３１日", "9999999999999 days ago",
		"\xff\xfe May 8, 2023 \xe5\xb9", "Monday, Monday, the 9th of", "between between 2020 and and 2021",
	} {
		f.Add(s, friday.Unix(), uint8(0))
	}
	// A reference time in Apia's skipped day, and one far outside the years a window may touch.
	f.Add("today yesterday this week 12月30日", time.Date(2011, 12, 30, 12, 0, 0, 0, time.UTC).Unix(), uint8(4))
	f.Add("today in 2023 last year", int64(1)<<62, uint8(0))

	f.Fuzz(func(t *testing.T, text string, sec int64, zone uint8) {
		now := time.Unix(sec, 0).In(locs[int(zone)%len(locs)])
		start := time.Now()
		got := Find(text, now)
		if took, budget := time.Since(start), slowFindBase+time.Duration(len(text))*slowFindPerByte; took > budget {
			t.Fatalf("Find on %d bytes took %v, over %v", len(text), took, budget)
		}
		checkWindows(t, text, now, got)
		if again := Find(text, now); !reflect.DeepEqual(got, again) {
			t.Fatalf("Find(%q, %v) = %s, then %s", text, now, describe(got), describe(again))
		}
	})
}

// TestFindLinear checks that Find's time grows linearly with the text on
// inputs built to make a scanner backtrack: sixteen times the text may take at
// most linearGrowthLimit times as long (a quadratic scanner takes 256 times).
func TestFindLinear(t *testing.T) {
	if testing.Short() {
		t.Skip("timing test")
	}
	const (
		small             = 8 << 10
		large             = 16 * small
		linearGrowthLimit = 64
		tries             = 5
	)
	var all strings.Builder
	for _, tc := range findCases(t) {
		all.WriteString(tc.text)
		all.WriteString(" ")
	}
	for _, unit := range []string{
		all.String(), "the past ", "from 2020 to ", "1-", "2023-", "一", "上上", "１", "May 9, ", "a couple of ",
		"9", "'", "Q3 ", "the ", "between ", "最近", "去年去年", "mid-", "twenty-",
	} {
		fastest := func(n int) time.Duration {
			text := strings.Repeat(unit, n/len(unit)+1)[:n]
			best := time.Duration(1<<63 - 1)
			for range tries {
				start := time.Now()
				Find(text, friday)
				best = min(best, time.Since(start))
			}
			return max(best, time.Microsecond)
		}
		a, b := fastest(small), fastest(large)
		if b > linearGrowthLimit*a {
			t.Errorf("%.20q: %d bytes took %v, %d bytes %v (%.0fx)", unit, small, a, large, b, float64(b)/float64(a))
		}
		t.Logf("%.20q: %d bytes took %v, %d bytes %v (%.0fx)", unit, small, a, large, b, float64(b)/float64(a))
	}
}
