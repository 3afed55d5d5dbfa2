package httpapi

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/engram-memory/engram"
)

// hugePrompt is n bytes of pseudo-random words (a pasted blob) with a
// sentence about a cluster upgrade repeated through it.
func hugePrompt(n int) string {
	var b strings.Builder
	b.Grow(n + 64)
	x := uint32(25)
	for i := 0; b.Len() < n; i++ {
		if i%50 == 0 {
			b.WriteString("the kubernetes cluster upgrade failed on the staging nodes. ")
			continue
		}
		for range 3 + i%8 {
			x = x*1664525 + 1013904223
			b.WriteByte(byte('a' + x>>24%26))
		}
		b.WriteByte(' ')
	}
	return b.String()[:n]
}

// TestLongQuery: a 5 MB search and inject over real HTTP answer, degraded,
// and within the request timeout by a generous bound; a 503 timeout is the
// only other answer allowed.
func TestLongQuery(t *testing.T) {
	db := openDB(t, false)
	if _, err := db.Add(context.Background(), &engram.Memory{Text: "The kubernetes cluster upgrade needs the staging nodes drained first"},
		&engram.Memory{Text: "Lunch is at noon on Fridays"}); err != nil {
		t.Fatal(err)
	}
	const timeout = 2 * time.Second
	_, ts := startServer(t, db, Config{RequestTimeout: timeout})
	prompt := hugePrompt(5 << 20)
	for _, c := range []struct {
		path string
		body map[string]any
	}{
		{"/v1/search", map[string]any{"query": prompt, "no_record": true}},
		{"/v1/inject", map[string]any{"prompt": prompt, "min_relevance": 0.01}},
	} {
		t.Run(c.path, func(t *testing.T) {
			start := time.Now()
			r := call(t, ts.Client(), ts.URL, "POST", c.path, "", c.body)
			if took := time.Since(start); took > timeout+10*time.Second {
				t.Errorf("%s took %v against a request timeout of %v", c.path, took, timeout)
			}
			if r.status == http.StatusServiceUnavailable && r.errCode() == CodeTimeout {
				return // kept its deadline on a slow machine
			}
			var resp struct {
				Reduced  *struct{ Kept []string }
				Degraded []engram.Degraded
				Results  []engram.Result
			}
			mustJSON(t, r, http.StatusOK, &resp)
			found := false
			for _, d := range resp.Degraded {
				found = found || d.Stage == "query" && strings.Contains(d.Reason, "long query")
			}
			if !found || len(resp.Results) == 0 || !strings.Contains(resp.Results[0].Text, "kubernetes") {
				t.Errorf("degraded %v, results %d: want a long-query entry and the upgrade memory first", resp.Degraded, len(resp.Results))
			}
			if c.path == "/v1/search" && (resp.Reduced == nil || len(resp.Reduced.Kept) == 0) {
				t.Errorf("reduced %v: want the kept terms", resp.Reduced)
			}
			if len(r.body) > len(prompt)+64<<10 {
				t.Errorf("answer of %d bytes for a prompt of %d", len(r.body), len(prompt))
			}
		})
	}
}
