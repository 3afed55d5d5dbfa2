// Command calltime times the calls an agent makes, as an agent makes them:
// each one a new engram process on an existing store (the Claude Code
// prompt hook, inject, search), first in-process and then through a running
// `engram serve` of the same store (the local daemon), and a long prompt
// (5 MB by default) through the hook, HTTP search and MCP memory_search.
// It reports the median and the fastest of -n calls per row (one more call
// first, not counted, to warm the page cache); the three short calls are
// timed in turns, so that a slow minute of a shared machine falls on all
// three alike. With -against another binary, the short in-process calls of
// the two are timed call by call in turns too: two builds compared in
// separate runs differ by the machine's minutes as much as by their code.
//
// Build it and the CLI first, and run it at normal priority on an idle
// machine (docs/development.md, "Measuring speed"): under chrt, the server
// it starts and its own polling, both real-time, can starve each other.
//
//	go build -o /tmp/engram ./cmd/engram && go build -o /tmp/calltime ./tools/calltime
//	/tmp/calltime -engram /tmp/engram -db STORE.db
//	/tmp/calltime -engram /tmp/engram -against /tmp/engram-before -db STORE.db -big 0
package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"
)

type config struct {
	engram, against, db, query, scope string
	n, big                            int
}

func main() {
	var c config
	flag.StringVar(&c.engram, "engram", "engram", "the engram binary to time")
	flag.StringVar(&c.against, "against", "", "another engram binary whose short in-process calls are timed in turns with -engram's")
	flag.StringVar(&c.db, "db", "", "the store file (required; it is searched, and inject and the hook record uses in it)")
	flag.StringVar(&c.query, "query", "which colour scheme does the user like", "the prompt of the short calls")
	flag.StringVar(&c.scope, "scope", "", "ENGRAM_SCOPE of every call (k=v,k=v)")
	flag.IntVar(&c.n, "n", 20, "calls timed per row")
	flag.IntVar(&c.big, "big", 5<<20, "bytes of the long prompt (0: skip those rows)")
	flag.Parse()
	if err := c.check(); err != nil {
		fmt.Fprintln(os.Stderr, "calltime:", err)
		os.Exit(2)
	}
	if err := run(context.Background(), c, os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "calltime:", err)
		os.Exit(1)
	}
}

func (c config) check() error {
	switch {
	case c.db == "":
		return errors.New("-db: name the store file to time the calls on")
	case c.n < 1:
		return fmt.Errorf("-n %d: want at least 1", c.n)
	case c.big < 0 || (c.big > 0 && c.big <= len(c.query)):
		return fmt.Errorf("-big %d: want 0 (skip) or more bytes than the -query (%d)", c.big, len(c.query))
	}
	if _, err := os.Stat(c.db); err != nil {
		return fmt.Errorf("-db: %w", err)
	}
	if _, err := exec.LookPath(c.engram); err != nil {
		return fmt.Errorf("-engram: %w", err)
	}
	if c.against != "" {
		if _, err := exec.LookPath(c.against); err != nil {
			return fmt.Errorf("-against: %w", err)
		}
	}
	return nil
}

// row is one timed call: its name and how long each run took.
type row struct {
	name  string
	times []time.Duration
	note  string
}

// timedCall is a call to time and the row it fills.
type timedCall struct {
	name, note string
	call       func() error
}

func run(ctx context.Context, c config, w io.Writer) error {
	var rows []row
	// turns times calls in turns (the first, the second, …, and again), n
	// turns after one not counted that warms the page cache, so that calls
	// timed together share the machine's slow minutes and none pays alone
	// for coming first.
	turns := func(calls ...timedCall) error {
		rs := make([]row, len(calls))
		for k, tc := range calls {
			rs[k] = row{name: tc.name, note: tc.note}
		}
		for i := range c.n + 1 {
			for k, tc := range calls {
				start := time.Now()
				if err := tc.call(); err != nil {
					return fmt.Errorf("%s: %w", tc.name, err)
				}
				if i > 0 {
					rs[k].times = append(rs[k].times, time.Since(start))
				}
			}
		}
		rows = append(rows, rs...)
		return nil
	}
	hook := hookInput(c.query)
	// short times the three short calls, in turns; in-process, each after
	// the same call of -against's binary when there is one.
	short := func(daemon bool) error {
		bins := []string{c.engram}
		if !daemon && c.against != "" {
			bins = append(bins, c.against)
		}
		var calls []timedCall
		for _, sc := range []struct {
			name  string
			stdin []byte
			args  []string
		}{
			{"hook claude-code user-prompt-submit", hook, []string{"hook", "claude-code", "user-prompt-submit"}},
			{"inject", nil, []string{"inject", c.query}},
			{"search", nil, []string{"search", c.query}},
		} {
			for _, bin := range bins {
				where := " (in-process)"
				switch {
				case daemon:
					where = " (daemon)"
				case len(bins) > 1:
					where = " (in-process, " + bin + ")"
				}
				calls = append(calls, timedCall{name: sc.name + where, call: func() error { return c.cli(ctx, bin, daemon, sc.stdin, sc.args...) }})
			}
		}
		return turns(calls...)
	}
	if err := short(false); err != nil {
		return err
	}
	var big []byte
	if c.big > 0 {
		big = longPrompt(c.big, c.query)
		in := hookInput(string(big))
		if err := turns(timedCall{name: fmt.Sprintf("hook, %s prompt (in-process)", size(c.big)), call: func() error { return c.cli(ctx, c.engram, false, in, "hook", "claude-code", "user-prompt-submit") }}); err != nil {
			return err
		}
	}
	srv, err := c.serve(ctx)
	if err != nil {
		return err
	}
	defer srv.stop()
	if err := short(true); err != nil {
		return err
	}
	if c.big > 0 {
		body, _ := json.Marshal(map[string]any{"query": string(big)})
		if err := turns(timedCall{name: fmt.Sprintf("HTTP POST /v1/search, %s query", size(c.big)), call: func() error { return srv.search(ctx, body) }}); err != nil {
			return err
		}
		m, err := c.mcp(ctx)
		if err != nil {
			return err
		}
		defer m.stop()
		if err := turns(timedCall{name: fmt.Sprintf("MCP memory_search, %s query", size(c.big)), note: "one `engram mcp` session", call: func() error { return m.search(string(big)) }}); err != nil {
			return err
		}
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintf(tw, "call\tmedian ms\tmin ms\tcalls\t\n")
	for _, r := range rows {
		slices.Sort(r.times)
		fmt.Fprintf(tw, "%s\t%.1f\t%.1f\t%d\t%s\n", r.name, ms(median(r.times)), ms(r.times[0]), len(r.times), r.note)
	}
	return tw.Flush()
}

// cli runs one command of the engram binary bin on the store, in-process
// (ENGRAM_DAEMON=off) or as it chooses (the daemon when one serves the
// store), and fails when it exits non-zero.
func (c config) cli(ctx context.Context, bin string, daemon bool, stdin []byte, args ...string) error {
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Env = c.env()
	if !daemon {
		cmd.Env = append(cmd.Env, "ENGRAM_DAEMON=off")
	}
	if stdin != nil {
		cmd.Stdin = bytes.NewReader(stdin)
	}
	var stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = io.Discard, &stderr
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("%s: %w: %s", strings.Join(args[:min(len(args), 3)], " "), err, strings.TrimSpace(stderr.String()))
	}
	return nil
}

// env is the environment of every engram process calltime starts: the
// store and scope given, and no server URL that would send the calls
// elsewhere.
func (c config) env() []string {
	return append(os.Environ(), "ENGRAM_DB="+c.db, "ENGRAM_SCOPE="+c.scope, "ENGRAM_URL=")
}

// hookInput is what Claude Code sends the user-prompt-submit hook.
func hookInput(prompt string) []byte {
	b, _ := json.Marshal(map[string]string{
		"session_id": "calltime", "hook_event_name": "UserPromptSubmit", "cwd": os.TempDir(), "prompt": prompt,
	})
	return b
}

// longPrompt is n bytes of pasted log lines, the short query at its end: a
// prompt the engine must reduce (docs/recall.md, "Long queries are reduced").
func longPrompt(n int, query string) []byte {
	var b bytes.Buffer
	for i := 0; b.Len() < n-len(query)-1; i++ {
		fmt.Fprintf(&b, "2026-12-05T10:%02d:%02d worker-%d handled job_%d in %d ms (queue depth %d)\n", i/60%60, i%60, i%7, i, i*37%1000, i%13)
	}
	b.Truncate(n - len(query) - 1)
	b.WriteString("\n" + query)
	return b.Bytes()
}

// server is an `engram serve` of the store: the daemon of the CLI calls, and
// the HTTP API.
type server struct {
	cmd  *exec.Cmd
	base string
}

func (c config) serve(ctx context.Context) (*server, error) {
	port, err := freePort()
	if err != nil {
		return nil, err
	}
	addr := "127.0.0.1:" + strconv.Itoa(port)
	cmd := exec.CommandContext(ctx, c.engram, "serve", "--addr", addr)
	cmd.Env = c.env()
	cmd.Stdout, cmd.Stderr = io.Discard, os.Stderr
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("engram serve: %w", err)
	}
	s := &server{cmd: cmd, base: "http://" + addr}
	for range 300 {
		// Ready when a search answers: the index is loaded.
		if s.search(ctx, []byte(`{"query":"ready"}`)) == nil {
			return s, nil
		}
		time.Sleep(50 * time.Millisecond)
	}
	s.stop()
	return nil, fmt.Errorf("engram serve on %s: not answering after 15 s", addr)
}

func (s *server) search(ctx context.Context, body []byte) error {
	req, err := http.NewRequestWithContext(ctx, "POST", s.base+"/v1/search", bytes.NewReader(body))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("POST /v1/search: %s: %.200s", resp.Status, b)
	}
	return nil
}

func (s *server) stop() {
	_ = s.cmd.Process.Signal(os.Interrupt)
	waitOrKill(s.cmd)
}

// waitOrKill waits for a process asked to end, and kills it after 10 s.
func waitOrKill(cmd *exec.Cmd) {
	done := make(chan struct{})
	go func() { _ = cmd.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		_ = cmd.Process.Kill()
		<-done
	}
}

// mcpSession is one `engram mcp` process, initialised, whose tool calls are
// timed one at a time.
type mcpSession struct {
	cmd  *exec.Cmd
	in   io.WriteCloser
	out  *bufio.Reader
	next int
}

func (c config) mcp(ctx context.Context) (*mcpSession, error) {
	cmd := exec.CommandContext(ctx, c.engram, "mcp")
	cmd.Env = c.env()
	in, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("engram mcp: %w", err)
	}
	m := &mcpSession{cmd: cmd, in: in, out: bufio.NewReaderSize(out, 1<<20)}
	if _, err := m.call("initialize", map[string]any{
		"protocolVersion": "2025-06-18", "capabilities": map[string]any{},
		"clientInfo": map[string]string{"name": "calltime", "version": "1"},
	}); err != nil {
		m.stop()
		return nil, fmt.Errorf("engram mcp: initialize: %w", err)
	}
	if err := m.send(map[string]any{"jsonrpc": "2.0", "method": "notifications/initialized"}); err != nil {
		m.stop()
		return nil, err
	}
	return m, nil
}

func (m *mcpSession) send(v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	_, err = m.in.Write(append(b, '\n'))
	return err
}

// call sends one request and reads lines until its answer.
func (m *mcpSession) call(method string, params any) (json.RawMessage, error) {
	m.next++
	id := m.next
	if err := m.send(map[string]any{"jsonrpc": "2.0", "id": id, "method": method, "params": params}); err != nil {
		return nil, err
	}
	for {
		line, err := m.out.ReadBytes('\n')
		if err != nil {
			return nil, fmt.Errorf("%s: %w", method, err)
		}
		var r struct {
			ID     *int            `json:"id"`
			Result json.RawMessage `json:"result"`
			Error  *struct {
				Message string `json:"message"`
			} `json:"error"`
		}
		if json.Unmarshal(line, &r) != nil || r.ID == nil || *r.ID != id {
			continue // a notification
		}
		if r.Error != nil {
			return nil, fmt.Errorf("%s: %s", method, r.Error.Message)
		}
		return r.Result, nil
	}
}

func (m *mcpSession) search(query string) error {
	res, err := m.call("tools/call", map[string]any{"name": "memory_search", "arguments": map[string]any{"query": query}})
	if err != nil {
		return err
	}
	var r struct {
		IsError bool `json:"isError"`
	}
	if json.Unmarshal(res, &r) == nil && r.IsError {
		return fmt.Errorf("memory_search: %.200s", res)
	}
	return nil
}

func (m *mcpSession) stop() {
	m.in.Close()
	waitOrKill(m.cmd)
}

func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

func median(d []time.Duration) time.Duration {
	n := len(d)
	if n%2 == 1 {
		return d[n/2]
	}
	return (d[n/2-1] + d[n/2]) / 2
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

func size(n int) string {
	if n >= 1<<20 {
		return fmt.Sprintf("%.1f MB", float64(n)/(1<<20))
	}
	return fmt.Sprintf("%d KB", n>>10)
}
