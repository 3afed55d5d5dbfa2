package httpapi

import (
	"context"
	"errors"
	"io"
	"mime"
	"net"
	"net/http"
	"net/url"
	"runtime/debug"
	"sort"
	"strings"
	"time"
)

// bodyKind says what a route reads.
type bodyKind int

const (
	bodyNone  bodyKind = iota // no body expected (any sent is bounded like JSON)
	bodyJSON                  // one JSON value, at most MaxBodyBytes
	bodyJSONL                 // a JSONL stream, at most MaxImportBytes
)

// handlerFunc serves one route for a tenant; id is the {id} path segment.
type handlerFunc func(w http.ResponseWriter, r *http.Request, t *tenant, id string) error

// route is one method and path of the API, in OpenAPI form ("/v1/memories/{id}").
type route struct {
	method, path string
	public       bool // no key needed (health, readiness, the API document)
	body         bodyKind
	stream       bool // long-running stream: no request timeout, deadlines lifted
	h            handlerFunc
}

// mount is a handler served under a path prefix (see Handle).
type mount struct {
	prefix string
	h      http.Handler
}

// Handle serves h at prefix and below (such as "/mcp") behind the server's
// host and origin checks, body limit, request timeout and panic recovery;
// h authenticates with Authorize. Call it before serving.
func (s *Server) Handle(prefix string, h http.Handler) {
	s.mounts = append(s.mounts, mount{prefix: strings.TrimSuffix(prefix, "/"), h: h})
}

// Routes lists the API's routes as "METHOD /path" (OpenAPI form), sorted.
func (s *Server) Routes() []string {
	out := make([]string, len(s.routes))
	for i, rt := range s.routes {
		out[i] = rt.method + " " + rt.path
	}
	sort.Strings(out)
	return out
}

// match finds the route for a path and method. When the path exists under
// other methods only, it returns those methods.
func (s *Server) match(r *http.Request) (rt *route, id string, allow []string, err error) {
	segs := strings.Split(strings.TrimPrefix(r.URL.EscapedPath(), "/"), "/")
	for i := range s.routes {
		cand := &s.routes[i]
		pat := strings.Split(strings.TrimPrefix(cand.path, "/"), "/")
		if len(pat) != len(segs) {
			continue
		}
		var got string
		ok := true
		for j, p := range pat {
			if p == "{id}" {
				v, uerr := url.PathUnescape(segs[j])
				if uerr != nil || v == "" {
					ok = false
					break
				}
				got = v
			} else if p != segs[j] {
				ok = false
				break
			}
		}
		if !ok {
			continue
		}
		if cand.method == r.Method || (cand.method == http.MethodGet && r.Method == http.MethodHead) {
			return cand, got, nil, nil
		}
		allow = append(allow, cand.method)
	}
	if len(allow) > 0 {
		return nil, "", allow, errorf(http.StatusMethodNotAllowed, CodeMethodNotAllowed,
			"method %s is not allowed on %s (allowed: %s)", r.Method, r.URL.Path, strings.Join(allow, ", "))
	}
	return nil, "", nil, errorf(http.StatusNotFound, CodeNotFound, "no such endpoint: %s %s", r.Method, r.URL.Path)
}

// ServeHTTP routes one request: host and origin checks, routing, the API key,
// body limits, the request timeout, and panic recovery.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	rec := &recorder{ResponseWriter: w}
	start := time.Now()
	defer func() {
		if v := recover(); v != nil {
			if v == http.ErrAbortHandler {
				panic(v)
			}
			s.log.Error("panic serving request", "method", r.Method, "path", r.URL.Path, "panic", v, "stack", string(debug.Stack()))
			if !rec.wrote {
				writeError(rec, errorf(http.StatusInternalServerError, CodeInternal, "internal error (details are in the server log)"))
			}
		}
		s.log.Debug("request", "method", r.Method, "path", r.URL.Path, "status", rec.status, "duration", time.Since(start))
		if al := s.cfg.AccessLog; al != nil {
			al.Info("request", "method", r.Method, "path", r.URL.Path, "status", rec.status, "bytes", rec.bytes,
				"ms", float64(time.Since(start).Microseconds())/1000, "remote", r.RemoteAddr)
		}
	}()
	if err := s.serve(rec, r); err != nil {
		e, ok := toError(err)
		if !ok || e.Status >= 500 {
			s.log.Error("request failed", "method", r.Method, "path", r.URL.Path, "err", err)
		}
		if rec.wrote {
			return // a stream already started: the client sees it cut short
		}
		writeError(rec, e)
	}
}

func (s *Server) serve(w *recorder, r *http.Request) error {
	if !s.hostAllowed(r) {
		return errorf(http.StatusForbidden, CodeForbidden,
			"host %q is not a loopback name; a server without API keys answers only localhost", r.Host)
	}
	if s.open != nil && r.Header.Get("Origin") != "" {
		// No web page may drive a keyless server from a browser.
		return errorf(http.StatusForbidden, CodeForbidden, "cross-origin requests are refused by a server without API keys")
	}
	for _, m := range s.mounts {
		if r.URL.Path == m.prefix || strings.HasPrefix(r.URL.Path, m.prefix+"/") {
			if r.ContentLength > s.cfg.MaxBodyBytes {
				return errorf(http.StatusRequestEntityTooLarge, CodeTooLarge, "request body is larger than %d bytes", s.cfg.MaxBodyBytes)
			}
			r.Body = http.MaxBytesReader(w, r.Body, s.cfg.MaxBodyBytes)
			ctx, cancel := context.WithTimeout(r.Context(), s.cfg.RequestTimeout)
			defer cancel()
			m.h.ServeHTTP(w, r.WithContext(ctx))
			return nil
		}
	}
	rt, id, allow, err := s.match(r)
	if err != nil {
		if len(allow) > 0 {
			w.Header().Set("Allow", strings.Join(allow, ", "))
		}
		return err
	}
	var t *tenant
	if !rt.public {
		if t, err = s.authenticate(r); err != nil {
			return err
		}
	}
	if _, err := url.ParseQuery(r.URL.RawQuery); err != nil {
		// r.URL.Query drops a pair it cannot decode: a cursor or a scope
		// lost that way would silently widen the request.
		return errorf(http.StatusBadRequest, CodeBadRequest, "query string: %v", err)
	}
	limit := s.cfg.MaxBodyBytes
	if rt.body == bodyJSONL {
		limit = s.cfg.MaxImportBytes
	}
	if r.ContentLength > limit {
		return errorf(http.StatusRequestEntityTooLarge, CodeTooLarge, "request body is larger than %d bytes", limit)
	}
	if err := checkContentType(r, rt.body); err != nil {
		return err
	}
	r.Body = http.MaxBytesReader(w, r.Body, limit)
	if rt.stream {
		rc := http.NewResponseController(w)
		// A stream may take long, but a body must keep arriving: the read
		// deadline moves with what has arrived (see paced), so a client
		// trickling bytes cannot hold the request open past every timeout.
		// Not every writer supports deadlines; the server's timeouts then apply.
		if rt.body != bodyNone && rc.SetReadDeadline(time.Now().Add(s.cfg.RequestTimeout)) == nil {
			r.Body = newPaced(r.Body, rc, s.cfg.RequestTimeout)
		} else {
			_ = rc.SetReadDeadline(time.Time{})
		}
		_ = rc.SetWriteDeadline(time.Time{})
	} else {
		ctx, cancel := context.WithTimeout(r.Context(), s.cfg.RequestTimeout)
		defer cancel()
		r = r.WithContext(ctx)
	}
	return rt.h(w, r, t, id)
}

// MinStreamRate is the slowest a streamed request body (an import) may
// arrive, on average over the request timeout.
const MinStreamRate = 64 << 10 // bytes per second

// paced is a request body with a read deadline that each byte moves
// 1/MinStreamRate later, never more than grace ahead of now: a body that
// keeps up is never cut, one that trickles (a byte every few seconds) is
// within the grace of falling behind, and a burst buys no more than the
// grace (bytes already sent do not pay for a later trickle).
type paced struct {
	io.ReadCloser
	rc    interface{ SetReadDeadline(time.Time) error }
	grace time.Duration
	due   time.Time        // the read deadline; start + grace at first
	now   func() time.Time // time.Now; a test's clock
}

func newPaced(body io.ReadCloser, rc *http.ResponseController, grace time.Duration) *paced {
	return &paced{ReadCloser: body, rc: rc, grace: grace, due: time.Now().Add(grace), now: time.Now}
}

func (p *paced) Read(b []byte) (int, error) {
	_ = p.rc.SetReadDeadline(p.due)
	n, err := p.ReadCloser.Read(b)
	if n > 0 {
		p.due = p.due.Add(time.Duration(n) * time.Second / MinStreamRate)
		if most := p.now().Add(p.grace); p.due.After(most) {
			p.due = most
		}
	}
	if err == io.EOF {
		_ = p.rc.SetReadDeadline(time.Time{}) // all in: the rest is the server's work
	}
	var ne net.Error
	if err != nil && errors.As(err, &ne) && ne.Timeout() {
		return n, errorf(http.StatusRequestTimeout, CodeTimeout, "the request body arrived slower than %d bytes a second", MinStreamRate)
	}
	return n, err
}

// checkContentType refuses a body sent with one of the types a browser may
// send cross-site without asking first (text/plain, forms): a web page could
// otherwise drive the API with a visitor's credentials or network position.
// No type at all is accepted (curl, scripts).
func checkContentType(r *http.Request, kind bodyKind) error {
	ct := r.Header.Get("Content-Type")
	if ct == "" || r.ContentLength == 0 {
		return nil // no type, or an empty body, whatever its type
	}
	mt, _, err := mime.ParseMediaType(ct)
	if err != nil {
		return errorf(http.StatusUnsupportedMediaType, CodeUnsupportedMediaType, "Content-Type %q cannot be parsed", ct)
	}
	switch mt {
	case "text/plain", "application/x-www-form-urlencoded", "multipart/form-data":
		want := "application/json"
		if kind == bodyJSONL {
			want = "application/x-ndjson"
		}
		return errorf(http.StatusUnsupportedMediaType, CodeUnsupportedMediaType, "Content-Type %s is refused; send %s", mt, want)
	}
	return nil
}

// recorder remembers whether the response has started, its status and how
// many bytes of body went out.
type recorder struct {
	http.ResponseWriter
	status int
	wrote  bool
	bytes  int64
}

func (r *recorder) WriteHeader(code int) {
	if !r.wrote {
		r.status, r.wrote = code, true
	}
	r.ResponseWriter.WriteHeader(code)
}

func (r *recorder) Write(b []byte) (int, error) {
	if !r.wrote {
		r.status, r.wrote = http.StatusOK, true
	}
	n, err := r.ResponseWriter.Write(b)
	r.bytes += int64(n)
	return n, err
}

// Unwrap lets http.ResponseController reach the connection's writer.
func (r *recorder) Unwrap() http.ResponseWriter { return r.ResponseWriter }

// Flush passes flushes through.
func (r *recorder) Flush() {
	if f, ok := r.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}
