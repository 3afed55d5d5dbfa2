package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/engram-memory/engram"
	"github.com/engram-memory/engram/memory"
	"github.com/engram-memory/engram/server/httpapi"
)

// store is what the data commands use: the local *engram.DB, or, with
// ENGRAM_URL set, a client of an engram server with the same behaviour. It is
// what the server itself acts on.
type store = engram.Tenant

var (
	_ store = (*engram.DB)(nil)
	_ store = (*client)(nil)
)

// withStore runs fn with the server named by $ENGRAM_URL (key $ENGRAM_API_KEY)
// when it is set and no --db is given, else, for a command marked viaDaemon,
// with the local daemon serving the store when one answers, else with the
// local database, which must exist.
func (e *env) withStore(ctx context.Context, fn func(db store) error) error {
	return e.store(ctx, false, fn)
}

// withNewStore is withStore for a command that writes: it creates a local
// store that does not exist yet.
func (e *env) withNewStore(ctx context.Context, fn func(db store) error) error {
	return e.store(ctx, true, fn)
}

func (e *env) store(ctx context.Context, create bool, fn func(db store) error) error {
	if u := os.Getenv("ENGRAM_URL"); u != "" && e.dbPath == "" {
		c, err := newClient(u, os.Getenv("ENGRAM_API_KEY"))
		if err != nil {
			return err
		}
		defer c.hc.CloseIdleConnections()
		return fn(c)
	}
	if e.daemon {
		if p, err := e.path(false); err == nil {
			if c := e.daemonClient(ctx, p); c != nil {
				defer c.hc.CloseIdleConnections()
				return fn(c)
			}
		}
	}
	return e.local(ctx, create, func(db *engram.DB) error { return fn(db) })
}

// client speaks the HTTP API (server/httpapi) for the CLI.
type client struct {
	base string
	key  string
	hc   *http.Client
	// scope narrows the requests on one memory (?scope=k=v,...), naming
	// one of several memories with an id (--within); "" for none.
	scope string
}

// within is the client narrowed to scope on its requests by id.
func (c *client) within(scope map[string]string) *client {
	n := *c
	n.scope = memory.FormatScope(scope)
	return &n
}

func newClient(base, key string) (*client, error) {
	u, err := url.Parse(base)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, usagef("ENGRAM_URL=%q: want http://HOST:PORT or https://HOST:PORT", base)
	}
	return &client{base: strings.TrimSuffix(base, "/"), key: key,
		hc: &http.Client{Transport: http.DefaultTransport.(*http.Transport).Clone()}}, nil
}

// apiError is an error answer from the server. A 4xx maps back to the
// library's sentinels, so the CLI exits 2 as it would locally; a 5xx exits 1.
type apiError struct {
	status        int
	code, message string
}

func (e *apiError) Error() string { return e.message }

func (e *apiError) Unwrap() []error {
	switch {
	case e.code == httpapi.CodeNotFound && e.status == http.StatusNotFound:
		return []error{engram.ErrNotFound}
	case e.status == http.StatusForbidden:
		return []error{engram.ErrScope, engram.ErrInvalid}
	case e.status >= 400 && e.status < 500:
		return []error{engram.ErrInvalid}
	}
	return nil
}

// do sends one request; in is JSON-encoded unless it is an io.Reader (sent
// as JSONL). A 2xx answer is decoded into out, or copied when out is an
// io.Writer.
func (c *client) do(ctx context.Context, method, path string, in, out any) error {
	var body io.Reader
	ctype := ""
	switch v := in.(type) {
	case nil:
	case io.Reader:
		body, ctype = v, "application/x-ndjson"
	default:
		data, err := json.Marshal(v)
		if err != nil {
			return fmt.Errorf("encode request: %w", err)
		}
		body, ctype = bytes.NewReader(data), "application/json"
	}
	req, err := http.NewRequestWithContext(ctx, method, c.base+path, body)
	if err != nil {
		return fmt.Errorf("server %s: %w", c.base, err)
	}
	if ctype != "" {
		req.Header.Set("Content-Type", ctype)
	}
	if c.key != "" {
		req.Header.Set("Authorization", "Bearer "+c.key)
	}
	resp, err := c.hc.Do(req)
	if err != nil {
		return fmt.Errorf("server %s: %w", c.base, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode >= 300 {
		return readAPIError(resp)
	}
	if w, ok := out.(io.Writer); ok {
		if _, err := io.Copy(w, resp.Body); err != nil {
			return fmt.Errorf("server %s: %s %s: %w", c.base, method, path, err)
		}
		return nil
	}
	if out == nil {
		return nil
	}
	if err := json.NewDecoder(resp.Body).Decode(out); err != nil {
		return fmt.Errorf("server %s: %s %s: bad answer: %w", c.base, method, path, err)
	}
	return nil
}

// readAPIError turns an error answer into an *apiError with the server's message.
func readAPIError(resp *http.Response) error {
	data, _ := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
	var eb httpapi.ErrorBody
	if json.Unmarshal(data, &eb) == nil && eb.Error != nil && eb.Error.Message != "" {
		return &apiError{status: resp.StatusCode, code: eb.Error.Code, message: eb.Error.Message}
	}
	return &apiError{status: resp.StatusCode, message: "server answered " + resp.Status}
}

// memoryPath is the path of a request on one memory, with the client's
// --within scope.
func (c *client) memoryPath(id string, suffix string) string {
	p := "/v1/memories/" + url.PathEscape(id) + suffix
	if c.scope != "" {
		p += "?" + url.Values{"scope": {c.scope}}.Encode()
	}
	return p
}

// Add stores memories through POST /v1/memories (one request, all or none).
func (c *client) Add(ctx context.Context, mems ...*engram.Memory) (engram.AddResult, error) {
	var res engram.AddResult
	var in any = map[string]any{"memories": mems}
	if len(mems) == 1 {
		in = mems[0]
	}
	err := c.do(ctx, http.MethodPost, "/v1/memories", in, &res)
	return res, err
}

// AddEpisode stores a conversation through POST /v1/episodes.
func (c *client) AddEpisode(ctx context.Context, ep engram.Episode) (engram.AddResult, error) {
	var res engram.AddResult
	err := c.do(ctx, http.MethodPost, "/v1/episodes", ep, &res)
	return res, err
}

// History lists a memory's versions (GET /v1/memories/{id}/history).
func (c *client) History(ctx context.Context, id string) ([]engram.Version, error) {
	var res struct {
		Versions []engram.Version `json:"versions"`
	}
	if err := c.do(ctx, http.MethodGet, c.memoryPath(id, "/history"), nil, &res); err != nil {
		return nil, err
	}
	return res.Versions, nil
}

// Get fetches one memory.
func (c *client) Get(ctx context.Context, id string) (*engram.Memory, error) {
	var m engram.Memory
	if err := c.do(ctx, http.MethodGet, c.memoryPath(id, ""), nil, &m); err != nil {
		return nil, err
	}
	return &m, nil
}

// Update patches one memory.
func (c *client) Update(ctx context.Context, id string, p engram.Patch) (*engram.Memory, error) {
	var m engram.Memory
	if err := c.do(ctx, http.MethodPatch, c.memoryPath(id, ""), p, &m); err != nil {
		return nil, err
	}
	return &m, nil
}

// Delete removes memories one request each; like the library, it counts the
// ones that existed, and a single missing id is ErrNotFound.
func (c *client) Delete(ctx context.Context, ids ...string) (int, error) {
	n := 0
	for _, id := range ids {
		var res map[string]int
		err := c.do(ctx, http.MethodDelete, c.memoryPath(id, ""), nil, &res)
		if errors.Is(err, engram.ErrNotFound) && len(ids) > 1 {
			continue
		}
		if err != nil {
			return n, err
		}
		n += res["deleted"]
	}
	return n, nil
}

// Touch records a use of each memory; like the library, it checks that all
// exist before touching any.
func (c *client) Touch(ctx context.Context, ids ...string) error {
	if len(ids) > 1 {
		for _, id := range ids {
			if _, err := c.Get(ctx, id); err != nil {
				return err
			}
		}
	}
	for _, id := range ids {
		if err := c.do(ctx, http.MethodPost, c.memoryPath(id, "/touch"), nil, nil); err != nil {
			return err
		}
	}
	return nil
}

// Search runs one query on the server.
func (c *client) Search(ctx context.Context, q engram.Query) (*engram.Response, error) {
	var resp engram.Response
	if err := c.do(ctx, http.MethodPost, "/v1/search", q, &resp); err != nil {
		return nil, err
	}
	return &resp, nil
}

// Brief asks the server for a session-start briefing.
func (c *client) Brief(ctx context.Context, opt engram.BriefOptions) (*engram.Brief, error) {
	var b engram.Brief
	req := httpapi.BriefRequest{Filter: opt.Filter, Budget: opt.Budget, Limit: opt.Limit, NoRecord: opt.NoRecord, Neighbours: opt.Neighbours}
	if err := c.do(ctx, http.MethodPost, "/v1/brief", req, &b); err != nil {
		return nil, err
	}
	return &b, nil
}

// Inject asks the server for prompt-matched recall.
func (c *client) Inject(ctx context.Context, prompt string, opt engram.InjectOptions) (*engram.Injection, error) {
	var inj engram.Injection
	req := httpapi.InjectRequest{Prompt: prompt, Filter: opt.Filter, Budget: opt.Budget, Limit: opt.Limit,
		MinRelevance: opt.MinRelevance, NoRecord: opt.NoRecord, Neighbours: opt.Neighbours}
	if err := c.do(ctx, http.MethodPost, "/v1/inject", req, &inj); err != nil {
		return nil, err
	}
	return &inj, nil
}

// Import streams JSONL to the server.
func (c *client) Import(ctx context.Context, r io.Reader, opt engram.ImportOptions) (engram.ImportResult, error) {
	var res engram.ImportResult
	path := "/v1/import"
	if opt.SkipInvalid {
		path += "?skip_invalid=true"
	}
	err := c.do(ctx, http.MethodPost, path, io.NopCloser(r), &res)
	return res, err
}

// Export streams the server's JSONL to w and checks that it is complete: the
// server ends a complete export with the number of lines it sent as a
// trailer, and aborts the transfer when it fails part-way, so a cut stream
// (an aborted connection, or a clean end without the trailer, as a proxy may
// make of it) is an error here, not a short backup that exits 0.
func (c *client) Export(ctx context.Context, w io.Writer) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, c.base+"/v1/export", nil)
	if err != nil {
		return fmt.Errorf("server %s: %w", c.base, err)
	}
	if c.key != "" {
		req.Header.Set("Authorization", "Bearer "+c.key)
	}
	resp, err := c.hc.Do(req)
	if err != nil {
		return fmt.Errorf("server %s: %w", c.base, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode >= 300 {
		return readAPIError(resp)
	}
	lc := &lineCounter{w: w}
	if _, err := io.Copy(lc, resp.Body); err != nil {
		return fmt.Errorf("server %s: export cut short after %d memories: %w", c.base, lc.lines, err)
	}
	want := resp.Trailer.Get(httpapi.ExportCountTrailer)
	if want == "" {
		return fmt.Errorf("server %s: export ended after %d memories without the server's %s trailer: it is incomplete", c.base, lc.lines, httpapi.ExportCountTrailer)
	}
	if n, err := strconv.Atoi(want); err != nil || n != lc.lines {
		return fmt.Errorf("server %s: export holds %d memories, the server sent %s: it is incomplete", c.base, lc.lines, want)
	}
	return nil
}

// lineCounter counts the lines written through it.
type lineCounter struct {
	w     io.Writer
	lines int
}

func (c *lineCounter) Write(b []byte) (int, error) {
	n, err := c.w.Write(b)
	c.lines += bytes.Count(b[:n], []byte{'\n'})
	return n, err
}

// Stats fetches the server's counts (of the key's scope).
func (c *client) Stats(ctx context.Context) (engram.Stats, error) {
	var s engram.Stats
	err := c.do(ctx, http.MethodGet, "/v1/stats", nil, &s)
	return s, err
}

// List fetches one page of a listing (GET /v1/memories).
func (c *client) List(ctx context.Context, opt engram.ListOptions) (*engram.ListPage, error) {
	q := url.Values{}
	if len(opt.Scope) > 0 {
		q.Set("scope", memory.FormatScope(opt.Scope))
	}
	for k, v := range map[string]string{"type": opt.Type, "scene": opt.Scene, "source": opt.Source, "order": opt.Order, "cursor": opt.Cursor,
		"episode": opt.Episode, "supersedes": opt.Supersedes} {
		if v != "" {
			q.Set(k, v)
		}
	}
	for _, t := range opt.Tags {
		q.Add("tag", t)
	}
	if opt.Since != nil {
		q.Set("since", opt.Since.Format(time.RFC3339Nano))
	}
	if opt.Until != nil {
		q.Set("until", opt.Until.Format(time.RFC3339Nano))
	}
	if opt.AsOf != nil {
		q.Set("as_of", opt.AsOf.Format(time.RFC3339Nano))
	}
	if opt.Current {
		q.Set("current", "true")
	}
	if opt.Limit > 0 {
		q.Set("limit", strconv.Itoa(opt.Limit))
	}
	path := "/v1/memories"
	if len(q) > 0 {
		path += "?" + q.Encode()
	}
	var page engram.ListPage
	if err := c.do(ctx, http.MethodGet, path, nil, &page); err != nil {
		return nil, err
	}
	return &page, nil
}

// DeleteScope deletes a scope's memories on the server (DELETE /v1/memories).
func (c *client) DeleteScope(ctx context.Context, scope map[string]string) (int, error) {
	if len(scope) == 0 {
		return 0, fmt.Errorf("%w: delete by scope needs at least one key=value", engram.ErrInvalid)
	}
	var res map[string]int
	err := c.do(ctx, http.MethodDelete, "/v1/memories?"+url.Values{"scope": {memory.FormatScope(scope)}}.Encode(), nil, &res)
	return res["deleted"], err
}
