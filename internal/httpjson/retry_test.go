package httpjson

import (
	"math"
	"net/http"
	"testing"
	"time"
)

func TestRetryAfter(t *testing.T) {
	now := time.Date(2025, 6, 1, 12, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		name   string
		in     string
		want   time.Duration
		wantOK bool
	}{
		{"empty", "", 0, false},
		{"seconds", "2", 2 * time.Second, true},
		{"spaces", " 1 ", time.Second, true},
		{"zero", "0", 0, true},
		{"long wait kept for the caller to cap", "3600", time.Hour, true},
		{"huge saturates", "99999999999999999999", math.MaxInt64, true},
		{"negative", "-1", 0, false},
		{"signed", "+5", 0, false},
		{"fraction", "1.5", 0, false},
		{"http date", now.Add(3 * time.Second).Format(http.TimeFormat), 3 * time.Second, true},
		{"past date", now.Add(-time.Hour).Format(http.TimeFormat), 0, true},
		{"garbage", "soon", 0, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, ok := retryAfter(tc.in, now)
			if got != tc.want || ok != tc.wantOK {
				t.Fatalf("retryAfter(%q) = %s, %v; want %s, %v", tc.in, got, ok, tc.want, tc.wantOK)
			}
		})
	}
}

func TestDelay(t *testing.T) {
	c := &Client{BaseDelay: 100 * time.Millisecond, MaxDelay: time.Second, MaxRetryAfter: 2 * time.Second}
	for _, tc := range []struct {
		name     string
		c        *Client
		n        int
		after    time.Duration
		min, max time.Duration
	}{
		{"first", c, 1, -1, 50 * time.Millisecond, 100 * time.Millisecond},
		{"second doubles", c, 2, -1, 100 * time.Millisecond, 200 * time.Millisecond},
		{"third", c, 3, -1, 200 * time.Millisecond, 400 * time.Millisecond},
		{"capped", c, 10, -1, 500 * time.Millisecond, time.Second},
		{"no overflow", c, 200, -1, 500 * time.Millisecond, time.Second},
		{"retry-after wins", c, 1, 1500 * time.Millisecond, 1500 * time.Millisecond, 1500 * time.Millisecond},
		{"retry-after capped", c, 1, time.Hour, 2 * time.Second, 2 * time.Second},
		{"retry-after saturated", c, 1, math.MaxInt64, 2 * time.Second, 2 * time.Second},
		{"retry-after zero", c, 3, 0, 0, 0},
		{"retry-after cap defaults to MaxDelay", &Client{MaxDelay: time.Second}, 1, time.Hour, time.Second, time.Second},
		{"zero client uses defaults", &Client{}, 1, -1, DefaultBaseDelay / 2, DefaultBaseDelay},
		{"default cap", &Client{}, 40, -1, DefaultMaxDelay / 2, DefaultMaxDelay},
	} {
		t.Run(tc.name, func(t *testing.T) {
			seen := map[time.Duration]bool{}
			for range 200 {
				d := tc.c.delay(tc.n, tc.after)
				if d < tc.min || d > tc.max {
					t.Fatalf("delay %s outside [%s, %s]", d, tc.min, tc.max)
				}
				seen[d] = true
			}
			if tc.after < 0 && len(seen) < 10 {
				t.Fatalf("only %d distinct delays: no jitter", len(seen))
			}
		})
	}
}

func TestOrDefault(t *testing.T) {
	for _, tc := range []struct {
		name        string
		timeout     time.Duration
		retries     int
		wantTimeout time.Duration
		wantRetries int
	}{
		{"zeros mean defaults", 0, 0, time.Minute, 3},
		{"set values kept", time.Second, 5, time.Second, 5},
		{"negative timeout means default", -time.Second, 1, time.Minute, 1},
		{"negative retries mean none", time.Second, -1, time.Second, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d, n := OrDefault(tc.timeout, time.Minute, tc.retries, 3)
			if d != tc.wantTimeout || n != tc.wantRetries {
				t.Fatalf("OrDefault = %s, %d; want %s, %d", d, n, tc.wantTimeout, tc.wantRetries)
			}
		})
	}
}

func FuzzRetryAfter(f *testing.F) {
	for _, s := range []string{"", "0", "1", "120", "99999999999999999999", "-1", "Wed, 21 Oct 2015 07:28:00 GMT", "soon"} {
		f.Add(s)
	}
	now := time.Date(2015, 10, 21, 7, 0, 0, 0, time.UTC)
	c := &Client{MaxDelay: time.Second, MaxRetryAfter: 5 * time.Second}
	f.Fuzz(func(t *testing.T, s string) {
		d, ok := retryAfter(s, now)
		if d < 0 || !ok && d != 0 {
			t.Fatalf("retryAfter(%q) = %s, %v", s, d, ok)
		}
		if ok {
			if w := c.delay(1, d); w < 0 || w > c.MaxRetryAfter {
				t.Fatalf("wait %s for Retry-After %q not capped", w, s)
			}
		}
	})
}
