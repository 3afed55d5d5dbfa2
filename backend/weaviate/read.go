package weaviate

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strconv"
	"strings"

	"github.com/engram-memory/engram/memory"
)

// ErrAmbiguous is returned by Store.Get and GetMany for an id that several
// memories in the scope have (ids are per-scope namespaces); it is
// memory.ErrAmbiguous. Backend applies the full id rule (pick).
var ErrAmbiguous = memory.ErrAmbiguous

// get runs a GraphQL Get on the class in one tenant and decodes the objects.
// args are the Get's arguments after the tenant and consistency level. A
// missing tenant reads as empty.
func (s *Store) get(ctx context.Context, tenant, args, selection string) ([]fields, error) {
	q := "{Get{" + s.cfg.Class + "(" + tenantArg(tenant) + s.consistencyArg() + args + "){" + selection + "}}}"
	var data struct {
		Get map[string][]fields `json:"Get"`
	}
	err := s.c.graphql(ctx, q, &data)
	if errors.Is(err, errTenantNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	return data.Get[s.cfg.Class], nil
}

// aliasedGet is one Get of a request that runs several (getAll).
type aliasedGet struct {
	alias, args, selection string
}

// getAll runs several Gets on the class in one tenant in one request, each
// under its alias, and returns each one's objects by alias. A missing tenant
// reads as empty.
func (s *Store) getAll(ctx context.Context, tenant string, gets []aliasedGet) (map[string][]fields, error) {
	var q strings.Builder
	q.WriteString("{Get{")
	for _, g := range gets {
		q.WriteString(g.alias + ":" + s.cfg.Class + "(" + tenantArg(tenant) + s.consistencyArg() + g.args + "){" + g.selection + "} ")
	}
	q.WriteString("}}")
	var data struct {
		Get map[string][]fields `json:"Get"`
	}
	err := s.c.graphql(ctx, q.String(), &data)
	if errors.Is(err, errTenantNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	return data.Get, nil
}

// decodeAll decodes objects into memories. A memory outside filter f (which
// the pushed-down filter should already have excluded) is dropped: this is
// the last check that no read crosses a scope.
func (s *Store) decodeAll(objs []fields, f *memory.Filter, withVectors bool) ([]*memory.Memory, error) {
	out := make([]*memory.Memory, 0, len(objs))
	for i := range objs {
		m, err := objs[i].decode(withVectors)
		if err != nil {
			return nil, err
		}
		if f != nil && !f.Match(m) {
			continue
		}
		out = append(out, m)
	}
	return out, nil
}

// vectorSelection is the vectors to fetch with memories: every named vector
// the class has (a memory holds at most one).
func (s *Store) vectorSelection(with bool) []string {
	if !with {
		return nil
	}
	v := s.knownVectors()
	sort.Strings(v)
	return v
}

// Get returns the memory with this id inside scope, with its vector. A
// memory outside the scope is memory.ErrNotFound, exactly like a missing one.
func (s *Store) Get(ctx context.Context, scope map[string]string, id string) (*memory.Memory, error) {
	found, err := s.getMany(ctx, scope, []string{id}, true)
	if err != nil {
		return nil, fmt.Errorf("memory %s: %w", id, err)
	}
	switch len(found[id]) {
	case 0:
		return nil, fmt.Errorf("memory %s: %w", id, memory.ErrNotFound)
	case 1:
		return found[id][0], nil
	}
	return nil, fmt.Errorf("memory %s: %w: %d memories in the scope have it; name one's scope", id, ErrAmbiguous, len(found[id]))
}

// GetMany returns the memories with these ids inside scope, by id, with
// their vectors when withVectors is set (else each embedding names its model
// and dimension only). Missing ids are absent from the map. Without the
// tenant key in scope, an id found in several tenants is ErrAmbiguous.
func (s *Store) GetMany(ctx context.Context, scope map[string]string, ids []string, withVectors bool) (map[string]*memory.Memory, error) {
	found, err := s.getMany(ctx, scope, ids, withVectors)
	if err != nil {
		return nil, err
	}
	out := make(map[string]*memory.Memory, len(found))
	for id, ms := range found {
		if len(ms) > 1 {
			return nil, fmt.Errorf("memory %s: %w: %d memories in the scope have it; name one's scope", id, ErrAmbiguous, len(ms))
		}
		out[id] = ms[0]
	}
	return out, nil
}

func (s *Store) getMany(ctx context.Context, scope map[string]string, ids []string, withVectors bool) (map[string][]*memory.Memory, error) {
	f := &memory.Filter{Scope: scope}
	scopeOps, err := filterOperands(f)
	if err != nil {
		return nil, err
	}
	want := make(map[string]bool, len(ids))
	for _, id := range ids {
		want[id] = true
	}
	tenants, err := s.tenantsFor(ctx, scope)
	if err != nil {
		return nil, err
	}
	per := make([][]*memory.Memory, len(tenants))
	err = eachTenant(ctx, tenants, func(ctx context.Context, ti int, tenant string) error {
		for start := 0; start < len(ids); start += maxIDsPerRequest {
			chunk := ids[start:min(start+maxIDsPerRequest, len(ids))]
			ops := append([]operand{idsOperand(chunk)}, scopeOps...)
			// An id names one memory per scope: every one in scope is read, so
			// that an id held by several is seen to be ambiguous.
			args := "where:" + where(ops) + ",limit:" + strconv.Itoa(MaxK)
			ms, err := s.fetch(ctx, tenant, args, f, withVectors)
			if err != nil {
				return err
			}
			per[ti] = append(per[ti], ms...)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	out := map[string][]*memory.Memory{}
	for _, ms := range per {
		for _, m := range ms {
			if want[m.ID] { // a UUID names one id; anything else is not ours
				out[m.ID] = append(out[m.ID], m)
			}
		}
	}
	return out, nil
}

// fetch is get + decodeAll with the plain memory selection; if a vector is
// missing because another process added a model since Open, it re-reads the
// schema once.
func (s *Store) fetch(ctx context.Context, tenant, args string, f *memory.Filter, withVectors bool) ([]*memory.Memory, error) {
	for attempt := 0; ; attempt++ {
		objs, err := s.get(ctx, tenant, args, fieldList(s.vectorSelection(withVectors), ""))
		if err != nil {
			return nil, err
		}
		ms, err := s.decodeAll(objs, f, withVectors)
		if err == nil || attempt > 0 || !withVectors || !strings.Contains(err.Error(), "vector is missing") {
			return ms, err
		}
		info, rerr := s.getClass(ctx)
		if rerr != nil {
			return nil, rerr
		}
		if rerr := s.check(info); rerr != nil {
			return nil, rerr
		}
	}
}

// Page is one page of a listing.
type Page struct {
	Memories []*memory.Memory
	// Next is the cursor of the following page; "" after the last.
	Next string
}

// List returns up to limit memories matching f after the cursor (""
// starts), with their vectors when withVectors is set. The order is fixed
// (tenant name, then object UUID) but not the id order: sort a full listing
// by id where that matters. A filter naming only the tenant pages with
// Weaviate's cursor, at constant cost per page; any other filter sorts its
// matches in each request, a cost that grows with the matches.
func (s *Store) List(ctx context.Context, f memory.Filter, cursor string, limit int, withVectors bool) (Page, error) {
	if limit <= 0 || limit > maxIDsPerRequest {
		return Page{}, fmt.Errorf("%w: list limit %d out of range 1..%d", memory.ErrInvalid, limit, maxIDsPerRequest)
	}
	ops, err := filterOperands(&f)
	if err != nil {
		return Page{}, err
	}
	tenants, err := s.tenantsFor(ctx, f.Scope)
	if err != nil {
		return Page{}, err
	}
	sort.Strings(tenants)
	startTenant, after := "", ""
	if cursor != "" {
		t, u, ok := strings.Cut(cursor, "/")
		if !ok || len(u) != 36 {
			return Page{}, fmt.Errorf("%w: list cursor %q", memory.ErrInvalid, cursor)
		}
		startTenant, after = t, u
	}
	rest := f
	rest.Scope = nil
	onlyTenant := rest.Empty()
	for k := range f.Scope {
		if k != s.cfg.TenantKey {
			onlyTenant = false
		}
	}
	var page Page
	for _, tenant := range tenants {
		if cursor != "" && tenant < startTenant {
			continue
		}
		cur := ""
		if tenant == startTenant {
			cur = after
		}
		n := limit - len(page.Memories)
		var args string
		if onlyTenant {
			// Weaviate's cursor: object UUID order, no filter allowed.
			args = "limit:" + strconv.Itoa(n)
			if cur != "" {
				args += ",after:" + gqlString(cur)
			}
		} else {
			tops := ops
			if cur != "" {
				tops = append(append([]operand(nil), ops...), cond("id", "GreaterThan", "valueText", gqlString(cur)))
			}
			if w := where(tops); w != "" {
				args = "where:" + w + ","
			}
			args += `sort:[{path:["_id"],order:asc}],limit:` + strconv.Itoa(n)
		}
		objs, err := s.get(ctx, tenant, args, fieldList(s.vectorSelection(withVectors), ""))
		if err != nil {
			return Page{}, fmt.Errorf("list: %w", err)
		}
		ms, err := s.decodeAll(objs, &f, withVectors)
		if err != nil {
			return Page{}, fmt.Errorf("list: %w", err)
		}
		page.Memories = append(page.Memories, ms...)
		if len(objs) == n { // this tenant may hold more
			page.Next = tenant + "/" + objs[len(objs)-1].Additional.ID
			return page, nil
		}
	}
	return page, nil
}

// Count returns how many memories match f.
func (s *Store) Count(ctx context.Context, f memory.Filter) (int, error) {
	ops, err := filterOperands(&f)
	if err != nil {
		return 0, err
	}
	tenants, err := s.tenantsFor(ctx, f.Scope)
	if err != nil {
		return 0, err
	}
	counts := make([]int, len(tenants))
	err = eachTenant(ctx, tenants, func(ctx context.Context, i int, tenant string) error {
		n, err := s.aggregateCount(ctx, tenant, where(ops))
		counts[i] = n
		return err
	})
	if err != nil {
		return 0, fmt.Errorf("count: %w", err)
	}
	total := 0
	for _, n := range counts {
		total += n
	}
	return total, nil
}

func (s *Store) aggregateCount(ctx context.Context, tenant, w string) (int, error) {
	args := tenantArg(tenant)
	if w != "" {
		args += "where:" + w + ","
	}
	q := "{Aggregate{" + s.cfg.Class + "(" + strings.TrimSuffix(args, ",") + "){meta{count}}}}"
	if args == "" {
		q = "{Aggregate{" + s.cfg.Class + "{meta{count}}}}"
	}
	var data countsAnswer
	err := s.c.graphql(ctx, q, &data)
	if errors.Is(err, errTenantNotFound) {
		return 0, nil
	}
	if err != nil {
		return 0, err
	}
	rows := data.Aggregate[s.cfg.Class]
	if len(rows) == 0 {
		return 0, nil
	}
	return rows[0].Meta.Count, nil
}

// CountBy counts the memories matching f by the value of one field: "type",
// "scene", "source", "embed_model" (memories without a vector are not
// counted) or "favorite" ("true", "false"). For a store's statistics.
func (s *Store) CountBy(ctx context.Context, f memory.Filter, field string) (map[string]int, error) {
	switch field {
	case pType, pScene, pSource, pModel, pFavorite:
	default:
		return nil, fmt.Errorf("%w: count by %q: want type, scene, source, embed_model or favorite", memory.ErrInvalid, field)
	}
	ops, err := filterOperands(&f)
	if err != nil {
		return nil, err
	}
	tenants, err := s.tenantsFor(ctx, f.Scope)
	if err != nil {
		return nil, err
	}
	per := make([]map[string]int, len(tenants))
	err = eachTenant(ctx, tenants, func(ctx context.Context, i int, tenant string) error {
		args := tenantArg(tenant)
		if w := where(ops); w != "" {
			args += "where:" + w + ","
		}
		q := "{Aggregate{" + s.cfg.Class + "(" + args + "groupBy:[" + gqlString(field) + "],limit:" + strconv.Itoa(MaxK) +
			"){meta{count} groupedBy{value}}}}"
		var data struct {
			Aggregate map[string][]struct {
				Meta struct {
					Count int `json:"count"`
				} `json:"meta"`
				GroupedBy struct {
					Value string `json:"value"`
				} `json:"groupedBy"`
			} `json:"Aggregate"`
		}
		err := s.c.graphql(ctx, q, &data)
		if errors.Is(err, errTenantNotFound) {
			return nil
		}
		if err != nil {
			return err
		}
		per[i] = map[string]int{}
		for _, row := range data.Aggregate[s.cfg.Class] {
			if row.GroupedBy.Value != "" {
				per[i][row.GroupedBy.Value] += row.Meta.Count
			}
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("count by %s: %w", field, err)
	}
	out := map[string]int{}
	for _, m := range per {
		for k, n := range m {
			out[k] += n
		}
	}
	return out, nil
}

// countsAnswer is the answer to Aggregate queries asking meta{count}: one
// count per aliased (or the class's own) aggregation.
type countsAnswer struct {
	Aggregate map[string][]struct {
		Meta struct {
			Count int `json:"count"`
		} `json:"meta"`
	} `json:"Aggregate"`
}
