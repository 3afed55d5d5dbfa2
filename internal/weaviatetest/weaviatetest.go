// Package weaviatetest gives tests a real Weaviate server: ENGRAM_WEAVIATE_URL
// when set, else one started from ENGRAM_WEAVIATE_BIN (or the binary that
// .ci/weaviate builds) on free loopback ports, with telemetry off. Without a
// server a test is skipped, and fails instead when CI=true.
package weaviatetest

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/engram-memory/engram/internal/skipnote"
)

// Version is the pinned server version (DESIGN.md §3: every 1.35 release has
// two BlockMax WAND defects).
const Version = "v1.38.11"

// Environment variables the helper reads.
const (
	EnvURL = "ENGRAM_WEAVIATE_URL" // use this running server
	EnvBin = "ENGRAM_WEAVIATE_BIN" // start this binary
	// EnvGRPC is the gRPC port of the server at EnvURL (.ci/weaviate start
	// writes it to DIR/grpc_port).
	EnvGRPC = "ENGRAM_WEAVIATE_GRPC_PORT"
)

// readyTimeout bounds a start: about 9 s on 2 idle cores, far more under load.
const readyTimeout = 3 * time.Minute

// DefaultBin is where .ci/weaviate build installs the pinned server.
func DefaultBin() string {
	cache := os.Getenv("XDG_CACHE_HOME")
	if cache == "" {
		home, _ := os.UserHomeDir()
		cache = filepath.Join(home, ".cache")
	}
	return filepath.Join(cache, "engram-ci", "weaviate-"+Version, "weaviate-server")
}

// Bin is the server binary tests may start: ENGRAM_WEAVIATE_BIN, else
// DefaultBin; "" when neither exists.
func Bin() string {
	if b := os.Getenv(EnvBin); b != "" {
		return b
	}
	if st, err := os.Stat(DefaultBin()); err == nil && !st.IsDir() {
		return DefaultBin()
	}
	return ""
}

// unavailable skips the test, or fails it under CI=true, where the server
// must be there.
func unavailable(t testing.TB, format string, a ...any) {
	t.Helper()
	msg := fmt.Sprintf(format, a...)
	if os.Getenv("CI") == "true" {
		t.Fatalf("weaviate: %s (CI=true: a missing server fails the test; run .ci/weaviate build)", msg)
	}
	skipnote.Skipf(t, "weaviate: %s (set %s, or %s, or run .ci/weaviate build)", msg, EnvURL, EnvBin)
}

var shared struct {
	mu      sync.Mutex
	main    bool // Main is in charge of stopping the server
	srv     *Server
	err     error
	started bool
}

// Main runs the package's tests, reports the tests skipped for want of a
// server (skipnote), and then stops the server URL started, if any. Call it from TestMain: os.Exit(weaviatetest.Main(m)).
func Main(m *testing.M) int {
	shared.mu.Lock()
	shared.main = true
	shared.mu.Unlock()
	code := m.Run()
	skipnote.Done() // without a server the suite is skipped: say so without -v
	shared.mu.Lock()
	defer shared.mu.Unlock()
	if shared.srv != nil {
		if err := shared.srv.stop(); err != nil {
			fmt.Fprintln(os.Stderr, "weaviatetest:", err)
		}
		os.RemoveAll(shared.srv.Dir)
	}
	return code
}

// URL returns the REST base URL of the package's shared server
// (ENGRAM_WEAVIATE_URL, or one started on first use and stopped by Main).
func URL(t testing.TB) string {
	t.Helper()
	if u := os.Getenv(EnvURL); u != "" {
		if err := waitReady(context.Background(), u, nil, 10*time.Second); err != nil {
			unavailable(t, "%s=%s is not ready: %v", EnvURL, u, err)
		}
		return strings.TrimRight(u, "/")
	}
	shared.mu.Lock()
	defer shared.mu.Unlock()
	if !shared.main {
		t.Fatal("weaviatetest.URL needs TestMain to call weaviatetest.Main, which stops the server")
	}
	if !shared.started {
		shared.started = true
		bin := Bin()
		if bin == "" {
			shared.err = fmt.Errorf("no server binary at %s", DefaultBin())
		} else {
			dir, err := os.MkdirTemp("", "engram-weaviate-")
			if err != nil {
				shared.err = err
			} else if shared.srv, shared.err = start(bin, dir); shared.err != nil {
				os.RemoveAll(dir)
			}
		}
	}
	if shared.err != nil {
		unavailable(t, "%v", shared.err)
	}
	return shared.srv.URL
}

// GRPCPort returns the gRPC port of the server at base, which URL returned:
// EnvGRPC for the server at EnvURL, else the started server's.
func GRPCPort(t testing.TB, base string) int {
	t.Helper()
	if u := os.Getenv(EnvURL); u != "" && strings.TrimRight(u, "/") == base {
		p, err := strconv.Atoi(os.Getenv(EnvGRPC))
		if err != nil || p < 1 || p > 65535 {
			unavailable(t, "%s=%s needs its gRPC port in %s (got %q)", EnvURL, u, EnvGRPC, os.Getenv(EnvGRPC))
		}
		return p
	}
	shared.mu.Lock()
	defer shared.mu.Unlock()
	if shared.srv == nil || shared.srv.URL != base {
		t.Fatalf("weaviatetest.GRPCPort: %s is not the shared server", base)
	}
	return shared.srv.GRPCPort
}

// Server is a Weaviate process this package started.
type Server struct {
	URL      string
	GRPCPort int
	Dir      string // holds data/ and log
	bin      string
	ports    ports
	cmd      *exec.Cmd
	done     chan struct{} // closed when the process has exited
}

// Start starts a private server for one test (from Bin) and stops it when
// the test ends: for tests that stop or restart their server.
func Start(t testing.TB) *Server {
	t.Helper()
	bin := Bin()
	if bin == "" {
		unavailable(t, "no server binary at %s", DefaultBin())
	}
	s, err := start(bin, t.TempDir())
	if err != nil {
		unavailable(t, "%v", err)
	}
	t.Cleanup(func() {
		if err := s.stop(); err != nil {
			t.Error(err)
		}
	})
	return s
}

// Stop stops the server by its PID (SIGTERM, then SIGKILL after 30 s); its
// data stays for Restart. It is safe to call from any goroutine.
func (s *Server) Stop() error { return s.stop() }

// Restart starts the stopped server again on the same ports and data, and
// waits until it is ready.
func (s *Server) Restart() error { return s.launch() }

type ports struct{ http, grpc, gossip, data, raft, raftRPC, profiling int }

// freePorts finds seven distinct free loopback ports. The server may still
// lose a race for one; start then tries again with new ones.
func freePorts() (ports, error) {
	var ls []net.Listener
	defer func() {
		for _, l := range ls {
			l.Close()
		}
	}()
	var p [7]int
	for i := range p {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return ports{}, fmt.Errorf("find a free port: %w", err)
		}
		ls = append(ls, l)
		p[i] = l.Addr().(*net.TCPAddr).Port
	}
	return ports{p[0], p[1], p[2], p[3], p[4], p[5], p[6]}, nil
}

func start(bin, dir string) (*Server, error) {
	var last error
	for attempt := 1; attempt <= 3; attempt++ {
		p, err := freePorts()
		if err != nil {
			return nil, err
		}
		s := &Server{bin: bin, Dir: dir, ports: p, GRPCPort: p.grpc, URL: "http://127.0.0.1:" + strconv.Itoa(p.http)}
		if last = s.launch(); last == nil {
			return s, nil
		}
		os.RemoveAll(filepath.Join(dir, "data"))
	}
	return nil, last
}

// environ is DESIGN.md §3's environment with this server's ports. The
// process gets nothing else from ours. DISABLE_TELEMETRY=true is mandatory
// (without it the server probes a cloud metadata address);
// GO_PROFILING_DISABLE=true keeps the profiling listener, which binds every
// interface, closed.
func (s *Server) environ() []string {
	p := s.ports
	itoa := strconv.Itoa
	return []string{
		"PATH=" + os.Getenv("PATH"),
		"HOME=" + s.Dir,
		"PERSISTENCE_DATA_PATH=" + filepath.Join(s.Dir, "data"),
		"AUTHENTICATION_ANONYMOUS_ACCESS_ENABLED=true",
		"DEFAULT_VECTORIZER_MODULE=none",
		"DISABLE_TELEMETRY=true",
		"ENABLE_MODULES=",
		"PROMETHEUS_MONITORING_ENABLED=false",
		"CLUSTER_HOSTNAME=node1",
		"CLUSTER_ADVERTISE_ADDR=127.0.0.1",
		"CLUSTER_BIND_ADDR=127.0.0.1",
		"CLUSTER_GOSSIP_BIND_PORT=" + itoa(p.gossip),
		"CLUSTER_DATA_BIND_PORT=" + itoa(p.data),
		"RAFT_PORT=" + itoa(p.raft),
		"RAFT_INTERNAL_RPC_PORT=" + itoa(p.raftRPC),
		"RAFT_BOOTSTRAP_EXPECT=1",
		"RAFT_JOIN=node1:" + itoa(p.raft),
		"GRPC_PORT=" + itoa(p.grpc),
		"GO_PROFILING_PORT=" + itoa(p.profiling),
		"GO_PROFILING_DISABLE=true",
	}
}

// launch starts the process and waits until it is ready.
func (s *Server) launch() error {
	if err := os.MkdirAll(filepath.Join(s.Dir, "data"), 0o755); err != nil {
		return err
	}
	logf, err := os.OpenFile(filepath.Join(s.Dir, "log"), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return err
	}
	cmd := exec.Command(s.bin, "--host", "127.0.0.1", "--port", strconv.Itoa(s.ports.http), "--scheme", "http")
	cmd.Env = s.environ()
	cmd.Stdout, cmd.Stderr = logf, logf
	cmd.SysProcAttr = procAttr()
	if err := cmd.Start(); err != nil {
		logf.Close()
		return fmt.Errorf("start %s: %w", s.bin, err)
	}
	s.cmd = cmd
	s.done = make(chan struct{})
	go func() {
		cmd.Wait()
		logf.Close()
		close(s.done)
	}()
	ctx, cancel := context.WithTimeout(context.Background(), readyTimeout)
	defer cancel()
	if err := waitReady(ctx, s.URL, s.done, readyTimeout); err != nil {
		s.stop()
		return fmt.Errorf("weaviate %s did not get ready: %w; log %s: %s", s.bin, err, filepath.Join(s.Dir, "log"), s.logTail())
	}
	return nil
}

func (s *Server) logTail() string {
	b, _ := os.ReadFile(filepath.Join(s.Dir, "log"))
	if len(b) > 800 {
		b = b[len(b)-800:]
	}
	return string(b)
}

// stop ends the process by its PID: SIGTERM, then SIGKILL after 30 s.
func (s *Server) stop() error {
	if s.cmd == nil {
		return nil
	}
	select {
	case <-s.done:
		s.cmd = nil
		return nil
	default:
	}
	s.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-s.done:
	case <-time.After(30 * time.Second):
		s.cmd.Process.Kill()
		<-s.done
	}
	s.cmd = nil
	return nil
}

// waitReady polls GET /v1/.well-known/ready until it answers 200, the
// process exits (done closes) or the time is up.
func waitReady(ctx context.Context, base string, done <-chan struct{}, timeout time.Duration) error {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	var last error
	for {
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, strings.TrimRight(base, "/")+"/v1/.well-known/ready", nil)
		resp, err := http.DefaultClient.Do(req)
		if err == nil {
			io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return nil
			}
			err = fmt.Errorf("readiness answered %d", resp.StatusCode)
		}
		last = err
		select {
		case <-done:
			return errors.New("the process exited")
		case <-ctx.Done():
			return fmt.Errorf("not ready within %s: %v", timeout, last)
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// ServerVersion is the version the server reports (GET /v1/meta), with a
// leading "v" as in Version.
func ServerVersion(t testing.TB, base string) string {
	t.Helper()
	resp, err := http.Get(base + "/v1/meta")
	if err != nil {
		t.Fatalf("weaviate meta: %v", err)
	}
	defer resp.Body.Close()
	var meta struct {
		Version string `json:"version"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&meta); err != nil {
		t.Fatalf("weaviate meta: %v", err)
	}
	return "v" + meta.Version
}

// Class returns a class name no other test uses ("T" + the test's name +
// random hex) and deletes that class, if created, when the test ends.
func Class(t testing.TB, base string) string {
	t.Helper()
	var b strings.Builder
	b.WriteString("T")
	for _, r := range t.Name() {
		if b.Len() >= 48 {
			break
		}
		if r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' {
			b.WriteRune(r)
		} else {
			b.WriteByte('_')
		}
	}
	var rnd [4]byte
	rand.Read(rnd[:])
	b.WriteString("_" + hex.EncodeToString(rnd[:]))
	name := b.String()
	t.Cleanup(func() {
		req, _ := http.NewRequest(http.MethodDelete, base+"/v1/schema/"+name, nil)
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		resp, err := http.DefaultClient.Do(req.WithContext(ctx))
		if err != nil {
			return // the server may be stopped on purpose; its data goes with it
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
	})
	return name
}
