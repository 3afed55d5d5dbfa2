package sdk_test

// Helpers: build engram from the repository once, start a real "engram serve"
// on a free loopback port with the vectors' keys, stop it by its PID.

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/engram-memory/engram/internal/skipnote"
)

// vectorsPath is the shared test vectors' file, relative to this package.
const vectorsPath = "testvectors/vectors.json"

// vectors is the shared test vectors' file as the runners read it.
type vectors struct {
	Embedder string `json:"embedder"`
	Keys     map[string]struct {
		Key   string            `json:"key"`
		Scope map[string]string `json:"scope,omitempty"`
	} `json:"keys"`
	Cases []vectorCase `json:"cases"`
}

type vectorCase struct {
	Name    string            `json:"name"`
	As      *string           `json:"as"`
	Op      string            `json:"op"`
	ID      string            `json:"id,omitempty"`
	Query   map[string]any    `json:"query,omitempty"`
	Body    json.RawMessage   `json:"body,omitempty"`
	Method  string            `json:"method,omitempty"`
	Path    string            `json:"path,omitempty"`
	RawBody *string           `json:"raw_body,omitempty"`
	Headers map[string]string `json:"headers,omitempty"`
	Expect  struct {
		Status       int            `json:"status"`
		Code         string         `json:"code,omitempty"`
		IDs          []string       `json:"ids,omitempty"`
		JSON         map[string]any `json:"json,omitempty"`
		HasNext      *bool          `json:"has_next,omitempty"`
		SkippedLines []int          `json:"skipped_lines,omitempty"`
		ToolsInclude []string       `json:"tools_include,omitempty"`
	} `json:"expect"`
}

func loadVectors(t *testing.T) *vectors {
	t.Helper()
	data, err := os.ReadFile(vectorsPath)
	if err != nil {
		t.Fatal(err)
	}
	var v vectors
	if err := json.Unmarshal(data, &v); err != nil {
		t.Fatalf("%s: %v", vectorsPath, err)
	}
	return &v
}

var (
	buildOnce sync.Once
	builtBin  string
	buildErr  error
	buildDir  string
)

func TestMain(m *testing.M) {
	code := m.Run()
	skipnote.Done() // a client suite skipped for a missing tool says so without -v
	if buildDir != "" {
		os.RemoveAll(buildDir)
	}
	os.Exit(code)
}

// engramBin builds cmd/engram from this repository once per test binary.
func engramBin(t *testing.T) string {
	t.Helper()
	buildOnce.Do(func() {
		buildDir, buildErr = os.MkdirTemp("", "engram-sdk-bin-")
		if buildErr != nil {
			return
		}
		builtBin = filepath.Join(buildDir, "engram")
		cmd := exec.Command("go", "build", "-o", builtBin, "../cmd/engram")
		cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
		if out, err := cmd.CombinedOutput(); err != nil {
			buildErr = fmt.Errorf("go build ../cmd/engram: %v\n%s", err, out)
		}
	})
	if buildErr != nil {
		t.Fatal(buildErr)
	}
	return builtBin
}

// server is a running engram serve.
type server struct {
	URL string
	cmd *exec.Cmd
}

// startServer starts engram serve on a fresh store in a temporary folder,
// with the vectors' keys and embedder, on 127.0.0.1 and a port the kernel
// picks, and stops it (SIGTERM to its PID, then SIGKILL) when t ends.
func startServer(t *testing.T, v *vectors) *server {
	t.Helper()
	bin := engramBin(t)
	dir := t.TempDir()
	type key struct {
		Key   string            `json:"key"`
		Scope map[string]string `json:"scope"`
	}
	var file struct {
		Keys []key `json:"keys"`
	}
	for _, k := range v.Keys {
		if len(k.Scope) > 0 {
			file.Keys = append(file.Keys, key{k.Key, k.Scope})
		}
	}
	data, _ := json.Marshal(file)
	keys := filepath.Join(dir, "keys.json")
	if err := os.WriteFile(keys, data, 0o600); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, "--db", filepath.Join(dir, "engram.db"), "serve", "--addr", "127.0.0.1:0", "--keys", keys)
	cmd.Env = append(cleanEnv(), "ENGRAM_EMBEDDER="+v.Embedder)
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	s := &server{cmd: cmd}
	t.Cleanup(s.stop)
	found := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			line := sc.Text()
			if i := strings.Index(line, " on http://"); i >= 0 && strings.HasPrefix(line, "engram: serving ") {
				u := strings.Fields(line[i+len(" on "):])[0]
				select {
				case found <- u:
				default:
				}
			}
		}
		io.Copy(io.Discard, stderr)
	}()
	select {
	case s.URL = <-found:
	case <-time.After(2 * time.Minute):
		t.Fatal("engram serve did not say where it serves within 2 minutes")
	}
	for deadline := time.Now().Add(time.Minute); ; {
		resp, err := http.Get(s.URL + "/readyz")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				break
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("engram serve at %s is not ready: %v", s.URL, err)
		}
		time.Sleep(20 * time.Millisecond)
	}
	return s
}

func (s *server) stop() {
	if s.cmd.Process == nil {
		return
	}
	_ = s.cmd.Process.Signal(syscall.SIGTERM)
	done := make(chan struct{})
	go func() { s.cmd.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(30 * time.Second):
		_ = s.cmd.Process.Kill()
		<-done
	}
}

// cleanEnv is the environment without the ENGRAM_ variables of whoever runs
// the tests, so that only what a test sets reaches the server.
func cleanEnv() []string {
	var out []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "ENGRAM_") {
			out = append(out, kv)
		}
	}
	return out
}
