package weaviate

import (
	"context"
	"errors"
	"fmt"
	"net"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/engram-memory/engram/internal/weaviatetest"
	"github.com/engram-memory/engram/memory"
)

// TestServerStoppedMidWay: a writer imports batches while the server is
// stopped under it. Every call fails with ErrUnavailable naming the server,
// within the configured timeout (no hang); after a restart the same writes,
// retried in full, leave every memory exactly as given and nothing twice.
func TestServerStoppedMidWay(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a private server twice")
	}
	srv := weaviatetest.Start(t)
	cfg := Config{Endpoint: srv.URL, GRPCPort: srv.GRPCPort, Class: weaviatetest.Class(t, srv.URL), TenantKey: "team",
		Timeout: 2 * time.Second, Retries: 1, BatchSize: 10}
	ctx := context.Background()
	s, err := Open(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	var all []*memory.Memory
	batches := make([][]*memory.Memory, 8)
	for b := range batches {
		for i := range 50 {
			m := full(fmt.Sprintf("b%d-%02d", b, i))
			m.Scope["team"] = []string{"a", "b"}[i%2]
			batches[b] = append(batches[b], m)
			all = append(all, m)
		}
	}
	put(t, s, batches[0]...)

	stopped := make(chan struct{})
	var stopErr error
	go func() { stopErr = srv.Stop(); close(stopped) }()
	failedAt := -1
	for b := 1; b < len(batches); b++ {
		if err := s.Put(ctx, batches[b]); err != nil {
			if !errors.Is(err, ErrUnavailable) || !strings.Contains(err.Error(), srv.URL) {
				t.Fatalf("put while stopping: %v, want ErrUnavailable naming %s", err, srv.URL)
			}
			failedAt = b
			break
		}
	}
	<-stopped
	if stopErr != nil {
		t.Fatal(stopErr)
	}
	// Every kind of call fails the same way while the server is down.
	calls := map[string]func(ctx context.Context) error{
		"put": func(ctx context.Context) error { return s.Put(ctx, batches[1]) },
		"get": func(ctx context.Context) error {
			_, err := s.Get(ctx, map[string]string{"team": "a"}, "b0-00")
			return err
		},
		"count": func(ctx context.Context) error { _, err := s.Count(ctx, memory.Filter{}); return err },
		"bm25": func(ctx context.Context) error {
			_, err := s.BM25(ctx, LegQuery{Text: "deploy", Filter: memory.Filter{Scope: map[string]string{"team": "a"}}, K: 5})
			return err
		},
		"delete": func(ctx context.Context) error {
			_, err := s.Delete(ctx, map[string]string{"team": "a"}, []string{"x"})
			return err
		},
		"ready": s.Ready,
	}
	for name, call := range calls {
		// The deadline is far beyond timeout × attempts: reaching it would
		// mean the call hung instead of failing.
		cctx, cancel := context.WithTimeout(ctx, time.Minute)
		err := call(cctx)
		cancel()
		if !errors.Is(err, ErrUnavailable) || errors.Is(err, context.DeadlineExceeded) {
			t.Errorf("%s with the server down: %v, want ErrUnavailable", name, err)
		}
	}
	if err := srv.Restart(); err != nil {
		t.Fatal(err)
	}
	if failedAt < 0 {
		failedAt = len(batches) // the stop came after the last batch: retrying all is still a no-op
	}
	for b := range batches { // retry everything, including what was stored
		put(t, s, batches[b]...)
	}
	if n, err := s.Count(ctx, memory.Filter{}); err != nil || n != len(all) {
		t.Fatalf("count after retry = %d, %v; want %d", n, err, len(all))
	}
	for _, m := range all {
		got, err := s.Get(ctx, m.Scope, m.ID)
		if err != nil || !reflect.DeepEqual(got, m) {
			t.Fatalf("after retry, %s = %v (%v), want it exactly as written", m.ID, got, err)
		}
	}
	t.Logf("the first failed batch was %d of %d", failedAt, len(batches))
}

// TestServerSlowOrAbsent: a server that accepts connections but never
// answers, and a port nobody listens on, both give ErrUnavailable with the
// reason, after Timeout per attempt; the caller's cancellation ends a call
// at once with the caller's error.
func TestServerSlowOrAbsent(t *testing.T) {
	hang, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer hang.Close()
	go func() {
		var conns []net.Conn
		defer func() {
			for _, c := range conns {
				c.Close()
			}
		}()
		for {
			c, err := hang.Accept()
			if err != nil {
				return
			}
			conns = append(conns, c) // read nothing, answer nothing
		}
	}()
	free, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	absent := free.Addr().String()
	free.Close()

	cases := []struct {
		name, addr, want string
	}{
		{"silent server", hang.Addr().String(), "no answer within 200ms"},
		{"nothing listening", absent, "connection refused"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := Open(context.Background(), Config{Endpoint: "http://" + c.addr, Timeout: 200 * time.Millisecond, Retries: 2})
			if !errors.Is(err, ErrUnavailable) || !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), "after 3 attempts") {
				t.Fatalf("open: %v, want ErrUnavailable saying %q after 3 attempts", err, c.want)
			}
		})
	}
	t.Run("cancelled by the caller", func(t *testing.T) {
		ctx, cancel := context.WithCancel(context.Background())
		go func() { time.Sleep(100 * time.Millisecond); cancel() }()
		_, err := Open(ctx, Config{Endpoint: "http://" + hang.Addr().String(), Timeout: time.Hour})
		if !errors.Is(err, context.Canceled) || errors.Is(err, ErrUnavailable) {
			t.Fatalf("open: %v, want context.Canceled and not ErrUnavailable", err)
		}
	})
}
