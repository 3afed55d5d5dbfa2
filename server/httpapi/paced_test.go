package httpapi

import (
	"testing"
	"time"
)

// deadlines records the read deadlines a paced body sets.
type deadlines struct{ last time.Time }

func (d *deadlines) SetReadDeadline(t time.Time) error { d.last = t; return nil }

// chunks is a body that yields n bytes a read, advancing the clock by
// every for each.
type chunks struct {
	clock *time.Time
	n     int
	every time.Duration
}

func (c *chunks) Read(b []byte) (int, error) {
	*c.clock = c.clock.Add(c.every)
	return min(c.n, len(b)), nil
}

func (c *chunks) Close() error { return nil }

// TestPacedAllowance: an import body's read deadline is never more than the
// grace ahead, however much arrived before: a client that sent 64 MiB in a
// second cannot then trickle for the 17 minutes those bytes would once have
// bought; one that keeps MinStreamRate is never due before its next chunk,
// and one at half of it falls due within a bounded time.
func TestPacedAllowance(t *testing.T) {
	const grace = 30 * time.Second
	start := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	cases := []struct {
		name  string
		chunk int
		every time.Duration
		reads int
		check func(t *testing.T, i int, now, due time.Time)
	}{
		{"a burst buys no more than the grace", 32 << 10, time.Second / 2048, 2048, func(t *testing.T, i int, now, due time.Time) {
			if due.After(now.Add(grace)) {
				t.Fatalf("read %d at %v: due %v, more than the grace ahead", i, now.Sub(start), due.Sub(now))
			}
		}},
		{"at the minimum rate, never due before the next chunk", MinStreamRate / 4, time.Second / 4, 4 * 600, func(t *testing.T, i int, now, due time.Time) {
			if next := now.Add(time.Second / 4); due.Before(next) {
				t.Fatalf("read %d at %v: due %v before the next chunk", i, now.Sub(start), due.Sub(now))
			}
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			now := start
			d := &deadlines{}
			p := &paced{ReadCloser: &chunks{clock: &now, n: c.chunk, every: c.every}, rc: d, grace: grace, due: start.Add(grace),
				now: func() time.Time { return now }}
			buf := make([]byte, 64<<10)
			for i := range c.reads {
				if _, err := p.Read(buf); err != nil {
					t.Fatal(err)
				}
				c.check(t, i, now, d.last)
			}
		})
	}
	t.Run("at half the minimum rate, due within twice the grace", func(t *testing.T) {
		now := start
		d := &deadlines{}
		body := &chunks{clock: &now, n: MinStreamRate / 8, every: time.Second / 4}
		p := &paced{ReadCloser: body, rc: d, grace: grace, due: start.Add(grace), now: func() time.Time { return now }}
		buf := make([]byte, 64<<10)
		// A fast first megabyte, then half the rate.
		fast := &chunks{clock: &now, n: 32 << 10, every: time.Millisecond}
		p.ReadCloser = fast
		for range 32 {
			p.Read(buf)
		}
		p.ReadCloser = body
		for i := 0; ; i++ {
			p.Read(buf)
			if d.last.Before(now.Add(time.Second / 4)) {
				if late := now.Sub(start); late > 2*grace+time.Second {
					t.Fatalf("a body at half the rate fell due only after %v", late)
				}
				return
			}
			if i > 100000 {
				t.Fatal("a body at half the rate never falls due")
			}
		}
	})
}
