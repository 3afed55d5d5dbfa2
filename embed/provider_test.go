package embed

// Tests every remote provider against a real local HTTP server that speaks its
// protocol: batching, retries, bad responses, timeouts and cancellation.

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/engram-memory/engram/internal/httpjson"
)

func TestProviderBatching(t *testing.T) {
	for _, p := range protocols {
		for _, tc := range []struct {
			name      string
			n, batch  int
			wantSizes []int
		}{
			{"150 in 64s", 150, 64, []int{64, 64, 22}},
			{"exact multiple", 128, 64, []int{64, 64}},
			{"one batch", 5, 64, []int{5}},
			{"default batch", 70, 0, []int{64, 6}},
			{"batch of one", 3, 1, []int{1, 1, 1}},
		} {
			t.Run(p.name+"/"+tc.name, func(t *testing.T) {
				srv := newFake(t, p, ok(p, 8))
				e := p.open(t, srv.URL, opts{batch: tc.batch})
				in := texts(tc.n)
				got, err := e.Embed(context.Background(), in)
				if err != nil {
					t.Fatal(err)
				}
				if !equalVecs(got, fakeVecs(in, 8)) {
					t.Fatal("vectors out of order or wrong")
				}
				if sizes := srv.batchSizes(); !slices.Equal(sizes, tc.wantSizes) {
					t.Fatalf("batch sizes %v, want %v", sizes, tc.wantSizes)
				}
				if !slices.Equal(srv.sent(), in) {
					t.Fatal("texts sent out of order")
				}
			})
		}
	}
}

func TestProviderEmptyAndBlank(t *testing.T) {
	for _, p := range protocols {
		for _, tc := range []struct {
			name     string
			in       []string
			wantSent []string
		}{
			{"nil", nil, nil},
			{"empty", []string{}, nil},
			{"all blank", []string{"", " \n\t"}, nil},
			{"some blank", []string{"a", "", "b", "  "}, []string{"a", "b"}},
		} {
			t.Run(p.name+"/"+tc.name, func(t *testing.T) {
				srv := newFake(t, p, ok(p, 4))
				got, err := p.open(t, srv.URL, opts{}).Embed(context.Background(), tc.in)
				if err != nil {
					t.Fatal(err)
				}
				if got == nil || len(got) != len(tc.in) {
					t.Fatalf("got %d vectors (nil=%v) for %d texts", len(got), got == nil, len(tc.in))
				}
				if sent := srv.sent(); !slices.Equal(sent, tc.wantSent) {
					t.Fatalf("sent %q, want %q", sent, tc.wantSent)
				}
				for i, s := range tc.in {
					if blank := strings.TrimSpace(s) == ""; blank != (got[i] == nil) {
						t.Fatalf("text %d %q: vector %v", i, s, got[i])
					}
				}
			})
		}
	}
}

// status answers the listed statuses in turn (0 = success), then succeeds.
func status(p protocol, msg string, retryAfter string, codes ...int) handler {
	return func(n int, req fakeRequest, w http.ResponseWriter, r *http.Request) {
		if n <= len(codes) && codes[n-1] != 0 {
			if retryAfter != "" {
				w.Header().Set("Retry-After", retryAfter)
			}
			p.writeError(w, codes[n-1], msg)
			return
		}
		ok(p, 4)(n, req, w, r)
	}
}

func TestProviderRetries(t *testing.T) {
	for _, p := range protocols {
		for _, tc := range []struct {
			name       string
			retries    int
			codes      []int
			wantReqs   int
			wantStatus int // 0: success
		}{
			{"429 then ok", 3, []int{429}, 2, 0},
			{"429 twice then ok", 3, []int{429, 429}, 3, 0},
			{"503 then ok", 3, []int{503}, 2, 0},
			{"500 thrice gives up", 2, []int{500, 500, 500}, 3, 500},
			{"default retries", 0, []int{502, 502, 502, 502, 502}, 4, 502},
			{"retries disabled", -1, []int{500}, 1, 500},
			{"400 not retried", 3, []int{400}, 1, 400},
			{"401 not retried", 3, []int{401}, 1, 401},
			{"404 not retried", 3, []int{404}, 1, 404},
			{"422 not retried", 3, []int{422}, 1, 422},
		} {
			t.Run(p.name+"/"+tc.name, func(t *testing.T) {
				srv := newFake(t, p, status(p, "the server says no", "", tc.codes...))
				got, err := p.open(t, srv.URL, opts{retries: tc.retries}).Embed(context.Background(), []string{"x"})
				if n := srv.count(); n != tc.wantReqs {
					t.Errorf("%d requests, want %d", n, tc.wantReqs)
				}
				if tc.wantStatus == 0 {
					if err != nil || len(got) != 1 {
						t.Fatalf("got %v, %v", got, err)
					}
					return
				}
				var he *HTTPError
				if !errors.As(err, &he) || he.StatusCode != tc.wantStatus {
					t.Fatalf("error %v, want HTTP %d", err, tc.wantStatus)
				}
				if !strings.Contains(err.Error(), "the server says no") || !strings.Contains(err.Error(), fmt.Sprintf("HTTP %d", tc.wantStatus)) {
					t.Fatalf("error %q lacks status or server message", err)
				}
				if tc.wantReqs > 1 && !strings.Contains(err.Error(), "gave up after") {
					t.Fatalf("error %q does not say it retried", err)
				}
			})
		}
	}
}

func TestProviderRetryAfter(t *testing.T) {
	for _, p := range protocols {
		for _, tc := range []struct {
			name     string
			header   string
			cap      time.Duration
			backoff  time.Duration
			min, max time.Duration
			wantReqs int
		}{
			// A huge backoff shows the header, not the backoff, set the wait.
			{"seconds honoured", "1", 0, time.Hour, 950 * time.Millisecond, 3 * time.Second, 2},
			{"zero retries at once", "0", 0, time.Hour, 0, time.Second, 2},
			{"capped", "3600", 20 * time.Millisecond, time.Hour, 15 * time.Millisecond, time.Second, 2},
			{"garbage falls back to backoff", "soon", 0, time.Millisecond, 0, time.Second, 2},
		} {
			t.Run(p.name+"/"+tc.name, func(t *testing.T) {
				srv := newFake(t, p, status(p, "slow down", tc.header, 429))
				e := p.open(t, srv.URL, opts{backoff: tc.backoff, retryAfterCap: tc.cap})
				start := time.Now()
				_, err := e.Embed(context.Background(), []string{"x"})
				took := time.Since(start)
				if err != nil {
					t.Fatal(err)
				}
				if srv.count() != tc.wantReqs {
					t.Fatalf("%d requests, want %d", srv.count(), tc.wantReqs)
				}
				if took < tc.min || took > tc.max {
					t.Fatalf("took %s, want within [%s, %s]", took, tc.min, tc.max)
				}
			})
		}
	}
}

func TestProviderTransportErrorRetried(t *testing.T) {
	for _, p := range protocols {
		t.Run(p.name, func(t *testing.T) {
			srv := newFake(t, p, func(n int, req fakeRequest, w http.ResponseWriter, r *http.Request) {
				if n == 1 {
					conn, _, err := http.NewResponseController(w).Hijack()
					if err != nil {
						t.Error(err)
						return
					}
					conn.Close() // the client sees EOF
					return
				}
				ok(p, 4)(n, req, w, r)
			})
			got, err := p.open(t, srv.URL, opts{}).Embed(context.Background(), []string{"x"})
			if err != nil || len(got) != 1 {
				t.Fatalf("got %v, %v", got, err)
			}
			if srv.count() != 2 {
				t.Fatalf("%d requests, want 2", srv.count())
			}
		})
	}
}

func TestProviderBadResponses(t *testing.T) {
	for _, p := range protocols {
		raw := func(body string) handler {
			return func(_ int, _ fakeRequest, w http.ResponseWriter, _ *http.Request) {
				w.Header().Set("Content-Type", "application/json")
				_, _ = w.Write([]byte(body))
			}
		}
		for _, tc := range []struct {
			name     string
			batch    int
			h        handler
			wantReqs int
		}{
			{"malformed JSON", 0, raw(`{"data": [{"index": 0, "embedding": [0.1,`), 1},
			{"not JSON", 0, raw(`<html>bad gateway</html>`), 1},
			{"strings for floats", 0, raw(`{"data":[{"index":0,"embedding":["a"]}],"embeddings":[["a"]]}`), 1},
			{"wrong count", 0, func(_ int, req fakeRequest, w http.ResponseWriter, _ *http.Request) {
				p.write(w, fakeVecs(req.Input[1:], 4))
			}, 1},
			{"too many", 0, func(_ int, req fakeRequest, w http.ResponseWriter, _ *http.Request) {
				p.write(w, fakeVecs(append(req.Input, "extra"), 4))
			}, 1},
			{"ragged dims", 0, func(_ int, req fakeRequest, w http.ResponseWriter, _ *http.Request) {
				v := fakeVecs(req.Input, 4)
				v[1] = fakeVec(req.Input[1], 5)
				p.write(w, v)
			}, 1},
			{"ragged across batches", 2, func(n int, req fakeRequest, w http.ResponseWriter, _ *http.Request) {
				p.write(w, fakeVecs(req.Input, 3+n))
			}, 2},
			{"empty vector", 0, func(_ int, req fakeRequest, w http.ResponseWriter, _ *http.Request) {
				v := fakeVecs(req.Input, 4)
				v[2] = []float32{}
				p.write(w, v)
			}, 1},
			{"error in a 200", 0, func(_ int, _ fakeRequest, w http.ResponseWriter, _ *http.Request) {
				p.writeError(w, http.StatusOK, "model not loaded")
			}, 1},
		} {
			t.Run(p.name+"/"+tc.name, func(t *testing.T) {
				srv := newFake(t, p, tc.h)
				got, err := p.open(t, srv.URL, opts{batch: tc.batch}).Embed(context.Background(), []string{"a", "b", "c", "d"})
				if !errors.Is(err, ErrBadResponse) {
					t.Fatalf("got %v, %v; want ErrBadResponse", got, err)
				}
				if got != nil {
					t.Fatal("vectors returned with an error")
				}
				if srv.count() != tc.wantReqs {
					t.Fatalf("%d requests, want %d (bad responses are not retried)", srv.count(), tc.wantReqs)
				}
			})
		}
	}
}

func TestProviderTimeout(t *testing.T) {
	for _, p := range protocols {
		for _, tc := range []struct {
			name     string
			retries  int
			wantReqs int
		}{
			{"no retry", -1, 1},
			{"timeouts are retried", 1, 2},
		} {
			t.Run(p.name+"/"+tc.name, func(t *testing.T) {
				srv := newFake(t, p, block)
				e := p.open(t, srv.URL, opts{timeout: 50 * time.Millisecond, retries: tc.retries})
				start := time.Now()
				_, err := e.Embed(context.Background(), []string{"x"})
				if took := time.Since(start); took > 2*time.Second {
					t.Fatalf("took %s despite a 50ms timeout", took)
				}
				if !errors.Is(err, context.DeadlineExceeded) || !strings.Contains(err.Error(), "no answer within 50ms") {
					t.Fatalf("error %v, want a named timeout", err)
				}
				if srv.count() != tc.wantReqs {
					t.Fatalf("%d requests, want %d", srv.count(), tc.wantReqs)
				}
			})
		}
	}
}

func TestProviderCancel(t *testing.T) {
	for _, p := range protocols {
		for _, tc := range []struct {
			name     string
			h        handler
			backoff  time.Duration
			cancelAt time.Duration // < 0: cancelled before the call
			wantReqs int
		}{
			{"during request", block, 0, 30 * time.Millisecond, 1},
			{"during backoff", status(p, "boom", "", 500, 500), time.Hour, 100 * time.Millisecond, 1},
			{"during Retry-After", status(p, "busy", "5", 429), 0, 100 * time.Millisecond, 1},
			{"before the call", ok(p, 4), 0, -1, 0},
		} {
			t.Run(p.name+"/"+tc.name, func(t *testing.T) {
				srv := newFake(t, p, tc.h)
				e := p.open(t, srv.URL, opts{backoff: tc.backoff})
				ctx, cancel := context.WithCancel(context.Background())
				defer cancel()
				if tc.cancelAt < 0 {
					cancel()
				} else {
					time.AfterFunc(tc.cancelAt, cancel)
				}
				start := time.Now()
				_, err := e.Embed(ctx, []string{"x"})
				if took := time.Since(start); took > 2*time.Second {
					t.Fatalf("took %s after cancel", took)
				}
				if !errors.Is(err, context.Canceled) {
					t.Fatalf("error %v, want context.Canceled", err)
				}
				if srv.count() != tc.wantReqs {
					t.Fatalf("%d requests, want %d", srv.count(), tc.wantReqs)
				}
			})
		}
	}
}

func TestProviderLongErrorTruncated(t *testing.T) {
	for _, p := range protocols {
		t.Run(p.name, func(t *testing.T) {
			long := strings.Repeat("é very long explanation\n", 500)
			srv := newFake(t, p, status(p, long, "", 400))
			_, err := p.open(t, srv.URL, opts{}).Embed(context.Background(), []string{"x"})
			var he *HTTPError
			if !errors.As(err, &he) {
				t.Fatalf("error %v", err)
			}
			if len(he.Message) > httpjson.MaxMessageBytes+len("…") || !strings.HasSuffix(he.Message, "…") || strings.Contains(he.Message, "\n") {
				t.Fatalf("message not cleaned (%d bytes): %q", len(he.Message), he.Message)
			}
			if len(err.Error()) > 1000 {
				t.Fatalf("error is %d bytes long", len(err.Error()))
			}
		})
	}
}
