package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/engram-memory/engram"
	"github.com/engram-memory/engram/backend/weaviate"
	"github.com/engram-memory/engram/server/httpapi"
	"github.com/engram-memory/engram/server/mcpserver"
)

func init() { register(newServe) }

// serveFlags are serve's options.
type serveFlags struct {
	addr, keys         string
	accessLog          string
	insecure           bool
	requestTimeout     time.Duration
	shutdownTimeout    time.Duration
	maxBody, maxImport int64
	noSocket           bool
}

func newServe(e *env) *cobra.Command {
	var f serveFlags
	c := &cobra.Command{
		Use:   "serve",
		Short: "Serve the store over HTTP: the JSON API under /v1 and MCP at /mcp",
		Long: `Serve the store over HTTP: the JSON API under /v1 (OpenAPI document at
/openapi.json), MCP over streamable HTTP at /mcp, /healthz and /readyz.

API keys come from --keys FILE and/or $ENGRAM_API_KEYS, both JSON:
  {"keys": [{"key": "…", "scope": {"team": "t1"}}]}
Every request then needs "Authorization: Bearer KEY" and is confined to the
key's scope. Without keys the server acts on the whole store, binds only a
loopback address (unless --insecure-no-auth) and answers only loopback Host
names. SIGINT or SIGTERM stops it after in-flight requests finish.

It also listens on a unix socket that only this user can reach (mode 0600 in
$XDG_RUNTIME_DIR/engram, else engram-UID in the temporary directory), named
after the store file: search, inject, brief, get, list and the prompt hooks on
the same store, with the same ENGRAM_* settings and the same engram binary,
send their request there instead of opening the file and loading the model
themselves, and run in-process as usual when no daemon answers
(ENGRAM_DAEMON=off: always in-process). --no-socket turns it off.

Failures go to stderr; --access-log text or json adds one line per request
(method, path, status, bytes, milliseconds, remote address), never a body, a
query string, a memory's text or a key.`,
		Example: `  engram serve --addr 127.0.0.1:7077
  engram serve --addr 0.0.0.0:7077 --keys /etc/engram/keys.json`,
		Args: args(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, _ []string) error { return e.serve(cmd.Context(), f) },
	}
	fl := c.Flags()
	fl.StringVar(&f.addr, "addr", "127.0.0.1:7077", "address to listen on")
	fl.StringVar(&f.keys, "keys", "", `API keys file: {"keys": [{"key": "…", "scope": {"team": "t1"}}]}`)
	fl.BoolVar(&f.insecure, "insecure-no-auth", false, "allow a non-loopback --addr without API keys (anyone who can reach it reads and deletes everything)")
	fl.DurationVar(&f.requestTimeout, "request-timeout", httpapi.DefaultRequestTimeout, "time limit of one request (import and export excepted)")
	fl.DurationVar(&f.shutdownTimeout, "shutdown-timeout", 30*time.Second, "how long a stop waits for in-flight requests")
	fl.Int64Var(&f.maxBody, "max-body", httpapi.DefaultMaxBodyBytes, "largest JSON request body (bytes)")
	fl.Int64Var(&f.maxImport, "max-import", httpapi.DefaultMaxImportBytes, "largest import body (bytes)")
	fl.StringVar(&f.accessLog, "access-log", "", "one line per request on stderr: text or json (default none)")
	fl.BoolVar(&f.noSocket, "no-socket", false, "do not serve this user's CLI calls and hooks on the local unix socket")
	return c
}

func (e *env) serve(ctx context.Context, f serveFlags) error {
	keys, err := loadKeys(f.keys, os.Getenv("ENGRAM_API_KEYS"), e)
	if err != nil {
		return err
	}
	if len(keys) == 0 && !f.insecure && !loopbackAddr(f.addr) {
		return usagef("serve: --addr %s is not a loopback address and no API keys are configured; "+
			"give --keys FILE (or $ENGRAM_API_KEYS), or --insecure-no-auth to serve everyone", f.addr)
	}
	if f.accessLog != "" && f.accessLog != "text" && f.accessLog != "json" {
		return usagef("serve: --access-log %q: want text or json", f.accessLog)
	}
	ln, err := net.Listen("tcp", f.addr)
	if err != nil {
		return usagef("serve: %v", err)
	}
	defer ln.Close()
	log := slog.New(slog.NewTextHandler(e.stderr, &slog.HandlerOptions{Level: slog.LevelInfo}))
	e.logger = log
	return e.withNewDB(ctx, func(db *engram.DB) error {
		if err := db.Warm(ctx); err != nil { // the index now, not on the first request
			return err
		}
		var access *slog.Logger
		switch f.accessLog {
		case "text":
			access = log
		case "json":
			access = slog.New(slog.NewJSONHandler(e.stderr, nil))
		}
		api, err := httpapi.New(db, httpapi.Config{Keys: keys, AnyHost: f.insecure, RequestTimeout: f.requestTimeout,
			MaxBodyBytes: f.maxBody, MaxImportBytes: f.maxImport, Logger: log, AccessLog: access})
		if err != nil {
			return usageError{fmt.Errorf("serve: %w", err)}
		}
		api.Handle("/mcp", mcpserver.HTTPHandler(mcpResolver(api), mcpserver.HTTPOptions{MaxBodyBytes: f.maxBody}))
		sctx, stop := signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
		defer stop()
		so := serveOptions{
			writeTimeout:    f.requestTimeout + 30*time.Second,
			shutdownTimeout: f.shutdownTimeout,
			onShutdown:      func() { api.SetReady(false) },
			log:             log,
		}
		// The socket first: once the line below is out, local calls use it.
		var local chan error
		if !f.noSocket {
			if local, err = e.serveLocal(sctx, db, f, so, log, access); err != nil {
				fmt.Fprintf(e.stderr, "engram: warning: CLI calls and hooks will not use this server: %v\n", err)
			}
		}
		auth := "no API keys: whole store, loopback only"
		if len(keys) > 0 {
			auth = fmt.Sprintf("%d API keys", len(keys))
		}
		fmt.Fprintf(e.stderr, "engram: serving %s on http://%s (%s)\n", db.Path(), ln.Addr(), auth)
		err = serveOn(sctx, ln, api, so)
		if local != nil {
			stop() // the socket's server stops with the network one
			if lerr := <-local; err == nil {
				err = lerr
			}
		}
		if err == nil {
			fmt.Fprintln(e.stderr, "engram: stopped")
		}
		return err
	})
}

// serveLocal serves db on the user's daemon socket (daemon.go) until ctx
// ends; the channel gives serveOn's result. The socket's API has no keys:
// only this user can connect, and this user can open the file anyway. Its
// body limits are the in-process command's (none), so a call answers the
// same through it.
func (e *env) serveLocal(ctx context.Context, db *engram.DB, f serveFlags, so serveOptions, log, access *slog.Logger) (chan error, error) {
	if weaviate.IsURL(db.Path()) {
		return nil, nil
	}
	key, err := storeKey(db.Path())
	if err != nil {
		return nil, err
	}
	ln, sock, err := listenDaemon(key)
	if err != nil || ln == nil {
		return nil, err
	}
	const unlimited = 1 << 62
	api, err := httpapi.New(db, httpapi.Config{RequestTimeout: f.requestTimeout, MaxBodyBytes: unlimited,
		MaxImportBytes: unlimited, Logger: log, AccessLog: access})
	if err != nil {
		ln.Close()
		return nil, err
	}
	so.onShutdown = func() { api.SetReady(false) }
	fmt.Fprintf(e.stderr, "engram: serving this user's CLI calls and hooks on %s\n", sock)
	h := daemonHandler(key, api) // this process's configuration, now
	done := make(chan error, 1)
	go func() { done <- serveOn(ctx, ln, h, so) }()
	return done, nil
}

// mcpResolver authenticates MCP requests with the API's keys and scopes.
func mcpResolver(api *httpapi.Server) mcpserver.Resolver {
	return func(r *http.Request) (mcpserver.Backend, error) {
		b, err := api.Authorize(r)
		if err != nil {
			var ae *httpapi.Error
			if errors.As(err, &ae) {
				return nil, &mcpserver.StatusError{Status: ae.Status, Code: ae.Code, Err: ae}
			}
			return nil, err
		}
		return b, nil
	}
}

// serveOptions tune serveOn.
type serveOptions struct {
	writeTimeout, shutdownTimeout time.Duration
	onShutdown                    func() // called as shutdown begins (listener already closed)
	log                           *slog.Logger
}

// serveOn serves h on ln until ctx ends, then shuts down gracefully: no new
// connections, in-flight requests run to completion (up to shutdownTimeout).
func serveOn(ctx context.Context, ln net.Listener, h http.Handler, o serveOptions) error {
	if o.writeTimeout <= 0 {
		o.writeTimeout = httpapi.DefaultRequestTimeout + 30*time.Second
	}
	if o.shutdownTimeout <= 0 {
		o.shutdownTimeout = 30 * time.Second
	}
	srv := &http.Server{
		Handler:           h,
		ReadHeaderTimeout: 10 * time.Second,
		ReadTimeout:       time.Minute,
		WriteTimeout:      o.writeTimeout,
		IdleTimeout:       2 * time.Minute,
		MaxHeaderBytes:    64 << 10,
	}
	if o.log != nil {
		srv.ErrorLog = slog.NewLogLogger(o.log.Handler(), slog.LevelWarn)
	}
	if o.onShutdown != nil {
		srv.RegisterOnShutdown(o.onShutdown)
	}
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	select {
	case err := <-errc:
		return fmt.Errorf("serve: %w", err)
	case <-ctx.Done():
	}
	sctx, cancel := context.WithTimeout(context.Background(), o.shutdownTimeout)
	defer cancel()
	err := srv.Shutdown(sctx)
	<-errc // http.ErrServerClosed once Shutdown began
	if err != nil {
		srv.Close()
		return fmt.Errorf("serve: stopping after %v with requests still running: %w", o.shutdownTimeout, err)
	}
	return nil
}

// loadKeys reads API keys from a file and/or the environment variable's JSON.
func loadKeys(path, fromEnv string, e *env) ([]httpapi.Key, error) {
	var keys []httpapi.Key
	if path != "" {
		fi, err := os.Stat(path)
		if err != nil {
			return nil, usagef("--keys: %v", err)
		}
		if fi.Mode().Perm()&0o077 != 0 {
			fmt.Fprintf(e.stderr, "engram: warning: --keys %s is readable by other users (mode %v); chmod 600 it\n", path, fi.Mode().Perm())
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return nil, usagef("--keys: %v", err)
		}
		k, err := httpapi.ParseKeys(data)
		if err != nil {
			return nil, usagef("--keys %s: %v", path, err)
		}
		keys = append(keys, k...)
	}
	if strings.TrimSpace(fromEnv) != "" {
		k, err := httpapi.ParseKeys([]byte(fromEnv))
		if err != nil {
			return nil, usagef("ENGRAM_API_KEYS: %v", err)
		}
		keys = append(keys, k...)
	}
	return keys, nil
}

// loopbackAddr reports whether a listen address binds loopback only.
func loopbackAddr(addr string) bool {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return false
	}
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}
