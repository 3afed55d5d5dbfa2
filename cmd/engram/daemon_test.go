//go:build unix

package main

import (
	"context"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"
)

// daemonEnv gives the test a private runtime directory and a clean
// configuration; it returns the socket directory.
func daemonEnv(t *testing.T) string {
	t.Helper()
	rt := t.TempDir()
	t.Setenv("XDG_RUNTIME_DIR", rt)
	t.Setenv("ENGRAM_URL", "")
	t.Setenv("ENGRAM_API_KEYS", "")
	t.Setenv("ENGRAM_EMBEDDER", "")
	t.Setenv(DaemonEnv, "")
	return filepath.Join(rt, "engram")
}

// requests counts the API requests a served log shows (--access-log text).
func requests(s *served) int { return strings.Count(s.stderr(), "msg=request") }

// requestsAfter waits until the served log shows more than before requests
// and returns their count, or before once a generous wait is over: the
// server writes a request's line after its answer, which the client may
// have read, and exited on, first.
func requestsAfter(s *served, before int) int {
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(5 * time.Millisecond) {
		if n := requests(s); n > before {
			return n
		}
	}
	return requests(s)
}

// TestDaemonSameAnswers runs the agent-loop commands against a store served
// by a real "engram serve" (through its unix socket, as the access log
// shows) and against an exact copy of the store in-process: every output is
// the same. The socket is mode 0600 in a 0700 directory.
func TestDaemonSameAnswers(t *testing.T) {
	// Every call here must reach the daemon, however slow the machine: the
	// fallback after a silent probe is TestDaemonFallback's.
	defer func(d time.Duration) { daemonProbeTimeout = d }(daemonProbeTimeout)
	daemonProbeTimeout = time.Minute
	dir := daemonEnv(t)
	tmp := t.TempDir()
	a, b := filepath.Join(tmp, "a.db"), filepath.Join(tmp, "b.db")
	id := strings.TrimSpace(mustCLI(t, a, "", "add", "Prefers dark themes in every editor", "--scope", "user=u7", "--favorite"))
	mustCLI(t, a, "", "add", "The staging database listens on port 5433", "--scope", "project=atlas")
	mustCLI(t, a, "", "add", "Standup is at 9:30 every weekday", "--scope", "project=atlas", "--type", "fact")
	mustCLI(t, b, mustCLI(t, a, "", "export"), "import", "-")

	s := startServe(t, a, "--access-log", "text")
	socks, err := filepath.Glob(filepath.Join(dir, "engram-*.sock"))
	if err != nil || len(socks) != 1 {
		t.Fatalf("sockets in %s: %v %v", dir, socks, err)
	}
	for path, want := range map[string]os.FileMode{dir: 0o700 | os.ModeDir, socks[0]: 0o600 | os.ModeSocket} {
		fi, err := os.Lstat(path)
		if err != nil {
			t.Fatal(err)
		}
		if got := fi.Mode() & (os.ModeType | os.ModePerm); got != want {
			t.Errorf("%s: mode %v, want %v", path, got, want)
		}
	}

	hookIn := `{"session_id":"s1","prompt":"which colour scheme does the user like for editors","cwd":"/tmp"}`
	for _, c := range []struct {
		name  string
		stdin string
		args  []string
	}{
		{"search", "", []string{"search", "database port", "--no-record"}},
		{"search json", "", []string{"search", "editor theme", "--no-record", "--json", "--scope", "user=u7"}},
		{"inject", "", []string{"inject", "which colour scheme does the user like", "--no-record", "--min-relevance", "0.05"}},
		{"hook prompt", hookIn, []string{"hook", "claude-code", "user-prompt-submit", "--min-relevance", "0.05"}},
		{"hook session start", `{"session_id":"s1","cwd":"/tmp"}`, []string{"hook", "claude-code", "session-start"}},
		{"brief", "", []string{"brief"}},
		{"list", "", []string{"list", "--limit", "2"}},
		{"get", "", []string{"get", id}},
		{"get missing", "", []string{"get", "01M92JS8A5CM9TBM4EGB5V9SC9"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			before := requests(s)
			viaOut, viaErr, viaCode := cli(t, a, c.stdin, c.args...)
			if got := requestsAfter(s, before); got <= before {
				t.Errorf("the call did not reach the daemon (%d requests before, %d after)", before, got)
			}
			out, errs, code := cli(t, b, c.stdin, c.args...)
			out, errs = strings.ReplaceAll(out, b, a), strings.ReplaceAll(errs, b, a)
			// The two stores recorded the hook's use each at its own instant.
			viaOut, out = demandAt.ReplaceAllString(viaOut, "$1"), demandAt.ReplaceAllString(out, "$1")
			if c.name == "search json" {
				viaOut, out = dropTimings(viaOut), dropTimings(out)
			}
			if viaOut != out || viaErr != errs || viaCode != code {
				t.Errorf("through the daemon: exit %d\n%s%s\nin-process: exit %d\n%s%s", viaCode, viaOut, viaErr, code, out, errs)
			}
		})
	}
	// Off by the environment: in-process, no request.
	t.Setenv(DaemonEnv, "off")
	before := requests(s)
	mustCLI(t, a, "", "search", "database port", "--no-record")
	if got := requests(s); got != before {
		t.Errorf("ENGRAM_DAEMON=off still sent %d requests", got-before)
	}
}

var demandAt = regexp.MustCompile(`("demand_at": )"[^"]*"`)

// dropTimings removes the timings object of a --json search, which differs
// from call to call.
func dropTimings(s string) string {
	i := strings.Index(s, `"timings_ms"`)
	if i < 0 {
		return s
	}
	j := strings.Index(s[i:], "}")
	return s[:i] + s[i+j+1:]
}

// TestDaemonFallback: no daemon, a stale socket, a socket that never
// answers, a daemon started with another configuration and an unsafe
// directory all leave the command in-process with the right answer.
func TestDaemonFallback(t *testing.T) {
	dir := daemonEnv(t)
	db := filepath.Join(t.TempDir(), "f.db")
	mustCLI(t, db, "", "add", "The staging database listens on port 5433")
	key, err := storeKey(db)
	if err != nil {
		t.Fatal(err)
	}
	want := mustCLI(t, db, "", "search", "database port", "--no-record")
	sock := daemonSocket(dir, key)

	check := func(t *testing.T) {
		t.Helper()
		start := time.Now()
		if got := mustCLI(t, db, "", "search", "database port", "--no-record"); got != want {
			t.Errorf("answer %q, want %q", got, want)
		}
		if d := time.Since(start); d > time.Minute {
			t.Errorf("took %v", d)
		}
	}
	for _, c := range []struct {
		name  string
		setup func(t *testing.T)
	}{
		{"no daemon", func(t *testing.T) {}},
		{"stale socket", func(t *testing.T) {
			mkdir(t, dir, 0o700)
			ln, err := net.Listen("unix", sock)
			if err != nil {
				t.Fatal(err)
			}
			ln.(*net.UnixListener).SetUnlinkOnClose(false)
			ln.Close()
			t.Cleanup(func() { os.Remove(sock) })
		}},
		{"silent socket", func(t *testing.T) {
			mkdir(t, dir, 0o700)
			ln, err := net.Listen("unix", sock) // accepts (the backlog) but never answers
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { ln.Close() })
		}},
		{"other configuration", func(t *testing.T) {
			startServe(t, db)
			t.Setenv("ENGRAM_VECTOR_WEIGHT", "0.5")
			t.Cleanup(func() { os.Unsetenv("ENGRAM_VECTOR_WEIGHT") })
		}},
		{"directory open to others", func(t *testing.T) {
			s := startServe(t, db, "--access-log", "text")
			os.Chmod(dir, 0o755)
			t.Cleanup(func() {
				os.Chmod(dir, 0o700)
				if n := requests(s); n != 0 {
					t.Errorf("the daemon got %d requests through a directory open to others", n)
				}
			})
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			c.setup(t)
			if c.name == "other configuration" {
				// The other weight is the caller's own: compare with its own in-process answer.
				t.Setenv(DaemonEnv, "off")
				want2 := mustCLI(t, db, "", "search", "database port", "--no-record")
				t.Setenv(DaemonEnv, "")
				if got := mustCLI(t, db, "", "search", "database port", "--no-record"); got != want2 {
					t.Errorf("answer %q, want %q", got, want2)
				}
				return
			}
			check(t)
		})
	}
}

func mkdir(t *testing.T, dir string, mode os.FileMode) {
	t.Helper()
	if err := os.MkdirAll(dir, mode); err != nil {
		t.Fatal(err)
	}
}

// TestListenDaemon: a stale socket is replaced, a live one refused, and a
// directory another user could enter is refused.
func TestListenDaemon(t *testing.T) {
	dir := daemonEnv(t)
	key := "/some/store.db"
	ln, sock, err := listenDaemon(key)
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := listenDaemon(key); err == nil || !strings.Contains(err.Error(), "already") {
		t.Errorf("second daemon on a live socket: %v", err)
	}
	ln.(*net.UnixListener).SetUnlinkOnClose(false)
	ln.Close()
	ln2, sock2, err := listenDaemon(key)
	if err != nil || sock2 != sock {
		t.Fatalf("over a stale socket: %v (%s, want %s)", err, sock2, sock)
	}
	ln2.Close()
	if err := os.Chmod(dir, 0o711); err != nil {
		t.Fatal(err)
	}
	if _, _, err := listenDaemon(key); err == nil || !strings.Contains(err.Error(), "open to other users") {
		t.Errorf("directory of mode 0711: %v", err)
	}
	os.Chmod(dir, 0o700)
}

// TestDaemonOtherUser: another user cannot connect to the socket. Run as
// root, it connects as nobody from a child process.
func TestDaemonOtherUser(t *testing.T) {
	if os.Getuid() != 0 {
		t.Skip("needs root to act as another user")
	}
	if os.Getenv("ENGRAM_TEST_DIAL") != "" {
		t.Skip("the child's own run")
	}
	daemonEnv(t)
	ln, sock, err := listenDaemon("/other/user.db")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	// The test binary, where nobody can run it.
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(t.TempDir(), "dial.test")
	data, err := os.ReadFile(exe)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(bin, data, 0o755); err != nil {
		t.Fatal(err)
	}
	for d := filepath.Dir(bin); d != "/" && d != os.TempDir(); d = filepath.Dir(d) {
		os.Chmod(d, 0o755)
	}
	cmd := exec.CommandContext(t.Context(), bin, "-test.run=^TestDaemonDialChild$", "-test.v")
	cmd.Env = append(os.Environ(), "ENGRAM_TEST_DIAL="+sock)
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534}}
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("child as nobody: %v\n%s", err, out)
	}
	if !strings.Contains(string(out), "permission denied") {
		t.Fatalf("child as nobody connected, or failed otherwise:\n%s", out)
	}
}

// TestDaemonDialChild is TestDaemonOtherUser's child: it tries the socket.
func TestDaemonDialChild(t *testing.T) {
	sock := os.Getenv("ENGRAM_TEST_DIAL")
	if sock == "" {
		t.Skip("run by TestDaemonOtherUser")
	}
	c, err := (&net.Dialer{Timeout: time.Second}).DialContext(context.Background(), "unix", sock)
	if err == nil {
		c.Close()
		t.Fatalf("uid %d connected to %s", os.Getuid(), sock)
	}
	t.Logf("uid %d: %v", os.Getuid(), err)
}
