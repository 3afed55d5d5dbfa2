package httpapi

import (
	"bytes"
	"context"
	_ "embed"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"time"

	"github.com/engram-memory/engram"
	"github.com/engram-memory/engram/memory"
)

//go:embed openapi.json
var openAPIDoc []byte

// OpenAPI returns the API's OpenAPI 3.1 document.
func OpenAPI() []byte { return append([]byte(nil), openAPIDoc...) }

func (s *Server) routeTable() []route {
	return []route{
		{method: "POST", path: "/v1/memories", body: bodyJSON, h: s.add},
		{method: "GET", path: "/v1/memories", h: s.list},
		{method: "DELETE", path: "/v1/memories", h: s.deleteScope},
		{method: "GET", path: "/v1/memories/{id}", h: s.get},
		{method: "PATCH", path: "/v1/memories/{id}", body: bodyJSON, h: s.update},
		{method: "DELETE", path: "/v1/memories/{id}", h: s.delete},
		{method: "POST", path: "/v1/memories/{id}/favorite", body: bodyJSON, h: s.favorite},
		{method: "POST", path: "/v1/memories/{id}/touch", body: bodyJSON, h: s.touch},
		{method: "GET", path: "/v1/memories/{id}/history", h: s.history},
		{method: "POST", path: "/v1/episodes", body: bodyJSON, h: s.addEpisode},
		{method: "POST", path: "/v1/search", body: bodyJSON, h: s.search},
		{method: "POST", path: "/v1/inject", body: bodyJSON, h: s.inject},
		{method: "POST", path: "/v1/brief", body: bodyJSON, h: s.brief},
		{method: "POST", path: "/v1/import", body: bodyJSONL, stream: true, h: s.importJSONL},
		{method: "GET", path: "/v1/export", stream: true, h: s.export},
		{method: "GET", path: "/v1/stats", h: s.stats},
		{method: "GET", path: "/healthz", public: true, h: s.healthz},
		{method: "GET", path: "/readyz", public: true, h: s.readyz},
		{method: "GET", path: "/openapi.json", public: true, h: s.openapi},
	}
}

// batchRequest is the batch form of POST /v1/memories.
type batchRequest struct {
	Memories []*engram.Memory `json:"memories"`
}

func (s *Server) add(w http.ResponseWriter, r *http.Request, t *tenant, _ string) error {
	data, err := readBody(r)
	if err != nil {
		return err
	}
	var probe map[string]json.RawMessage
	if err := decodeStrict(data, &probe, false); err != nil {
		return err
	}
	// A time given as 0001-01-01T00:00:00Z decodes as "not given", which
	// the store would take for now: refused, as an import refuses it.
	if err := zeroTimes(data, "memories", "memory"); err != nil {
		return err
	}
	var mems []*engram.Memory
	if _, batch := probe["memories"]; batch {
		var req batchRequest
		if err := decodeStrict(data, &req, false); err != nil {
			return err
		}
		if len(req.Memories) == 0 {
			return errorf(http.StatusBadRequest, CodeBadRequest, "field \"memories\": no memories given")
		}
		if len(req.Memories) > s.cfg.MaxBatch {
			return errorf(http.StatusRequestEntityTooLarge, CodeTooLarge,
				"%d memories in one request; at most %d (use POST /v1/import for more)", len(req.Memories), s.cfg.MaxBatch)
		}
		mems = req.Memories
	} else {
		var m engram.Memory
		if err := decodeStrict(data, &m, false); err != nil {
			return err
		}
		mems = []*engram.Memory{&m}
	}
	for i, m := range mems {
		if m == nil {
			return errorf(http.StatusBadRequest, CodeBadRequest, "memory %d is null", i+1)
		}
		if err := t.owns(m.Scope); err != nil {
			return err
		}
	}
	res, err := t.b.Add(r.Context(), mems...)
	if err != nil {
		return err
	}
	return writeJSON(w, http.StatusCreated, res)
}

// addEpisode answers POST /v1/episodes: a conversation's messages stored as
// an episode's memories in one write, each at its position.
func (s *Server) addEpisode(w http.ResponseWriter, r *http.Request, t *tenant, _ string) error {
	data, err := readBody(r)
	if err != nil {
		return err
	}
	if err := zeroTimes(data, "messages", "message"); err != nil {
		return err
	}
	if data, err = withTimes(data); err != nil {
		return err
	}
	var ep engram.Episode
	if err := decodeStrict(data, &ep, false); err != nil {
		return err
	}
	if len(ep.Messages) > s.cfg.MaxBatch {
		return errorf(http.StatusRequestEntityTooLarge, CodeTooLarge,
			"%d messages in one request; at most %d (send the rest with first_seq set)", len(ep.Messages), s.cfg.MaxBatch)
	}
	if err := t.owns(ep.Scope); err != nil {
		return err
	}
	res, err := t.b.AddEpisode(r.Context(), ep)
	if err != nil {
		return err
	}
	return writeJSON(w, http.StatusCreated, res)
}

// history answers GET /v1/memories/{id}/history: every version of what the
// memory says, oldest first.
func (s *Server) history(w http.ResponseWriter, r *http.Request, t *tenant, id string) error {
	b, err := t.within(r)
	if err != nil {
		return err
	}
	vs, err := b.History(r.Context(), id)
	if err != nil {
		return err
	}
	return writeJSON(w, http.StatusOK, map[string][]engram.Version{"versions": vs})
}

// within is the tenant's view for a request on one memory: narrowed by the
// request's ?scope=k=v,... when given, which names one of several memories
// with the id in scopes below the tenant's (by id, a view addresses its own
// scope's memory first, else the only one inside it).
func (t *tenant) within(r *http.Request) (Backend, error) {
	raw := r.URL.Query().Get("scope")
	if raw == "" {
		return t.b, nil
	}
	scope, err := memory.ParseScope(raw)
	if err != nil {
		return nil, errorf(http.StatusBadRequest, CodeBadRequest, "query parameter scope: %v", err)
	}
	if err := t.owns(scope); err != nil {
		return nil, err
	}
	n, ok := t.b.(interface {
		Within(map[string]string) (*engram.Scoped, error)
	})
	if !ok {
		return nil, errorf(http.StatusBadRequest, CodeBadRequest, "query parameter scope is not supported here")
	}
	v, err := n.Within(scope)
	if err != nil {
		return nil, err
	}
	return v, nil
}

func (s *Server) get(w http.ResponseWriter, r *http.Request, t *tenant, id string) error {
	b, err := t.within(r)
	if err != nil {
		return err
	}
	m, err := b.Get(r.Context(), id)
	if err != nil {
		return err
	}
	return writeJSON(w, http.StatusOK, m)
}

func (s *Server) update(w http.ResponseWriter, r *http.Request, t *tenant, id string) error {
	var p engram.Patch
	if err := decodeBody(r, &p, false); err != nil {
		return err
	}
	if p.Scope != nil {
		if err := t.owns(*p.Scope); err != nil {
			return err
		}
	}
	b, err := t.within(r)
	if err != nil {
		return err
	}
	m, err := b.Update(r.Context(), id, p)
	if err != nil {
		return err
	}
	return writeJSON(w, http.StatusOK, m)
}

func (s *Server) delete(w http.ResponseWriter, r *http.Request, t *tenant, id string) error {
	b, err := t.within(r)
	if err != nil {
		return err
	}
	n, err := b.Delete(r.Context(), id)
	if err != nil {
		return err
	}
	return writeJSON(w, http.StatusOK, map[string]int{"deleted": n})
}

// favoriteRequest is the body of POST /v1/memories/{id}/favorite: "favorite"
// true or false, as everywhere else; a missing body means true. "on", its
// first spelling, is still accepted.
type favoriteRequest struct {
	Favorite *bool `json:"favorite"`
	On       *bool `json:"on"`
}

func (s *Server) favorite(w http.ResponseWriter, r *http.Request, t *tenant, id string) error {
	var req favoriteRequest
	if err := decodeBody(r, &req, true); err != nil {
		return err
	}
	if req.Favorite != nil && req.On != nil && *req.Favorite != *req.On {
		return errorf(http.StatusBadRequest, CodeBadRequest, "fields \"favorite\" and \"on\" disagree; give \"favorite\" only")
	}
	if req.Favorite == nil {
		req.Favorite = req.On
	}
	on := req.Favorite == nil || *req.Favorite
	b, err := t.within(r)
	if err != nil {
		return err
	}
	m, err := b.Update(r.Context(), id, engram.Patch{Favorite: &on})
	if err != nil {
		return err
	}
	return writeJSON(w, http.StatusOK, m)
}

func (s *Server) touch(w http.ResponseWriter, r *http.Request, t *tenant, id string) error {
	var req struct{}
	if err := decodeBody(r, &req, true); err != nil {
		return err
	}
	b, err := t.within(r)
	if err != nil {
		return err
	}
	if err := b.Touch(r.Context(), id); err != nil {
		return err
	}
	return writeJSON(w, http.StatusOK, map[string]int{"touched": 1})
}

func (s *Server) search(w http.ResponseWriter, r *http.Request, t *tenant, _ string) error {
	var q engram.Query
	if err := decodeTimedBody(r, &q, false); err != nil {
		return err
	}
	if err := s.checkLimit("limit", q.Limit); err != nil {
		return err
	}
	if err := t.owns(q.Scope); err != nil {
		return err
	}
	resp, err := t.b.Search(r.Context(), q)
	if err != nil {
		return err
	}
	return writeJSON(w, http.StatusOK, resp)
}

// InjectRequest is the body of POST /v1/inject: a user prompt, the filter
// fields of a search (scope, type, scene, tags, source, since, until), and
// the injection's bounds.
type InjectRequest struct {
	Prompt string `json:"prompt"`
	engram.Filter
	Budget       int      `json:"budget,omitempty"`
	Limit        int      `json:"limit,omitempty"`
	MinRelevance *float64 `json:"min_relevance,omitempty"`
	NoRecord     bool     `json:"no_record,omitempty"`
	// Neighbours: turns shown before and after a memory of an episode (0:
	// the default, 1; negative: none).
	Neighbours int `json:"neighbours,omitempty"`
}

func (s *Server) inject(w http.ResponseWriter, r *http.Request, t *tenant, _ string) error {
	var req InjectRequest
	if err := decodeTimedBody(r, &req, false); err != nil {
		return err
	}
	if req.Prompt == "" {
		return errorf(http.StatusBadRequest, CodeBadRequest, "field \"prompt\" is required")
	}
	if err := s.checkBounds(req.Limit, req.Budget); err != nil {
		return err
	}
	if err := t.owns(req.Scope); err != nil {
		return err
	}
	inj, err := t.b.Inject(r.Context(), req.Prompt, engram.InjectOptions{Filter: req.Filter, Budget: req.Budget,
		Limit: req.Limit, MinRelevance: req.MinRelevance, NoRecord: req.NoRecord, Neighbours: req.Neighbours})
	if err != nil {
		return err
	}
	return writeJSON(w, http.StatusOK, inj)
}

// BriefRequest is the body of POST /v1/brief: the filter fields and bounds.
type BriefRequest struct {
	engram.Filter
	Budget     int  `json:"budget,omitempty"`
	Limit      int  `json:"limit,omitempty"`
	NoRecord   bool `json:"no_record,omitempty"`
	Neighbours int  `json:"neighbours,omitempty"`
}

func (s *Server) brief(w http.ResponseWriter, r *http.Request, t *tenant, _ string) error {
	var req BriefRequest
	if err := decodeTimedBody(r, &req, true); err != nil {
		return err
	}
	if err := s.checkBounds(req.Limit, req.Budget); err != nil {
		return err
	}
	if err := t.owns(req.Scope); err != nil {
		return err
	}
	b, err := t.b.Brief(r.Context(), engram.BriefOptions{Filter: req.Filter, Budget: req.Budget, Limit: req.Limit, NoRecord: req.NoRecord, Neighbours: req.Neighbours})
	if err != nil {
		return err
	}
	return writeJSON(w, http.StatusOK, b)
}

func (s *Server) importJSONL(w http.ResponseWriter, r *http.Request, t *tenant, _ string) error {
	var opt engram.ImportOptions
	if v := r.URL.Query().Get("skip_invalid"); v != "" {
		b, err := strconv.ParseBool(v)
		if err != nil {
			return errorf(http.StatusBadRequest, CodeBadRequest, "skip_invalid=%q: want true or false", v)
		}
		opt.SkipInvalid = b
	}
	res, err := t.b.Import(r.Context(), r.Body, opt)
	if err != nil {
		return err
	}
	return writeJSON(w, http.StatusOK, res)
}

// ExportCountTrailer is the HTTP trailer that ends a complete export: the
// number of lines (memories) sent. A client that finds it missing, or not the
// count it read, holds a cut export.
const ExportCountTrailer = "Engram-Export-Count"

func (s *Server) export(w http.ResponseWriter, r *http.Request, t *tenant, _ string) error {
	w.Header().Set("Content-Type", "application/x-ndjson; charset=utf-8")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.Header().Set("Cache-Control", "no-store")
	w.Header().Set("Trailer", ExportCountTrailer)
	cw := &lineCounter{w: w}
	if err := t.b.Export(r.Context(), cw); err != nil {
		if cw.wrote {
			// The stream has started: a clean end would look complete. Abort
			// the connection so that the client sees the transfer fail.
			s.log.Error("export failed mid-stream", "lines", cw.lines, "err", err)
			panic(http.ErrAbortHandler)
		}
		return err
	}
	w.Header().Set(ExportCountTrailer, strconv.Itoa(cw.lines))
	return nil
}

// lineCounter counts the lines written through it.
type lineCounter struct {
	w     io.Writer
	lines int
	wrote bool
}

func (c *lineCounter) Write(b []byte) (int, error) {
	c.wrote = c.wrote || len(b) > 0
	n, err := c.w.Write(b)
	c.lines += bytes.Count(b[:n], []byte{'\n'})
	return n, err
}

func (s *Server) stats(w http.ResponseWriter, r *http.Request, t *tenant, _ string) error {
	st, err := t.b.Stats(r.Context())
	if err != nil {
		return err
	}
	return writeJSON(w, http.StatusOK, st)
}

func (s *Server) healthz(w http.ResponseWriter, _ *http.Request, _ *tenant, _ string) error {
	return writeJSON(w, http.StatusOK, map[string]string{"status": "ok"})
}

// readyzTimeout bounds the backend's answer to a readiness probe.
const readyzTimeout = 2 * time.Second

// readyz answers 200 while the server takes requests and its backend
// answers (DB.Ping asks it each time: a Weaviate server that is down makes
// this server not ready), naming the backend.
func (s *Server) readyz(w http.ResponseWriter, r *http.Request, _ *tenant, _ string) error {
	if !s.ready.Load() {
		return errorf(http.StatusServiceUnavailable, CodeUnavailable, "not ready: the server is shutting down")
	}
	ctx, cancel := context.WithTimeout(r.Context(), readyzTimeout)
	defer cancel()
	if err := s.db.Ping(ctx); err != nil {
		return errorf(http.StatusServiceUnavailable, CodeUnavailable, "not ready: backend %s does not answer: %v", s.kind, err)
	}
	out := map[string]string{"status": "ready"}
	if s.kind != "" {
		out["backend"] = s.kind
	}
	return writeJSON(w, http.StatusOK, out)
}

func (s *Server) openapi(w http.ResponseWriter, _ *http.Request, _ *tenant, _ string) error {
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	_, err := w.Write(openAPIDoc)
	return err
}

// decodeBody reads and strictly decodes a JSON request body.
func decodeBody(r *http.Request, v any, allowEmpty bool) error {
	data, err := readBody(r)
	if err != nil {
		return err
	}
	return decodeStrict(data, v, allowEmpty)
}

// zeroTimes refuses a body whose object, or an object of its list field,
// gives a time as the zero instant (memory.CheckZeroTimes), naming the
// element ("memory 2: invalid: field \"created_at\": ..."). Malformed JSON
// is left to the decoder to describe.
func zeroTimes(data []byte, list, element string) error {
	if err := memory.CheckZeroTimes(data); err != nil {
		return err
	}
	var body map[string]json.RawMessage
	if json.Unmarshal(data, &body) != nil {
		return nil
	}
	var items []json.RawMessage
	if json.Unmarshal(body[list], &items) != nil {
		return nil
	}
	for i, it := range items {
		if err := memory.CheckZeroTimes(it); err != nil {
			return fmt.Errorf("%s %d: %w", element, i+1, err)
		}
	}
	return nil
}

// decodeTimedBody is decodeBody for a body with "since" and "until", which
// take the forms every interface takes (RFC 3339, a date, an age such as 7d).
func decodeTimedBody(r *http.Request, v any, allowEmpty bool) error {
	data, err := readBody(r)
	if err != nil {
		return err
	}
	if data, err = withTimes(data); err != nil {
		return err
	}
	return decodeStrict(data, v, allowEmpty)
}

// checkLimit refuses a result count above the server's cap (the store refuses
// negative ones with its own message).
func (s *Server) checkLimit(field string, n int) error {
	if n > s.cfg.MaxLimit {
		return errorf(http.StatusBadRequest, CodeBadRequest, "field %q: %d is above this server's maximum of %d", field, n, s.cfg.MaxLimit)
	}
	return nil
}

func (s *Server) checkBounds(limit, budget int) error {
	if err := s.checkLimit("limit", limit); err != nil {
		return err
	}
	if limit < 0 {
		return errorf(http.StatusBadRequest, CodeBadRequest, "field \"limit\": must not be negative")
	}
	if budget > s.cfg.MaxBudget {
		return errorf(http.StatusBadRequest, CodeBadRequest, "field \"budget\": %d is above this server's maximum of %d", budget, s.cfg.MaxBudget)
	}
	return nil
}

// owns refuses a scope in a request body that contradicts the tenant's own;
// the store enforces the same rule, this gives the clearer answer first.
func (t *tenant) owns(scope map[string]string) error {
	for k, v := range scope {
		if mine, ok := t.scope[k]; ok && mine != v {
			return errorf(http.StatusForbidden, CodeForbidden, "scope %s=%s is outside this API key's scope (%s=%s)", k, v, k, mine)
		}
	}
	return nil
}
