package weaviate

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/engram-memory/engram/internal/httpjson"
	"github.com/engram-memory/engram/memory"
)

// BatchError is a Put some of whose memories were not stored. Weaviate's
// batch is not a transaction: each object is written whole or not at all,
// independently of the others. So after a BatchError every memory of the
// batch is either as it was or as given, never half of each, and calling Put
// again with the same memories is safe: ids map to fixed object UUIDs and a
// write replaces the whole object.
type BatchError struct {
	// Failed maps the id of each memory not stored to Weaviate's reason.
	Failed map[string]string
	// Stored counts the memories that were.
	Stored int
}

func (e *BatchError) Error() string {
	if len(e.Failed) == 0 {
		return fmt.Sprintf("weaviate batch: %d memories stored, none refused", e.Stored)
	}
	ids := make([]string, 0, len(e.Failed))
	for id := range e.Failed {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	first := ids[0]
	more := ""
	if len(ids) > 1 {
		more = fmt.Sprintf(" (and %d more)", len(ids)-1)
	}
	return fmt.Sprintf("weaviate batch: %d of %d memories not stored, e.g. %q: %s%s; the write is safe to retry",
		len(ids), len(ids)+e.Stored, first, e.Failed[first], more)
}

// Put stores memories, replacing any with the same id in the same tenant.
// Each memory must be normalised with its id, times and content hash set, as
// the SQLite store requires (a memory without OccurredAt occurred when it
// was created). Every memory is checked before anything is sent; the batch
// then goes out in requests of BatchSize objects; objects the server
// refused are resent (Retries times), and every object it accepted is
// checked to be found by its index (see sendChecked).
//
// What Put derives from other memories is kept true in the same call, under
// this process's lock of the memories' tenants: the context of every memory
// of each episode the written memories leave or join (episode.go) and the
// supersession of the written memories and of what they supersede, or did
// (supersede.go). Weaviate has no transactions: another process reading
// meanwhile can see a written memory before its neighbours' contexts and
// the supersession it causes follow (docs/weaviate.md).
//
// On failure the error is a *BatchError (some objects refused) or wraps
// ErrUnavailable (server down or too slow; some requests may have been
// applied). Either way Put may be called again with the same memories.
func (s *Store) Put(ctx context.Context, mems []*memory.Memory) error {
	objs := make([]*object, len(mems))
	written := make([]*memory.Memory, len(mems))
	seen := make(map[string]int, len(mems))
	vecs := map[string]bool{}
	tenants := make([]string, 0, len(mems))
	enc := s.enc()
	for i, m := range mems {
		if m == nil {
			return fmt.Errorf("%w: memory %d is nil", memory.ErrInvalid, i+1)
		}
		tenant := s.tenantOf(m.Scope)
		key := m.Key()
		if j, dup := seen[key]; dup {
			return fmt.Errorf("%w: memory %d repeats the id %q and scope of memory %d", memory.ErrInvalid, i+1, m.ID, j+1)
		}
		seen[key] = i
		o, err := enc.encode(tenant, m)
		if err != nil {
			return err
		}
		objs[i] = o
		if m.OccurredAt.IsZero() {
			c := *m
			c.OccurredAt = occurredAt(m)
			m = &c
		}
		written[i] = m
		tenants = append(tenants, tenant)
		for name := range o.Vectors {
			vecs[name] = true
		}
	}
	for name := range vecs {
		if err := s.ensureVector(ctx, name); err != nil {
			return err
		}
	}
	defer s.lockTenants(tenants)()
	s.writeMu.RLock() // no class update of ours while objects are in flight
	defer s.writeMu.RUnlock()
	old, superseding, err := s.around(ctx, written, true)
	if err != nil {
		return err
	}
	plan, err := s.planContexts(ctx, written, old)
	if err != nil {
		return err
	}
	for i, m := range written {
		if c := plan.contexts[m.Key()]; c != "" {
			objs[i].Properties[pContext] = c
		}
	}
	s.planSupersession(written, objs, superseding)
	targets := targetSet{}
	for _, m := range written {
		targets.add(s, m)
		targets.add(s, old[m.Key()])
	}
	failed, stored, err := s.sendBatches(ctx, objs)
	if err != nil {
		return err
	}
	if len(failed) > 0 {
		// What was derived assumed every memory written: derive it again
		// from what was.
		for _, m := range written {
			targets[m.Key()] = target{tenant: s.tenantOf(m.Scope), id: m.ID, scope: m.Scope}
		}
		if err := errors.Join(s.repairEpisodes(ctx, plan.episodes), s.refreshTargets(ctx, targets)); err != nil {
			return fmt.Errorf("%w; and then: %w", &BatchError{Failed: failed, Stored: stored}, err)
		}
		return &BatchError{Failed: failed, Stored: stored}
	}
	for k := range seen {
		delete(targets, k) // written with their supersession
	}
	if err := errors.Join(s.applyPatches(ctx, plan.patches), s.refreshTargets(ctx, targets)); err != nil {
		return fmt.Errorf("memories stored, but their neighbours' contexts or the supersession they change were not all updated (writing them again does it): %w", err)
	}
	return nil
}

// versionFields is what a write reads of the stored versions of the
// memories it replaces or deletes: where they stand in their episode and
// what they supersede.
const versionFields = pID + " " + pScope + " " + pCreated + " " + pEpisode + " " + pSeq + " " + pOccurred + " " +
	pSupersedes + " _additional{id}"

// around reads, in one request per tenant (and thousand memories), what a
// write of mems depends on: the stored version of each (by memory.Key) and,
// with superseders, the stored memories that supersede any of their ids, by
// tenant (supersedersGet: the caller keeps those of the right scope).
func (s *Store) around(ctx context.Context, mems []*memory.Memory, superseders bool) (map[string]*memory.Memory, map[string][]*memory.Memory, error) {
	type ref struct{ uuid, id string }
	byTenant := map[string][]ref{}
	for _, m := range mems {
		t := s.tenantOf(m.Scope)
		byTenant[t] = append(byTenant[t], ref{KeyID(m.ID, m.Scope), m.ID})
	}
	old, sups := map[string]*memory.Memory{}, map[string][]*memory.Memory{}
	for tenant, refs := range byTenant {
		for start := 0; start < len(refs); start += maxIDsPerRequest {
			chunk := refs[start:min(start+maxIDsPerRequest, len(refs))]
			uuids, ids := make([]string, len(chunk)), make([]string, len(chunk))
			for i, r := range chunk {
				uuids[i], ids[i] = r.uuid, r.id
			}
			gets := []aliasedGet{{"old", "where:" + string(uuidsOperand(uuids)) + ",limit:" + strconv.Itoa(len(uuids)), versionFields}}
			if superseders {
				gets = append(gets, supersedersGet("sup", ids))
			}
			res, err := s.getAll(ctx, tenant, gets)
			if err != nil {
				return nil, nil, fmt.Errorf("read the stored versions: %w", err)
			}
			for alias, objs := range res {
				for i := range objs {
					m, err := objs[i].decodeLean()
					if err != nil {
						return nil, nil, err
					}
					if alias == "old" {
						old[m.Key()] = m
					} else {
						sups[tenant] = append(sups[tenant], m)
					}
				}
			}
		}
	}
	return old, sups, nil
}

// unindexedReason is the BatchError reason for an object Weaviate stored but
// whose index entries it lost.
const unindexedReason = "stored, but Weaviate's index does not find it (its entries were lost to a concurrent class update)"

// batchesInFlight is how many batches of one write are sent at once: the
// server indexes one while the next travels.
const batchesInFlight = 4

// sendBatches sends objs in batches of BatchSize, batchesInFlight at once, and
// returns the Engram ids refused, with the reason, and how many were stored.
func (s *Store) sendBatches(ctx context.Context, objs []*object) (map[string]string, int, error) {
	var (
		mu     sync.Mutex
		failed = map[string]string{}
		stored int
		starts []int
	)
	for start := 0; start < len(objs); start += s.cfg.BatchSize {
		starts = append(starts, start)
	}
	err := eachParallel(ctx, len(starts), batchesInFlight, func(ctx context.Context, i int) error {
		start := starts[i]
		chunk := objs[start:min(start+s.cfg.BatchSize, len(objs))]
		bad, err := s.sendChecked(ctx, chunk)
		if err != nil {
			return fmt.Errorf("store memories %d..%d of %d: %w", start+1, start+len(chunk), len(objs), err)
		}
		mu.Lock()
		defer mu.Unlock()
		stored += len(chunk) - len(bad)
		for id, why := range bad {
			failed[id] = why
		}
		return nil
	})
	return failed, stored, err
}

// sendChecked sends a batch, then checks that a filter on the ids finds
// every object the server accepted. Weaviate 1.38.11 can store an object yet
// lose its inverted-index entries when the class is updated (a named vector
// added) while the write is in flight (TestIndexLossIsRepaired); rewriting
// the same object does not re-index it, so each such object is deleted by
// its UUID and sent again, up to Retries times.
func (s *Store) sendChecked(ctx context.Context, objs []*object) (map[string]string, error) {
	refused, err := s.sendBatch(ctx, objs)
	if err != nil {
		return nil, err
	}
	pending := objs
	for round := 0; ; round++ {
		var accepted []*object
		for _, o := range pending {
			if _, bad := refused[o.Properties[pID].(string)]; !bad {
				accepted = append(accepted, o)
			}
		}
		lost, err := s.unindexed(ctx, accepted)
		if err != nil {
			return nil, err
		}
		if len(lost) == 0 {
			return refused, nil
		}
		if round >= s.cfg.Retries {
			for _, o := range lost {
				refused[o.Properties[pID].(string)] = unindexedReason
			}
			return refused, nil
		}
		for _, o := range lost {
			if err := s.deleteObject(ctx, o.Tenant, o.ID); err != nil {
				return nil, err
			}
		}
		s.repairs.Add(int64(len(lost)))
		again, err := s.sendBatch(ctx, lost)
		if err != nil {
			return nil, err
		}
		for id, why := range again {
			refused[id] = why
		}
		pending = lost
	}
}

// unindexed returns the objects of objs that a filter on their UUIDs does
// not find.
func (s *Store) unindexed(ctx context.Context, objs []*object) ([]*object, error) {
	byTenant := map[string][]*object{}
	for _, o := range objs {
		byTenant[o.Tenant] = append(byTenant[o.Tenant], o)
	}
	var lost []*object
	for tenant, os := range byTenant {
		uuids := make([]string, len(os))
		for i, o := range os {
			uuids[i] = o.ID
		}
		have, err := s.foundUUIDs(ctx, tenant, uuids)
		if err != nil {
			return nil, fmt.Errorf("check the batch: %w", err)
		}
		for _, o := range os {
			if !have[o.ID] {
				lost = append(lost, o)
			}
		}
	}
	return lost, nil
}

// deleteObject deletes one object by its UUID, which works whatever its
// index entries; a missing one is no error.
func (s *Store) deleteObject(ctx context.Context, tenant, uuid string) error {
	q := url.Values{"consistency_level": {s.cfg.Consistency}}
	if tenant != "" {
		q.Set("tenant", tenant)
	}
	err := s.c.do(ctx, http.MethodDelete, "/v1/objects/"+s.cfg.Class+"/"+uuid, q, nil, nil)
	var se *StatusError
	if errors.As(err, &se) && se.Code == http.StatusNotFound {
		return nil
	}
	return err
}

// sendBatch sends objs (one gRPC call) and resends those refused, up to
// Retries rounds (a refusal can be temporary, such as a tenant still being
// activated; the memories were all checked before, so a lasting one is
// rare). It returns the Engram ids still refused, with the reason.
func (s *Store) sendBatch(ctx context.Context, objs []*object) (map[string]string, error) {
	pending := objs
	for round := 0; ; round++ {
		res, err := s.batchOnce(ctx, pending)
		if err != nil {
			return nil, err
		}
		refused := make(map[string]string, len(res))
		var again []*object
		for i, why := range res {
			o := pending[i]
			refused[o.Properties[pID].(string)] = why
			again = append(again, o)
		}
		if len(again) == 0 || round >= s.cfg.Retries {
			return refused, nil
		}
		if !httpjson.Sleep(ctx, backoff(round+1)) {
			return nil, ctx.Err()
		}
		pending = again
	}
}

// Delete removes the memories with these ids that lie inside scope, and
// returns how many there were. An id outside the scope, or in no tenant,
// counts as absent. A scope without the tenant key deletes in every tenant.
// The contexts and supersessions the memories took part in are kept true
// (DeleteMemories).
func (s *Store) Delete(ctx context.Context, scope map[string]string, ids []string) (int, error) {
	if len(ids) == 0 {
		return 0, nil
	}
	if err := exactValues(scope, "", "", "", nil); err != nil {
		return 0, fmt.Errorf("%w: delete: %v", memory.ErrInvalid, err)
	}
	found, err := s.getMany(ctx, scope, ids, false)
	if err != nil {
		return 0, fmt.Errorf("delete: %w", err)
	}
	var mems []*memory.Memory
	for _, ms := range found {
		mems = append(mems, ms...)
	}
	return s.DeleteMemories(ctx, mems)
}

// maxIDsPerRequest bounds the ids one filter names (Weaviate's default
// QUERY_MAXIMUM_RESULTS is 10000; batch deletes stop there).
const maxIDsPerRequest = 1000

// DeleteMemories deletes these memories' objects (each named by its id and
// scope), tenant by tenant, and returns how many there were. Then, under the
// same lock of their tenants, the episodes their stored versions leave get
// their members' contexts again, and what they superseded its supersession.
func (s *Store) DeleteMemories(ctx context.Context, mems []*memory.Memory) (int, error) {
	byTenant := map[string][]string{}
	tenants := make([]string, 0, len(mems))
	for _, m := range mems {
		t := s.tenantOf(m.Scope)
		byTenant[t] = append(byTenant[t], KeyID(m.ID, m.Scope))
		tenants = append(tenants, t)
	}
	if len(mems) == 0 {
		return 0, nil
	}
	defer s.lockTenants(tenants)()
	s.writeMu.RLock()
	defer s.writeMu.RUnlock()
	// The stored versions, not the caller's copies, say what to refresh.
	old, _, err := s.around(ctx, mems, false)
	if err != nil {
		return 0, fmt.Errorf("delete: %w", err)
	}
	total := 0
	for tenant, uuids := range byTenant {
		for start := 0; start < len(uuids); start += maxIDsPerRequest {
			n, err := s.deleteUUIDs(ctx, tenant, uuids[start:min(start+maxIDsPerRequest, len(uuids))])
			total += n
			if err != nil {
				return total, fmt.Errorf("delete: %w", err)
			}
		}
	}
	episodes, targets := episodeSet{}, targetSet{}
	for _, m := range old {
		episodes.add(s, m)
		targets.add(s, m)
	}
	if err := errors.Join(s.repairEpisodes(ctx, episodes), s.refreshTargets(ctx, targets)); err != nil {
		return total, fmt.Errorf("memories deleted, but their neighbours' contexts or the supersession they ended were not all updated (writing to the episode again does it): %w", err)
	}
	return total, nil
}

// deleteUUIDs deletes, in one tenant, the objects with these UUIDs.
func (s *Store) deleteUUIDs(ctx context.Context, tenant string, uuids []string) (int, error) {
	return s.deleteWhere(ctx, tenant, []map[string]any{{"path": []string{"id"}, "operator": "ContainsAny", "valueTextArray": uuids}})
}

// deleteWhere deletes, in one tenant, the objects the conjunction of ops
// matches, with one batch delete.
func (s *Store) deleteWhere(ctx context.Context, tenant string, ops []map[string]any) (int, error) {
	var w map[string]any
	if len(ops) == 1 {
		w = ops[0]
	} else {
		w = map[string]any{"operator": "And", "operands": ops}
	}
	q := url.Values{"consistency_level": {s.cfg.Consistency}}
	if tenant != "" {
		q.Set("tenant", tenant)
	}
	var res struct {
		Results struct {
			Matches    int `json:"matches"`
			Successful int `json:"successful"`
			Failed     int `json:"failed"`
			Objects    []struct {
				ID     string `json:"id"`
				Errors *struct {
					Error []graphQLError `json:"error"`
				} `json:"errors"`
			} `json:"objects"`
		} `json:"results"`
	}
	body := map[string]any{"match": map[string]any{"class": s.cfg.Class, "where": w}, "output": "verbose"}
	err := s.c.do(ctx, http.MethodDelete, "/v1/batch/objects", q, body, &res)
	var se *StatusError
	if errors.As(err, &se) && strings.Contains(se.Message, tenantNotFoundText) {
		return 0, nil
	}
	if err != nil {
		return 0, err
	}
	if res.Results.Failed > 0 {
		for _, o := range res.Results.Objects {
			if o.Errors != nil && len(o.Errors.Error) > 0 {
				return res.Results.Successful, fmt.Errorf("weaviate: %d of %d deletes failed, e.g. object %s: %s",
					res.Results.Failed, res.Results.Matches, o.ID, s.c.clean(o.Errors.Error[0].Message))
			}
		}
		return res.Results.Successful, fmt.Errorf("weaviate: %d of %d deletes failed", res.Results.Failed, res.Results.Matches)
	}
	return res.Results.Successful, nil
}

// RecordUse adds one use to each memory with these ids inside scope, at time
// now: uses+1 and demand, decayed to now, +1 (as the SQLite store does). It
// patches only those three fields. Weaviate has no transactions, so two
// processes recording a use of the same memory at the same moment may count
// it once: demand is a soft signal, and an id deleted meanwhile is skipped.
func (s *Store) RecordUse(ctx context.Context, scope map[string]string, ids []string, now time.Time) error {
	if len(ids) == 0 {
		return nil
	}
	f := &memory.Filter{Scope: scope}
	scopeOps, err := filterOperands(f)
	if err != nil {
		return err
	}
	tenants, err := s.tenantsFor(ctx, scope)
	if err != nil {
		return err
	}
	at := formatTime(now)
	err = eachTenant(ctx, tenants, func(ctx context.Context, _ int, tenant string) error {
		for start := 0; start < len(ids); start += maxIDsPerRequest {
			chunk := ids[start:min(start+maxIDsPerRequest, len(ids))]
			ops := append([]operand{idsOperand(chunk)}, scopeOps...)
			objs, err := s.get(ctx, tenant, "where:"+where(ops)+",limit:"+strconv.Itoa(MaxK),
				pID+" "+pScope+" "+pUses+" "+pDemand+" "+pDemandAt+" _additional{id}")
			if err != nil {
				return err
			}
			for _, o := range objs {
				demand := o.Demand
				if o.DemandAt != "" {
					if t, err := parseTime(o.DemandAt); err == nil {
						demand = memory.Decay(demand, now.Sub(t))
					}
				}
				body := map[string]any{"class": s.cfg.Class, "properties": map[string]any{
					pUses: int64(o.Uses) + 1, pDemand: demand + 1, pDemandAt: at}}
				if tenant != "" {
					body["tenant"] = tenant
				}
				q := url.Values{"consistency_level": {s.cfg.Consistency}}
				err := s.c.do(ctx, http.MethodPatch, "/v1/objects/"+s.cfg.Class+"/"+o.Additional.ID, q, body, nil)
				var se *StatusError
				if errors.As(err, &se) && se.Code == http.StatusNotFound {
					continue // deleted meanwhile
				}
				if err != nil {
					return fmt.Errorf("record a use of %s: %w", o.ID, err)
				}
			}
		}
		return nil
	})
	return err
}

// patchUse writes a memory's use counters (uses, demand, demand_at) and
// nothing else, by its object UUID. A memory deleted meanwhile is no error:
// its use is simply not counted.
func (s *Store) patchUse(ctx context.Context, m *memory.Memory) error {
	if m.Uses < 0 || m.Uses > maxExactInt {
		return fmt.Errorf("%w: memory %s: uses %d out of range 0..2^53", memory.ErrInvalid, m.ID, m.Uses)
	}
	props := map[string]any{pUses: m.Uses, pDemand: m.Demand}
	if m.DemandAt != nil {
		props[pDemandAt] = formatTime(*m.DemandAt)
	}
	body := map[string]any{"class": s.cfg.Class, "properties": props}
	tenant := s.tenantOf(m.Scope)
	if tenant != "" {
		body["tenant"] = tenant
	}
	q := url.Values{"consistency_level": {s.cfg.Consistency}}
	err := s.c.do(ctx, http.MethodPatch, "/v1/objects/"+s.cfg.Class+"/"+KeyID(m.ID, m.Scope), q, body, nil)
	var se *StatusError
	if errors.As(err, &se) && se.Code == http.StatusNotFound {
		return nil
	}
	if err != nil {
		return fmt.Errorf("record a use of %s: %w", m.ID, err)
	}
	return nil
}
