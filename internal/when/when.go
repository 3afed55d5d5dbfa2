// Package when parses the points in time a query's since and until take: an
// RFC 3339 timestamp, a date, or an age before now such as "7d" or "36h".
package when

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"
)

// day is the unit of the "Nd" form.
const day = 24 * time.Hour

// MaxDays is the longest age the "Nd" form takes: the most whole days a
// time.Duration holds (about 292 years). A longer age is refused rather than
// wrapped around into the future.
const MaxDays = math.MaxInt64 / int64(day)

// Parse reads s as an RFC 3339 timestamp ("2026-11-30T08:00:00Z"), a date
// ("2026-11-30", midnight UTC), or an age before now: whole days ("7d") or a
// Go duration ("36h", "90m"). Ages are never negative. The zero instant
// (0001-01-01T00:00:00Z, or the date 0001-01-01) is refused: callers read a
// zero time as "not given", so it would silently become now.
func Parse(s string, now time.Time) (time.Time, error) {
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		t, err = time.Parse(time.DateOnly, s)
	}
	if err == nil {
		if t.IsZero() {
			return time.Time{}, fmt.Errorf("%q is the zero time, outside the years 1678 to 2261 a store can hold", s)
		}
		return t, nil
	}
	if n, ok := strings.CutSuffix(s, "d"); ok {
		d, err := strconv.ParseInt(n, 10, 64)
		switch {
		case err == nil && d >= 0 && d <= MaxDays:
			return now.Add(-time.Duration(d) * day), nil
		case err == nil && d > MaxDays, errors.Is(err, strconv.ErrRange) && !strings.HasPrefix(n, "-"):
			return time.Time{}, fmt.Errorf("age %q is longer than %d days, the most a duration holds", s, MaxDays)
		}
	}
	if d, err := time.ParseDuration(s); err == nil && d >= 0 {
		return now.Add(-d), nil
	}
	return time.Time{}, fmt.Errorf("%q is not RFC 3339, YYYY-MM-DD or an age such as 7d", s)
}
