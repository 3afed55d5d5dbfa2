package when

import (
	"strings"
	"testing"
	"time"
)

func TestParse(t *testing.T) {
	now := time.Date(2026, 11, 30, 8, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		name, in string
		want     time.Time
		err      string // a part of the error; "" means no error
	}{
		{"date", "2026-01-02", time.Date(2026, 1, 2, 0, 0, 0, 0, time.UTC), ""},
		{"rfc3339", "2026-01-02T03:04:05Z", time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC), ""},
		{"rfc3339 offset", "2026-01-02T03:04:05.5+02:00", time.Date(2026, 1, 2, 1, 4, 5, 5e8, time.UTC), ""},
		{"days", "7d", now.Add(-7 * 24 * time.Hour), ""},
		{"zero days", "0d", now, ""},
		{"plus days", "+2d", now.Add(-2 * 24 * time.Hour), ""},
		{"hours", "36h", now.Add(-36 * time.Hour), ""},
		{"minutes", "90m", now.Add(-90 * time.Minute), ""},
		{"most days", "106751d", now.Add(-106751 * 24 * time.Hour), ""},
		{"one day too many", "106752d", time.Time{}, "longer than 106751 days"},
		{"far too many days", "99999999999d", time.Time{}, "longer than 106751 days"},
		{"days past int64", "99999999999999999999d", time.Time{}, "longer than 106751 days"},
		{"hours past int64", "9999999999h", time.Time{}, "not RFC 3339"},
		{"negative days", "-3d", time.Time{}, "not RFC 3339"},
		{"negative duration", "-3h", time.Time{}, "not RFC 3339"},
		{"bare d", "d", time.Time{}, "not RFC 3339"},
		{"word", "yesterday", time.Time{}, "not RFC 3339"},
		{"empty", "", time.Time{}, "not RFC 3339"},
		// A zero time reads as "not given" (now) downstream: refused here.
		{"zero instant", "0001-01-01T00:00:00Z", time.Time{}, "is the zero time"},
		{"zero date", "0001-01-01", time.Time{}, "is the zero time"},
		{"just after zero", "0001-01-01T00:00:01Z", time.Date(1, 1, 1, 0, 0, 1, 0, time.UTC), ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := Parse(tc.in, now)
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("Parse(%q) = %v, %v; want an error with %q", tc.in, got, err, tc.err)
				}
				return
			}
			if err != nil || !got.Equal(tc.want) {
				t.Fatalf("Parse(%q) = %v, %v; want %v", tc.in, got, err, tc.want)
			}
		})
	}
}

// FuzzParse: Parse never panics, and an age never lands after now.
func FuzzParse(f *testing.F) {
	for _, s := range []string{"7d", "106752d", "36h", "2026-01-02", "2026-01-02T03:04:05Z", "-1d", "+0d", "1e9h"} {
		f.Add(s)
	}
	now := time.Date(2026, 11, 30, 8, 0, 0, 0, time.UTC)
	f.Fuzz(func(t *testing.T, s string) {
		got, err := Parse(s, now)
		if err != nil {
			return
		}
		if _, rfc := time.Parse(time.RFC3339Nano, s); rfc == nil {
			return
		}
		if _, date := time.Parse(time.DateOnly, s); date == nil {
			return
		}
		if got.After(now) {
			t.Fatalf("Parse(%q) = %v, after now %v", s, got, now)
		}
	})
}
