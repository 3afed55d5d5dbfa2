package main

import (
	"strings"
	"testing"
	"time"
)

func TestLongPrompt(t *testing.T) {
	for _, n := range []int{100, 4096, 5 << 20} {
		p := string(longPrompt(n, "what changed?"))
		if len(p) != n || !strings.HasSuffix(p, "\nwhat changed?") {
			t.Errorf("longPrompt(%d): %d bytes ending %q", n, len(p), p[max(0, len(p)-20):])
		}
	}
}

func TestMedian(t *testing.T) {
	ms := func(v ...int) []time.Duration {
		d := make([]time.Duration, len(v))
		for i, x := range v {
			d[i] = time.Duration(x) * time.Millisecond
		}
		return d
	}
	tests := []struct {
		in   []time.Duration
		want time.Duration
	}{
		{ms(5), 5 * time.Millisecond},
		{ms(1, 2, 9), 2 * time.Millisecond},
		{ms(1, 2, 4, 9), 3 * time.Millisecond},
	}
	for _, tc := range tests {
		if got := median(tc.in); got != tc.want {
			t.Errorf("median(%v) = %v, want %v", tc.in, got, tc.want)
		}
	}
}

func TestCheck(t *testing.T) {
	tests := []struct {
		name string
		c    config
		want string
	}{
		{"no db", config{engram: "sh", n: 1}, "-db"},
		{"no calls", config{engram: "sh", db: "main.go", n: 0}, "-n 0"},
		{"negative big", config{engram: "sh", db: "main.go", n: 1, big: -1}, "-big -1"},
		{"big shorter than the query", config{engram: "sh", db: "main.go", n: 1, big: 3, query: "a longer query"}, "-big 3"},
		{"missing db", config{engram: "sh", db: "absent.db", n: 1}, "absent.db"},
		{"missing binary", config{engram: "engram-that-is-not-there", db: "main.go", n: 1}, "-engram"},
		{"missing binary to compare", config{engram: "sh", against: "engram-that-is-not-there", db: "main.go", n: 1}, "-against"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if err := tc.c.check(); err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("check() = %v, want an error naming %q", err, tc.want)
			}
		})
	}
}
