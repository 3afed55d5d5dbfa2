package weaviate

// Supersession. A memory that names another in Supersedes (by id, in its own
// exact scope) makes that one no longer current from its own occurred_at
// on. The superseded memory's object stores who supersedes it and when
// (pSupersededBy, pSupersededAt; noSuperseder for none), so that the
// current-only and as-of filters are plain conditions on it (filter.go).
// Every write keeps it true: a memory put learns from the stored memories
// that supersede it now, and each memory that a written or deleted memory
// superseded, before or after the write, is refreshed from the memories
// that supersede it once the write is done.

import (
	"context"
	"fmt"
	"strconv"

	"github.com/engram-memory/engram/memory"
)

// target is a memory some memory supersedes (or did): its tenant, id and
// exact scope.
type target struct {
	tenant, id string
	scope      map[string]string
}

// targetSet is a set of targets by memory.Key.
type targetSet map[string]target

// add puts what m supersedes in the set, if anything.
func (t targetSet) add(s *Store, m *memory.Memory) {
	if m != nil && m.Supersedes != "" {
		t[memory.Key(m.Supersedes, m.Scope)] = target{tenant: s.tenantOf(m.Scope), id: m.Supersedes, scope: m.Scope}
	}
}

// supersedersFields is what supersession compares of a superseding memory.
const supersedersFields = pID + " " + pScope + " " + pSupersedes + " " + pOccurred + " " + pCreated + " _additional{id}"

// supersedersGet reads the memories that supersede any of ids (in any
// scope: the caller keeps those of the superseded memory's own).
func supersedersGet(alias string, ids []string) aliasedGet {
	return aliasedGet{alias, "where:" + string(cond(pSupersedes, "ContainsAny", "valueText", gqlStrings(ids))) +
		",limit:" + strconv.Itoa(MaxK), supersedersFields}
}

// planSupersession sets, on each object about to be written (objs[i] of
// written[i], whose OccurredAt is set), who supersedes its memory: the
// stored memories that do (stored, by tenant, as around reads them), except
// those the write replaces, and the written ones that do.
func (s *Store) planSupersession(written []*memory.Memory, objs []*object, stored map[string][]*memory.Memory) {
	keys := make(map[string]bool, len(written))
	for _, m := range written {
		keys[m.Key()] = true
	}
	cands := map[string][]*memory.Memory{} // by tenant
	for tenant, ms := range stored {
		for _, c := range ms {
			if !keys[c.Key()] {
				cands[tenant] = append(cands[tenant], c)
			}
		}
	}
	for _, m := range written {
		if m.Supersedes != "" {
			t := s.tenantOf(m.Scope)
			cands[t] = append(cands[t], m)
		}
	}
	for i, m := range written {
		setSupersession(objs[i].Properties, memory.SupersessionOf(m.ID, m.Scope, cands[s.tenantOf(m.Scope)]))
	}
}

// refreshTargets recomputes the supersession of each stored target from
// the memories that supersede it now, and patches those whose stored one
// differs. A target not stored is skipped: it learns its supersession when
// it is put.
func (s *Store) refreshTargets(ctx context.Context, targets targetSet) error {
	byTenant := map[string][]target{}
	for _, t := range targets {
		byTenant[t.tenant] = append(byTenant[t.tenant], t)
	}
	var patches []propPatch
	for tenant, ts := range byTenant {
		uuids := make([]string, len(ts))
		ids := make([]string, len(ts))
		for i, t := range ts {
			uuids[i], ids[i] = KeyID(t.id, t.scope), t.id
		}
		stored := map[string]fields{} // by UUID
		var cands []*memory.Memory
		for start := 0; start < len(uuids); start += maxIDsPerRequest {
			end := min(start+maxIDsPerRequest, len(uuids))
			res, err := s.getAll(ctx, tenant, []aliasedGet{
				{"tgt", "where:" + string(uuidsOperand(uuids[start:end])) + ",limit:" + strconv.Itoa(end-start),
					pID + " " + pSupersededBy + " " + pSupersededAt + " _additional{id}"},
				supersedersGet("sup", ids[start:end]),
			})
			if err != nil {
				return fmt.Errorf("read superseded memories: %w", err)
			}
			for _, o := range res["tgt"] {
				stored[o.Additional.ID] = o
			}
			for i := range res["sup"] {
				m, err := res["sup"][i].decodeLean()
				if err != nil {
					return err
				}
				cands = append(cands, m)
			}
		}
		for i, t := range ts {
			o, ok := stored[uuids[i]]
			if !ok || o.ID != t.id {
				continue
			}
			want := map[string]any{}
			setSupersession(want, memory.SupersessionOf(t.id, t.scope, cands))
			if want[pSupersededBy] != o.SuperBy || !sameTime(want[pSupersededAt].(string), o.SuperAt) {
				patches = append(patches, propPatch{tenant: tenant, uuid: uuids[i], id: t.id, props: want})
			}
		}
	}
	return s.applyPatches(ctx, patches)
}

// sameTime reports whether two stored times are the same instant.
func sameTime(a, b string) bool {
	ta, errA := parseTime(a)
	tb, errB := parseTime(b)
	return errA == nil && errB == nil && ta.Equal(tb)
}
