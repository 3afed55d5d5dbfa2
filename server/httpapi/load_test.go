package httpapi

import (
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/engram-memory/engram"
)

// TestLoad: 16 concurrent clients on loopback, two tenants, mixing searches
// and writes for 30 s (5 s under the race detector) with zero errors; then
// every acknowledged write is present with its content, in its tenant only.
func TestLoad(t *testing.T) {
	if testing.Short() {
		t.Skip("load test: skipped with -short")
	}
	const clients = 16
	dur := 30 * time.Second
	if raceEnabled {
		dur = 5 * time.Second
	}
	db := openDB(t, true)
	_, ts := startServer(t, db, Config{Keys: testKeys})
	tr := &http.Transport{MaxIdleConnsPerHost: clients, MaxConnsPerHost: clients}
	defer tr.CloseIdleConnections()
	hc := &http.Client{Transport: tr, Timeout: time.Minute}

	// A base of memories so that searches have something to rank.
	for _, key := range []string{keyA, keyB} {
		mems := make([]map[string]any, 200)
		for i := range mems {
			mems[i] = map[string]any{"text": fmt.Sprintf("seed memory %d about %s", i, topics[i%len(topics)])}
		}
		mustJSON(t, call(t, hc, ts.URL, "POST", "/v1/memories", key, map[string]any{"memories": mems}), http.StatusCreated, nil)
	}

	type result struct {
		lat     []time.Duration
		written map[string]string // id → text
		errs    []string
		key     string
	}
	results := make([]result, clients)
	deadline := time.Now().Add(dur)
	start := time.Now()
	var wg sync.WaitGroup
	for c := range clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			res := &results[c]
			res.written = map[string]string{}
			res.key = keyA
			if c%2 == 1 {
				res.key = keyB
			}
			for op := 0; time.Now().Before(deadline); op++ {
				var (
					r     reply
					err   error
					texts []string
				)
				t0 := time.Now()
				switch {
				case op%10 == 9: // a batch of three
					texts = []string{fmt.Sprintf("client %d op %d batch 0 %s", c, op, topics[op%len(topics)]),
						fmt.Sprintf("client %d op %d batch 1", c, op), fmt.Sprintf("client %d op %d batch 2", c, op)}
					mems := []map[string]string{{"text": texts[0]}, {"text": texts[1]}, {"text": texts[2]}}
					r, err = send(hc, ts.URL, "POST", "/v1/memories", res.key, map[string]any{"memories": mems})
				case op%3 == 0:
					texts = []string{fmt.Sprintf("client %d op %d wrote about %s", c, op, topics[op%len(topics)])}
					r, err = send(hc, ts.URL, "POST", "/v1/memories", res.key, map[string]string{"text": texts[0]})
				default:
					r, err = send(hc, ts.URL, "POST", "/v1/search", res.key, map[string]any{"query": topics[(op+c)%len(topics)], "limit": 10})
				}
				res.lat = append(res.lat, time.Since(t0))
				want := http.StatusOK
				if texts != nil {
					want = http.StatusCreated
				}
				if err != nil {
					res.errs = append(res.errs, fmt.Sprintf("client %d op %d: %v", c, op, err))
					continue
				}
				if r.status != want {
					res.errs = append(res.errs, fmt.Sprintf("client %d op %d: %d %s", c, op, r.status, r.body))
					continue
				}
				if texts != nil {
					var added engram.AddResult
					if err := json.Unmarshal(r.body, &added); err != nil || len(added.IDs) != len(texts) {
						res.errs = append(res.errs, fmt.Sprintf("client %d op %d: answer %s (%v)", c, op, r.body, err))
						continue
					}
					for i, id := range added.IDs {
						res.written[id] = texts[i]
					}
				}
			}
		}()
	}
	wg.Wait()
	elapsed := time.Since(start)

	var all []time.Duration
	writes := map[string]map[string]string{keyA: {}, keyB: {}}
	for _, r := range results {
		for _, e := range r.errs {
			t.Error(e)
		}
		all = append(all, r.lat...)
		for id, text := range r.written {
			writes[r.key][id] = text
		}
	}
	slices.Sort(all)
	pct := func(p float64) time.Duration { return all[min(len(all)-1, int(p*float64(len(all))))] }
	t.Logf("load: %d clients, %d requests in %v: %.0f req/s, p50 %v, p99 %v, max %v; %d+%d acknowledged writes",
		clients, len(all), elapsed.Round(time.Millisecond), float64(len(all))/elapsed.Seconds(),
		pct(0.50), pct(0.99), all[len(all)-1], len(writes[keyA]), len(writes[keyB]))

	// Every acknowledged write is present, with its content, in its tenant.
	for key, want := range writes {
		exp := call(t, hc, ts.URL, "GET", "/v1/export", key, nil)
		got := map[string]string{}
		for _, m := range readJSONL(t, exp.body) {
			got[m.ID] = m.Text
		}
		if len(got) != len(want)+200 {
			t.Errorf("tenant %s: %d memories exported, want %d written + 200 seeds", key[:5], len(got), len(want))
		}
		for id, text := range want {
			if got[id] != text {
				t.Errorf("tenant %s: memory %s is %q, want %q", key[:5], id, got[id], text)
			}
		}
	}
	if n, want := db.Count(), len(writes[keyA])+len(writes[keyB])+400; n != want {
		t.Errorf("store holds %d memories, want %d", n, want)
	}
}

var topics = []string{
	"dark themes in the editor", "the read replica for reports", "espresso without sugar",
	"retry with exponential backoff", "the standup at half past nine", "structured JSON logs",
	"the golden retriever Biscuit", "a transaction around tasks_claim", "travelling in Japan in April",
	"an index on created_at",
}
