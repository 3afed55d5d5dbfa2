package main

import (
	"bufio"
	"context"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"
)

// served is an "engram serve" running in this process through run().
type served struct {
	url  string
	stop func() int // cancels the serve and returns its exit code
	mu   sync.Mutex
	log  strings.Builder // what serve wrote to stderr after its first line
}

var servingLine = regexp.MustCompile(`on (http://127\.0\.0\.1:\d+) `)

// startServe runs the real serve command on 127.0.0.1 (random port) against
// the database file and returns its URL once it listens.
func startServe(t *testing.T, db string, extra ...string) *served {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	pr, pw := io.Pipe()
	s := &served{}
	code := make(chan int, 1)
	go func() {
		args := append([]string{"--db", db, "serve", "--addr", "127.0.0.1:0"}, extra...)
		code <- run(ctx, args, strings.NewReader(""), io.Discard, pw)
		pw.Close()
	}()
	first := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(pr)
		sent := false
		for sc.Scan() {
			if m := servingLine.FindStringSubmatch(sc.Text()); m != nil && !sent {
				first <- m[1]
				sent = true
			}
			s.mu.Lock()
			s.log.WriteString(sc.Text() + "\n")
			s.mu.Unlock()
		}
		close(first)
	}()
	u, ok := <-first
	if !ok {
		cancel()
		t.Fatalf("serve exited with %d before listening: %s", <-code, s.stderr())
	}
	s.url = u
	var once sync.Once
	var exit int
	s.stop = func() int {
		once.Do(func() { cancel(); exit = <-code })
		return exit
	}
	t.Cleanup(func() { s.stop() })
	return s
}

func (s *served) stderr() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.log.String()
}

// TestServeOnGraceful: a request in flight when shutdown begins completes.
func TestServeOnGraceful(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	started, release, began := make(chan struct{}), make(chan struct{}), make(chan struct{})
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		close(started)
		<-release
		io.WriteString(w, "finished")
	})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan error, 1)
	go func() {
		done <- serveOn(ctx, ln, h, serveOptions{shutdownTimeout: time.Minute, onShutdown: func() { close(began) }})
	}()
	type answer struct {
		body string
		err  error
	}
	got := make(chan answer, 1)
	go func() {
		resp, err := http.Get("http://" + ln.Addr().String() + "/slow")
		if err != nil {
			got <- answer{err: err}
			return
		}
		defer resp.Body.Close()
		b, err := io.ReadAll(resp.Body)
		got <- answer{string(b), err}
	}()
	<-started
	cancel() // as SIGTERM would
	<-began  // Shutdown has begun: the listener is closed
	if c, err := net.Dial("tcp", ln.Addr().String()); err == nil {
		c.Close()
		t.Error("a new connection was accepted after shutdown began")
	}
	close(release)
	if a := <-got; a.err != nil || a.body != "finished" {
		t.Fatalf("in-flight request: %q %v", a.body, a.err)
	}
	if err := <-done; err != nil {
		t.Fatalf("serveOn: %v", err)
	}
}

func TestServeRefuses(t *testing.T) {
	dir := t.TempDir()
	write := func(name, content string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	noScope := write("noscope.json", `{"keys": [{"key": "0123456789abcdef0123"}]}`)
	bad := write("bad.json", `{"keys": [{"key": "0123456789abcdef0123", "scope": {"team": "a"}, "admin": true}]}`)
	tests := []struct {
		name string
		args []string
		env  string
		want string
	}{
		{"non-loopback without keys", []string{"--addr", "0.0.0.0:0"}, "", "not a loopback address"},
		{"all interfaces without keys", []string{"--addr", ":0"}, "", "not a loopback address"},
		{"key without scope", []string{"--addr", "127.0.0.1:0", "--keys", noScope}, "", "at least one key=value"},
		{"unknown field in keys", []string{"--addr", "127.0.0.1:0", "--keys", bad}, "", `unknown field "admin"`},
		{"missing keys file", []string{"--keys", filepath.Join(dir, "nope.json")}, "", "no such file"},
		{"bad ENGRAM_API_KEYS", []string{"--addr", "127.0.0.1:0"}, `{"keys": "x"}`, "ENGRAM_API_KEYS"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Setenv("ENGRAM_API_KEYS", tc.env)
			out, errs, code := cli(t, filepath.Join(dir, "a.db"), "", append([]string{"serve"}, tc.args...)...)
			if code != 2 || !strings.Contains(errs, tc.want) || strings.Count(errs, "\n") != 1 {
				t.Fatalf("exit %d, stderr %q, stdout %q; want exit 2 and %q", code, errs, out, tc.want)
			}
		})
	}
}

func TestLoopbackAddr(t *testing.T) {
	for addr, want := range map[string]bool{
		"127.0.0.1:7077": true, "127.0.0.2:1": true, "[::1]:7077": true, "localhost:7077": true,
		"0.0.0.0:7077": false, ":7077": false, "[::]:7077": false, "192.168.1.4:7077": false,
		"example.com:7077": false, "127.0.0.1": false,
	} {
		if got := loopbackAddr(addr); got != want {
			t.Errorf("loopbackAddr(%q) = %v, want %v", addr, got, want)
		}
	}
}

// TestServeMountsMCP: /mcp answers MCP over streamable HTTP behind the same keys.
func TestServeMountsMCP(t *testing.T) {
	t.Setenv("ENGRAM_EMBEDDER", "none")
	const key = "mcp-key-0123456789abcdef"
	t.Setenv("ENGRAM_API_KEYS", `{"keys": [{"key": "`+key+`", "scope": {"team": "a"}}]}`)
	srv := startServe(t, filepath.Join(t.TempDir(), "mcp.db"))
	initialize := `{"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "test", "version": "1"}}}`
	post := func(key string) (int, string) {
		req, _ := http.NewRequest("POST", srv.url+"/mcp", strings.NewReader(initialize))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		if key != "" {
			req.Header.Set("Authorization", "Bearer "+key)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	if code, body := post(""); code != http.StatusUnauthorized || !strings.Contains(body, `"unauthorized"`) {
		t.Fatalf("/mcp without a key: %d %s", code, body)
	}
	if code, body := post(key); code != http.StatusOK || !strings.Contains(body, `"serverInfo"`) {
		t.Fatalf("/mcp initialize: %d %s", code, body)
	}
}
