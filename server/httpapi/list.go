package httpapi

import (
	"encoding/json"
	"maps"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/engram-memory/engram"
	"github.com/engram-memory/engram/internal/when"
	"github.com/engram-memory/engram/memory"
)

// listParams are the query parameters GET /v1/memories takes.
var listParams = map[string]bool{"scope": true, "type": true, "scene": true, "source": true, "tag": true,
	"since": true, "until": true, "order": true, "limit": true, "cursor": true, "episode": true, "supersedes": true,
	"as_of": true, "current": true}

// list answers GET /v1/memories: one page of the tenant's memories, filtered
// and ordered by the query parameters, with the cursor of the next page.
func (s *Server) list(w http.ResponseWriter, r *http.Request, t *tenant, _ string) error {
	q := r.URL.Query()
	for k := range q {
		if !listParams[k] {
			return errorf(http.StatusBadRequest, CodeBadRequest, "unknown query parameter %q (known: scope, type, scene, source, tag, since, until, episode, supersedes, as_of, current, order, limit, cursor)", k)
		}
	}
	var opt engram.ListOptions
	f, err := filterParams(q)
	if err != nil {
		return err
	}
	opt.Filter = f
	if err := t.owns(opt.Scope); err != nil {
		return err
	}
	opt.Order, opt.Cursor = q.Get("order"), q.Get("cursor")
	if v := q.Get("limit"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 {
			return errorf(http.StatusBadRequest, CodeBadRequest, "limit=%q: want a positive integer", v)
		}
		if err := s.checkLimit("limit", n); err != nil {
			return err
		}
		opt.Limit = n
	}
	page, err := t.b.List(r.Context(), opt)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, page)
	return nil
}

// deleteScope answers DELETE /v1/memories?scope=k=v: every memory of the
// tenant whose scope holds those pairs is deleted, and counted. all=true
// instead of a scope deletes every memory of the caller's scope: the API
// key's (which is never empty). On a server without keys that would be the
// whole store, and it is refused: nothing is deleted without a scope.
func (s *Server) deleteScope(w http.ResponseWriter, r *http.Request, t *tenant, _ string) error {
	q := r.URL.Query()
	for k := range q {
		if k != "scope" && k != "all" {
			return errorf(http.StatusBadRequest, CodeBadRequest, "unknown query parameter %q: DELETE /v1/memories takes scope=key=value or all=true only", k)
		}
	}
	all := false
	if vs := q["all"]; len(vs) > 0 {
		b, err := strconv.ParseBool(vs[0])
		if err != nil || len(vs) > 1 {
			return errorf(http.StatusBadRequest, CodeBadRequest, "all=%q: want true or false, once", strings.Join(vs, ","))
		}
		all = b
	}
	scope, err := memory.ParseScope(q["scope"]...)
	if err != nil {
		return errorf(http.StatusBadRequest, CodeBadRequest, "scope: %v", err)
	}
	switch {
	case all && len(scope) > 0:
		return errorf(http.StatusBadRequest, CodeBadRequest, "DELETE /v1/memories takes scope=key=value or all=true, not both")
	case all && len(t.scope) == 0:
		return errorf(http.StatusBadRequest, CodeBadRequest, "all=true deletes every memory of the API key's scope, and this request has no key (a server without keys): that would be the whole store; name the memories to forget with scope=key=value")
	case all:
		scope = maps.Clone(t.scope)
	case len(scope) == 0:
		return errorf(http.StatusBadRequest, CodeBadRequest, "DELETE /v1/memories needs scope=key=value (the memories to forget), or all=true for every memory of the API key's scope; one memory is DELETE /v1/memories/{id}")
	}
	if err := t.owns(scope); err != nil {
		return err
	}
	n, err := t.b.DeleteScope(r.Context(), scope)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, map[string]int{"deleted": n})
	return nil
}

// filterParams reads the filter of a listing from query parameters.
func filterParams(q url.Values) (engram.Filter, error) {
	var f engram.Filter
	scope, err := memory.ParseScope(q["scope"]...)
	if err != nil {
		return f, errorf(http.StatusBadRequest, CodeBadRequest, "scope: %v", err)
	}
	f.Scope, f.Type, f.Scene, f.Source, f.Tags = scope, q.Get("type"), q.Get("scene"), q.Get("source"), q["tag"]
	f.Episode, f.Supersedes = q.Get("episode"), q.Get("supersedes")
	if v := q.Get("current"); v != "" {
		b, err := strconv.ParseBool(v)
		if err != nil {
			return f, errorf(http.StatusBadRequest, CodeBadRequest, "current=%q: want true or false", v)
		}
		f.Current = b
	}
	now := time.Now()
	for _, p := range []struct {
		name string
		dst  **time.Time
	}{{"since", &f.Since}, {"until", &f.Until}, {"as_of", &f.AsOf}} {
		if v := q.Get(p.name); v != "" {
			at, err := when.Parse(v, now)
			if err != nil {
				return f, errorf(http.StatusBadRequest, CodeBadRequest, "%s: %v", p.name, err)
			}
			*p.dst = &at
		}
	}
	return f, nil
}

// withTimes rewrites the "since" and "until" fields of a JSON object body
// given in any form the CLI and MCP accept (an age such as 7d, a date) as RFC
// 3339, so every interface takes the same times; anything else is left for
// the strict decoder to judge.
func withTimes(data []byte) ([]byte, error) {
	var obj map[string]json.RawMessage
	if json.Unmarshal(data, &obj) != nil {
		return data, nil
	}
	changed := false
	now := time.Now()
	for _, k := range []string{"since", "until", "as_of", "now"} {
		raw, ok := obj[k]
		var v string
		if !ok || json.Unmarshal(raw, &v) != nil || v == "" {
			continue
		}
		if _, err := time.Parse(time.RFC3339Nano, v); err == nil {
			continue
		}
		at, err := when.Parse(v, now)
		if err != nil {
			return nil, errorf(http.StatusBadRequest, CodeBadRequest, "field %q: %v", k, err)
		}
		obj[k], _ = json.Marshal(at.Format(time.RFC3339Nano))
		changed = true
	}
	if !changed {
		return data, nil
	}
	return json.Marshal(obj)
}
