package main

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"runtime/debug"
	"strings"
	"time"

	"github.com/engram-memory/engram/backend/weaviate"
)

// The local daemon: "engram serve" also listens on a unix socket that only
// its user can reach, named after the store file, and the data commands
// (search, inject, the hooks, add, …) on that same store send their request
// there when it answers, instead of opening the file and loading the model
// in a process of their own. The answer is the one the command would have
// computed in-process: the same store, the same configuration (a daemon
// started with other ENGRAM_* settings, or by another build, is not used),
// and the same code path the ENGRAM_URL client already takes. No daemon, a
// stale socket, a daemon for another file or one that does not answer the
// probe in daemonProbeTimeout: the command runs in-process.

// DaemonEnv turns the daemon off for a client ("off": always in-process).
const DaemonEnv = "ENGRAM_DAEMON"

// daemonProbeTimeout bounds connecting to the socket and the daemon's
// answer to the probe; past it the command runs in-process. A variable for
// tests that must reach the daemon on a slow machine (-race, under load).
var daemonProbeTimeout = 250 * time.Millisecond

// daemonIdentityPath is the probe: which store and configuration a daemon
// serves. It is answered on the socket only.
const daemonIdentityPath = "/engram-daemon"

// daemonIdentity is the probe's answer.
type daemonIdentity struct {
	Store  string `json:"store"`  // storeKey of the file it serves
	Config string `json:"config"` // configFingerprint of its process
	PID    int    `json:"pid"`
}

// configEnv are the variables that change what a command computes on a
// store (optionsFromEnv's and the built-in model's precision).
var configEnv = []string{
	"ENGRAM_EMBEDDER", "ENGRAM_EMBED_URL", "ENGRAM_EMBED_MODEL", "ENGRAM_EMBED_API_KEY", "ENGRAM_EMBED_TIMEOUT",
	"ENGRAM_BERT_PRECISION", "ENGRAM_VECTOR_WEIGHT",
	"ENGRAM_LLM_URL", "ENGRAM_LLM_MODEL", "ENGRAM_LLM_API_KEY",
	"ENGRAM_RERANK", "ENGRAM_RERANK_URL", "ENGRAM_RERANK_MODEL", "ENGRAM_RERANK_API_KEY",
}

// configFingerprint hashes this process's configuration and build: a
// client uses a daemon only when both are the same as its own.
func configFingerprint() string {
	h := sha256.New()
	for _, k := range configEnv {
		fmt.Fprintf(h, "%s=%q\n", k, os.Getenv(k))
	}
	if bi, ok := debug.ReadBuildInfo(); ok {
		fmt.Fprintf(h, "build %s %s\n", bi.Main.Path, bi.Main.Version)
		for _, s := range bi.Settings {
			if strings.HasPrefix(s.Key, "vcs.") {
				fmt.Fprintf(h, "%s=%s\n", s.Key, s.Value)
			}
		}
	}
	if exe, err := os.Executable(); err == nil {
		if fi, err := os.Stat(exe); err == nil {
			// A rebuilt binary at the same path is another build.
			fmt.Fprintf(h, "exe %s %d %d\n", exe, fi.Size(), fi.ModTime().UnixNano())
		}
	}
	return hex.EncodeToString(h.Sum(nil))
}

// storeKey names a store file the same way in every process: its absolute
// path with symbolic links resolved.
func storeKey(path string) (string, error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return "", err
	}
	if real, err := filepath.EvalSymlinks(abs); err == nil {
		return real, nil
	}
	return abs, nil
}

// daemonSocket is the socket a daemon for the store key listens on, in
// the user's private runtime directory (see daemonDir).
func daemonSocket(dir, key string) string {
	sum := sha256.Sum256([]byte(key))
	return filepath.Join(dir, "engram-"+hex.EncodeToString(sum[:10])+".sock")
}

// daemonClient returns a client of the daemon serving the store at path
// with this process's configuration, or nil when there is none (or it does
// not answer the probe in time): the caller then runs in-process.
func (e *env) daemonClient(ctx context.Context, path string) *client {
	if strings.EqualFold(os.Getenv(DaemonEnv), "off") || weaviate.IsURL(path) {
		return nil
	}
	dir, err := daemonDir(false)
	if err != nil || dir == "" {
		return nil
	}
	key, err := storeKey(path)
	if err != nil {
		return nil
	}
	sock := daemonSocket(dir, key)
	if _, err := os.Lstat(sock); err != nil {
		return nil // no daemon: the common case costs one stat
	}
	c := newSocketClient(sock)
	pctx, cancel := context.WithTimeout(ctx, daemonProbeTimeout)
	defer cancel()
	var id daemonIdentity
	if err := c.do(pctx, http.MethodGet, daemonIdentityPath, nil, &id); err != nil ||
		id.Store != key || id.Config != configFingerprint() {
		c.hc.CloseIdleConnections()
		return nil
	}
	return c
}

// newSocketClient is a client of the daemon on the unix socket sock.
func newSocketClient(sock string) *client {
	tr := &http.Transport{
		DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
			var d net.Dialer
			return d.DialContext(ctx, "unix", sock)
		},
		MaxIdleConnsPerHost: 2,
		IdleConnTimeout:     time.Minute,
	}
	// The host is a loopback name: the daemon's API answers only those.
	return &client{base: "http://localhost", hc: &http.Client{Transport: tr}}
}

// daemonHandler answers the probe and passes everything else to api.
func daemonHandler(key string, api http.Handler) http.Handler {
	id, err := json.Marshal(daemonIdentity{Store: key, Config: configFingerprint(), PID: os.Getpid()})
	if err != nil {
		panic(err) // a struct of strings and an int always encodes
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == daemonIdentityPath && r.Method == http.MethodGet {
			w.Header().Set("Content-Type", "application/json")
			w.Write(id)
			return
		}
		api.ServeHTTP(w, r)
	})
}
