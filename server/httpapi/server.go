// Package httpapi serves an Engram store over HTTP as JSON (DESIGN §8): memories,
// search, the delivery paths, import and export, each request confined to the
// scope of the API key that made it.
package httpapi

import (
	"crypto/sha256"
	"crypto/subtle"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"sync/atomic"
	"time"

	"github.com/engram-memory/engram"
	"github.com/engram-memory/engram/memory"
)

// Defaults for the zero fields of Config.
const (
	DefaultMaxBodyBytes   = 8 << 20   // one JSON request body
	DefaultMaxImportBytes = 256 << 20 // one JSONL import body
	DefaultMaxLimit       = 1000      // results or items one request may ask for
	DefaultMaxBudget      = 100_000   // characters of a brief or an injection
	DefaultMaxBatch       = 1000      // memories in one POST /v1/memories
	DefaultRequestTimeout = 30 * time.Second
	// MinKeyLength is the shortest API key accepted (bytes).
	MinKeyLength = 16
)

// Key is an API key and the scope every request made with it is confined to.
type Key struct {
	Key   string            `json:"key"`
	Scope map[string]string `json:"scope"`
}

// Config configures a Server. Zero fields take the defaults above.
type Config struct {
	// Keys, when any are given, are required on every /v1 request as
	// "Authorization: Bearer KEY". Without keys every request acts on the whole
	// store, and only requests whose Host is a loopback name are served.
	Keys []Key
	// AnyHost serves a keyless server under any Host header (the operator chose
	// to expose it without authentication). Without it a keyless server answers
	// only Host localhost, 127.0.0.1 or [::1], which defeats DNS rebinding.
	AnyHost bool

	MaxBodyBytes   int64
	MaxImportBytes int64
	MaxLimit       int
	MaxBudget      int
	MaxBatch       int
	// RequestTimeout bounds every request except import and export streams.
	RequestTimeout time.Duration
	// Logger receives request failures and panics; nil is silent.
	Logger *slog.Logger
	// AccessLog, when set, gets one line per request: method, path, status,
	// bytes and duration. Never a body, a query string, a memory's text or a
	// key.
	AccessLog *slog.Logger
}

// Backend is the tenant a request acts on: the whole store (*engram.DB) or
// one tenant's view of it (*engram.Scoped).
type Backend = engram.Tenant

// tenant is who a request acts as.
type tenant struct {
	b     Backend
	scope map[string]string // nil for the keyless whole-store tenant
}

type compiledKey struct {
	hash [sha256.Size]byte
	t    *tenant
}

// Server is the HTTP API over one open store. It is an http.Handler.
type Server struct {
	db     *engram.DB
	cfg    Config
	log    *slog.Logger
	keys   []compiledKey
	open   *tenant // the keyless tenant; nil when keys are configured
	routes []route
	mounts []mount
	ready  atomic.Bool
	kind   string // the backend's kind (DB.Kind), for /readyz
}

// New returns a server for db. Every key must be at least MinKeyLength bytes,
// unique, and bound to a non-empty valid scope: a key without one could read
// and delete every tenant's memories.
func New(db *engram.DB, cfg Config) (*Server, error) {
	if db == nil {
		return nil, errors.New("httpapi: no store")
	}
	setDefaults(&cfg)
	s := &Server{db: db, cfg: cfg, log: cfg.Logger}
	if s.log == nil {
		s.log = slog.New(slog.DiscardHandler)
	}
	seen := map[[sha256.Size]byte]int{}
	for i, k := range cfg.Keys {
		if len(k.Key) < MinKeyLength {
			return nil, fmt.Errorf("%w: key %d: shorter than %d bytes", engram.ErrInvalid, i+1, MinKeyLength)
		}
		if j := strings.IndexFunc(k.Key, func(r rune) bool { return r < 0x21 || r > 0x7e }); j >= 0 {
			// An Authorization header carries visible ASCII only: a key with a
			// space, NUL, NBSP or any other character could never be sent.
			return nil, fmt.Errorf("%w: key %d: character %q at byte %d; a key is printable ASCII without whitespace", engram.ErrInvalid, i+1, []rune(k.Key[j:])[0], j)
		}
		view, err := db.WithScope(k.Scope)
		if err != nil {
			return nil, fmt.Errorf("key %d (scope %q): %w", i+1, memory.FormatScope(k.Scope), err)
		}
		h := sha256.Sum256([]byte(k.Key))
		if j, dup := seen[h]; dup {
			return nil, fmt.Errorf("%w: key %d repeats key %d", engram.ErrInvalid, i+1, j+1)
		}
		seen[h] = i
		s.keys = append(s.keys, compiledKey{hash: h, t: &tenant{b: view, scope: view.Scope()}})
	}
	if err := checkKeyScopes(cfg.Keys); err != nil {
		return nil, err
	}
	if len(s.keys) == 0 {
		s.open = &tenant{b: db}
	}
	s.kind = db.Kind()
	s.routes = s.routeTable()
	s.ready.Store(true)
	return s, nil
}

// checkKeyScopes refuses key sets in which two keys' scopes overlap without
// nesting, such as {"team":"b"} and {"user":"u1"}: a memory of scope
// {"team":"b","user":"u1"} would be inside both, so either key could plant
// memories in the other's briefings and searches, or change and delete the
// other's. Scopes that conflict on a key (team=a, team=b) see disjoint
// memories; nested scopes are parent and child, and a parent sees (and may
// write) its children's memories, as a child never sees its parent's.
func checkKeyScopes(keys []Key) error {
	for i := range keys {
		for j := i + 1; j < len(keys); j++ {
			a, b := keys[i].Scope, keys[j].Scope
			if !compatible(a, b) || memory.Inside(a, b) || memory.Inside(b, a) {
				continue
			}
			union := map[string]string{}
			for k, v := range a {
				union[k] = v
			}
			for k, v := range b {
				union[k] = v
			}
			return fmt.Errorf("%w: keys %d (scope %s) and %d (scope %s) overlap without nesting: a memory of scope %s "+
				"would belong to both, so each could write into the other's view; give them scopes that differ in one "+
				"key's value (team=a and team=b) or that nest (team=a and team=a,user=u1)",
				engram.ErrInvalid, i+1, memory.FormatScope(a), j+1, memory.FormatScope(b), memory.FormatScope(union))
		}
	}
	return nil
}

// compatible reports whether no key of a and b has two different values: a
// memory can then lie inside both.
func compatible(a, b map[string]string) bool {
	for k, v := range a {
		if w, ok := b[k]; ok && w != v {
			return false
		}
	}
	return true
}

func setDefaults(c *Config) {
	if c.MaxBodyBytes <= 0 {
		c.MaxBodyBytes = DefaultMaxBodyBytes
	}
	if c.MaxImportBytes <= 0 {
		c.MaxImportBytes = DefaultMaxImportBytes
	}
	if c.MaxLimit <= 0 {
		c.MaxLimit = DefaultMaxLimit
	}
	if c.MaxBudget <= 0 {
		c.MaxBudget = DefaultMaxBudget
	}
	if c.MaxBatch <= 0 {
		c.MaxBatch = DefaultMaxBatch
	}
	if c.RequestTimeout <= 0 {
		c.RequestTimeout = DefaultRequestTimeout
	}
}

// Authenticated reports whether the server requires API keys.
func (s *Server) Authenticated() bool { return len(s.keys) > 0 }

// SetReady changes what GET /readyz answers: a server being shut down marks
// itself not ready so that a load balancer stops sending it new requests.
func (s *Server) SetReady(ok bool) { s.ready.Store(ok) }

// authenticate finds the tenant of a request: the key's, compared in constant
// time against every key (hashes first, so that length leaks nothing).
func (s *Server) authenticate(r *http.Request) (*tenant, error) {
	if s.open != nil {
		return s.open, nil
	}
	h := r.Header.Get("Authorization")
	if h == "" {
		return nil, errorf(http.StatusUnauthorized, CodeUnauthorized, "missing Authorization: Bearer API key")
	}
	scheme, tok, ok := strings.Cut(h, " ")
	tok = strings.TrimSpace(tok)
	if !ok || !strings.EqualFold(scheme, "Bearer") || tok == "" {
		return nil, errorf(http.StatusUnauthorized, CodeUnauthorized, "Authorization must be: Bearer API_KEY")
	}
	sum := sha256.Sum256([]byte(tok))
	var found *tenant
	for i := range s.keys {
		if subtle.ConstantTimeCompare(sum[:], s.keys[i].hash[:]) == 1 {
			found = s.keys[i].t
		}
	}
	if found == nil {
		return nil, errorf(http.StatusUnauthorized, CodeUnauthorized, "invalid API key")
	}
	return found, nil
}

// Authorize returns the view of the store a request may act on: its API
// key's scoped view, or the whole store on a server without keys. A refusal
// is an *Error (401 unauthorized). Mounted handlers (such as MCP at /mcp) call
// it to apply the same keys and scopes as the JSON API.
func (s *Server) Authorize(r *http.Request) (Backend, error) {
	t, err := s.authenticate(r)
	if err != nil {
		return nil, err
	}
	return t.b, nil
}

// hostAllowed applies the keyless server's loopback Host rule.
func (s *Server) hostAllowed(r *http.Request) bool {
	if s.open == nil || s.cfg.AnyHost {
		return true
	}
	host := r.Host
	if h, _, err := net.SplitHostPort(host); err == nil {
		host = h
	}
	host = strings.Trim(host, "[]")
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}
