//go:build soak

package main

// The soak test (issue 14): clients mixing add, update, delete, touch, search
// and export across three tenants against a real "engram serve", which is
// SIGKILLed and restarted every minute. It is not part of the default run:
//
//	go test -tags soak -run TestSoak -v -timeout 30m ./cmd/engram \
//	    -soak.duration 5m -soak.clients 16 -soak.restart 1m
//
// It reports requests, errors, acknowledged writes missing (must be 0),
// cross-tenant results (must be 0) and latency percentiles, and fails when
// either count is not 0.

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"math/rand"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/engram-memory/engram/server/httpapi"
)

var (
	soakDuration = flag.Duration("soak.duration", 5*time.Minute, "how long the clients run")
	soakClients  = flag.Int("soak.clients", 16, "concurrent clients, spread over 3 tenants")
	soakRestart  = flag.Duration("soak.restart", time.Minute, "SIGKILL and restart the server this often")
)

// soakServer is the real engram serve, restarted by kill.
type soakServer struct {
	bin, db, keys, addr string
	cmd                 *exec.Cmd
	log                 *os.File
}

func (s *soakServer) start(t *testing.T) {
	t.Helper()
	s.cmd = exec.Command(s.bin, "--db", s.db, "serve", "--addr", s.addr, "--keys", s.keys)
	s.cmd.Env = append(os.Environ(), "ENGRAM_EMBEDDER=builtin")
	s.cmd.Stdout, s.cmd.Stderr = s.log, s.log
	if err := s.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(2 * time.Minute)
	for time.Now().Before(deadline) {
		resp, err := http.Get("http://" + s.addr + "/readyz")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return
			}
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Fatal("engram serve did not get ready within 2 minutes")
}

func (s *soakServer) kill() {
	s.cmd.Process.Signal(syscall.SIGKILL)
	s.cmd.Wait()
}

// soakMemory is what a client knows of one of its memories: what the server
// acknowledged, and texts of writes whose outcome it never heard.
type soakMemory struct {
	text    string   // acknowledged text ("" before the add was acknowledged)
	maybe   []string // texts of writes whose answer was lost (either may stand)
	deleted bool     // acknowledged delete
	gone    bool     // a delete whose answer was lost
	touches int      // acknowledged touches
}

type soakStats struct {
	mu                sync.Mutex
	requests, errs    int
	unreachable       int // connection errors while the server was down
	crossTenant       int
	latency           map[string][]time.Duration
	badExports, exps  int
	serverErrors      []string
	acknowledgedWrite int
}

func (st *soakStats) record(op string, d time.Duration) {
	st.mu.Lock()
	st.requests++
	st.latency[op] = append(st.latency[op], d)
	st.mu.Unlock()
}

func TestSoak(t *testing.T) {
	dir := t.TempDir()
	bin := filepath.Join(dir, "engram")
	if out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("build engram: %v\n%s", err, out)
	}
	tenants := []string{"a", "b", "c"}
	var kf httpapi.KeysFile
	for _, team := range tenants {
		kf.Keys = append(kf.Keys, httpapi.Key{Key: "soak-key-of-team-" + team, Scope: map[string]string{"team": team}})
	}
	keysPath := filepath.Join(dir, "keys.json")
	data, _ := json.Marshal(kf)
	if err := os.WriteFile(keysPath, data, 0o600); err != nil {
		t.Fatal(err)
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	logf, _ := os.Create(filepath.Join(dir, "serve.log"))
	defer logf.Close()
	srv := &soakServer{bin: bin, db: filepath.Join(dir, "soak.db"), keys: keysPath, addr: addr, log: logf}
	srv.start(t)

	st := &soakStats{latency: map[string][]time.Duration{}}
	var down atomic.Bool
	stop := time.Now().Add(*soakDuration)
	hc := &http.Client{Timeout: 60 * time.Second, Transport: &http.Transport{MaxIdleConnsPerHost: 64}}
	clients := make([]map[string]*soakMemory, *soakClients)
	var wg sync.WaitGroup
	for c := range *soakClients {
		team := tenants[c%len(tenants)]
		key := "soak-key-of-team-" + team
		mine := map[string]*soakMemory{}
		clients[c] = mine
		wg.Add(1)
		go func() {
			defer wg.Done()
			r := rand.New(rand.NewSource(int64(c)))
			// Clients of different tenants use the same ids: ids are
			// per-tenant namespaces.
			prefix := fmt.Sprintf("s%d", c/len(tenants))
			next := 0
			var ids []string
			do := func(op, method, path string, body any) (int, []byte, http.Header, error) {
				var rd io.Reader
				if body != nil {
					b, _ := json.Marshal(body)
					rd = bytes.NewReader(b)
				}
				req, _ := http.NewRequest(method, "http://"+addr+path, rd)
				req.Header.Set("Authorization", "Bearer "+key)
				if rd != nil {
					req.Header.Set("Content-Type", "application/json")
				}
				t0 := time.Now()
				resp, err := hc.Do(req)
				if err != nil {
					time.Sleep(20 * time.Millisecond) // the server is restarting: back off a little
					st.mu.Lock()
					if down.Load() {
						st.unreachable++
					} else {
						st.errs++
						st.serverErrors = append(st.serverErrors, op+": "+err.Error())
					}
					st.mu.Unlock()
					return 0, nil, nil, err
				}
				b, rerr := io.ReadAll(resp.Body)
				resp.Body.Close()
				if rerr != nil {
					st.mu.Lock()
					if down.Load() {
						st.unreachable++
					} else {
						st.errs++
						st.serverErrors = append(st.serverErrors, op+" body: "+rerr.Error())
					}
					st.mu.Unlock()
					return 0, nil, nil, rerr
				}
				st.record(op, time.Since(t0))
				if resp.StatusCode >= 500 {
					st.mu.Lock()
					st.errs++
					st.serverErrors = append(st.serverErrors, fmt.Sprintf("%s: %d %s", op, resp.StatusCode, b))
					st.mu.Unlock()
				}
				return resp.StatusCode, b, resp.Trailer, nil
			}
			checkScope := func(scope map[string]string, where string) {
				if scope["team"] != team {
					st.mu.Lock()
					st.crossTenant++
					st.serverErrors = append(st.serverErrors, fmt.Sprintf("team %s saw scope %v in %s", team, scope, where))
					st.mu.Unlock()
				}
			}
			live := func() string {
				for range 4 {
					if len(ids) == 0 {
						return ""
					}
					id := ids[r.Intn(len(ids))]
					if m := mine[id]; !m.deleted && !m.gone {
						return id
					}
				}
				return ""
			}
			for time.Now().Before(stop) {
				switch p := r.Intn(100); {
				case p < 35 || len(ids) < 5:
					id := fmt.Sprintf("%s-%d", prefix, next)
					next++
					text := fmt.Sprintf("team %s note %s about deploys caches and vaults %d", team, id, r.Intn(1000))
					m := &soakMemory{maybe: []string{text}}
					mine[id] = m
					ids = append(ids, id)
					code, _, _, err := do("add", "POST", "/v1/memories", map[string]any{"id": id, "text": text})
					if err == nil && code == http.StatusCreated {
						m.text, m.maybe = text, nil
					}
				case p < 50:
					id := live()
					if id == "" {
						continue
					}
					m := mine[id]
					text := fmt.Sprintf("team %s note %s updated %d", team, id, r.Intn(1000))
					code, _, _, err := do("update", "PATCH", "/v1/memories/"+id, map[string]any{"text": text})
					switch {
					case err != nil:
						m.maybe = append(m.maybe, text)
					case code == http.StatusOK:
						m.text, m.maybe = text, nil
					}
				case p < 57:
					id := live()
					if id == "" {
						continue
					}
					code, _, _, err := do("delete", "DELETE", "/v1/memories/"+id, nil)
					if err != nil {
						mine[id].gone = true
					} else if code == http.StatusOK {
						mine[id].deleted = true
					}
				case p < 67:
					id := live()
					if id == "" {
						continue
					}
					code, _, _, err := do("touch", "POST", "/v1/memories/"+id+"/touch", nil)
					if err == nil && code == http.StatusOK {
						mine[id].touches++
					}
				case p < 97:
					q := []string{"deploys", "caches vaults", "note updated", "team " + team}[r.Intn(4)]
					code, body, _, err := do("search", "POST", "/v1/search", map[string]any{"query": q, "limit": 10})
					if err == nil && code == http.StatusOK {
						var resp struct {
							Results []struct{ Scope map[string]string }
						}
						json.Unmarshal(body, &resp)
						for _, res := range resp.Results {
							checkScope(res.Scope, "search")
						}
					}
				default:
					code, body, trailer, err := do("export", "GET", "/v1/export", nil)
					if err == nil && code == http.StatusOK {
						lines := 0
						for _, line := range bytes.Split(bytes.TrimSpace(body), []byte("\n")) {
							if len(line) == 0 {
								continue
							}
							lines++
							var m struct{ Scope map[string]string }
							json.Unmarshal(line, &m)
							checkScope(m.Scope, "export")
						}
						st.mu.Lock()
						st.exps++
						if trailer.Get(httpapi.ExportCountTrailer) != fmt.Sprint(lines) {
							st.badExports++
						}
						st.mu.Unlock()
					}
				}
			}
		}()
	}
	restarts := 0
	for time.Now().Add(*soakRestart).Before(stop) {
		time.Sleep(*soakRestart)
		down.Store(true)
		srv.kill()
		srv.start(t)
		down.Store(false)
		restarts++
	}
	wg.Wait()
	// One more kill before checking: what was acknowledged survives it.
	down.Store(true)
	srv.kill()
	srv.start(t)
	restarts++
	down.Store(false)
	defer srv.kill()

	missing := 0
	checked := 0
	for c, mine := range clients {
		team := tenants[c%len(tenants)]
		key := "soak-key-of-team-" + team
		for id, m := range mine {
			req, _ := http.NewRequest("GET", "http://"+addr+"/v1/memories/"+id, nil)
			req.Header.Set("Authorization", "Bearer "+key)
			resp, err := hc.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			var got struct {
				Text  string
				Uses  int
				Scope map[string]string
			}
			json.Unmarshal(body, &got)
			acked := m.text != "" || m.deleted
			if acked {
				checked++
			}
			switch {
			case m.deleted:
				if resp.StatusCode != http.StatusNotFound {
					missing++
					t.Logf("client %d %s: an acknowledged delete came back: %d %s", c, id, resp.StatusCode, body)
				}
			case m.gone:
			case m.text != "":
				ok := resp.StatusCode == http.StatusOK && (got.Text == m.text || slices.Contains(m.maybe, got.Text)) && got.Uses >= m.touches
				if !ok {
					missing++
					t.Logf("client %d %s: acknowledged %q with %d touches, read %d %s", c, id, m.text, m.touches, resp.StatusCode, body)
				}
				if resp.StatusCode == http.StatusOK && got.Scope["team"] != team {
					st.crossTenant++
				}
			}
		}
	}
	all := []time.Duration{}
	var per []string
	ops := []string{"add", "update", "delete", "touch", "search", "export"}
	for _, op := range ops {
		ls := st.latency[op]
		slices.Sort(ls)
		all = append(all, ls...)
		if len(ls) > 0 {
			per = append(per, fmt.Sprintf("%s %d p50 %v p99 %v", op, len(ls), pct(ls, 50), pct(ls, 99)))
		}
	}
	slices.Sort(all)
	t.Logf("soak: %v, %d clients over 3 tenants, %d SIGKILL restarts", *soakDuration, *soakClients, restarts)
	t.Logf("requests %d, errors %d (5xx or connection errors while up), unreachable while restarting %d", st.requests, st.errs, st.unreachable)
	t.Logf("acknowledged writes checked %d, missing %d; cross-tenant results %d; exports %d, without a matching count trailer %d",
		checked, missing, st.crossTenant, st.exps, st.badExports)
	t.Logf("latency p50 %v, p99 %v; %s", pct(all, 50), pct(all, 99), strings.Join(per, "; "))
	for i, e := range st.serverErrors {
		if i == 20 {
			t.Logf("... %d more", len(st.serverErrors)-20)
			break
		}
		t.Logf("error: %s", e)
	}
	if missing != 0 || st.crossTenant != 0 || st.badExports != 0 {
		t.Fatalf("missing %d, cross-tenant %d, bad exports %d", missing, st.crossTenant, st.badExports)
	}
}

func pct(ls []time.Duration, p int) time.Duration {
	if len(ls) == 0 {
		return 0
	}
	return ls[min(len(ls)-1, len(ls)*p/100)]
}
