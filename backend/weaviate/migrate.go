package weaviate

// Upgrades in place. A class of schema 2 (before episodes) is upgraded on
// open: the schema-3 properties are added, then every object is written
// again with them (occurred_at from created_at, superseded by none, its
// terms and day derived), and last the class description says schema 3, so
// that an upgrade cut short is resumed by the next open (rewriting an object
// with what it already holds changes nothing). A schema-3 class whose
// recorded context options (classMeta.Neighbours, Dates) are not this
// Engram's is re-derived the same way: every object's day written again and
// every episode's contexts recomputed.

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"
)

// minUpgradable is the oldest schema Open upgrades; schema 1 keyed objects
// by id alone.
const minUpgradable = 2

// upgrade brings a class of an older schema, or written with other context
// options, to this store's meta.
func (s *Store) upgrade(ctx context.Context, info *classInfo, meta classMeta) error {
	s.learnVectors(info)
	if err := s.addProperties(ctx, info); err != nil {
		return err
	}
	tenants, err := s.Tenants(ctx)
	if err != nil {
		return err
	}
	if s.cfg.TenantKey == "" {
		tenants = []string{""}
	}
	episodes := episodeSet{}
	for _, t := range tenants {
		if err := s.rewriteTenant(ctx, t, episodes); err != nil {
			return fmt.Errorf("upgrade class %s from schema %d: %w", s.cfg.Class, meta.Engram, err)
		}
	}
	if meta.Engram == SchemaVersion && meta.Neighbours != s.context.Neighbours {
		s.writeMu.RLock()
		err := s.repairEpisodes(ctx, episodes)
		s.writeMu.RUnlock()
		if err != nil {
			return fmt.Errorf("upgrade class %s: contexts: %w", s.cfg.Class, err)
		}
	}
	return s.setDescription(ctx)
}

// learnVectors records the class's named vectors.
func (s *Store) learnVectors(info *classInfo) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for name := range info.VectorConfig {
		s.vectors[name] = true
	}
	s.replicated = info.Replication.Factor > 1
}

// addProperties adds the properties of this schema the class lacks. One
// that another process added meanwhile is no error.
func (s *Store) addProperties(ctx context.Context, info *classInfo) error {
	have := map[string]bool{}
	for _, p := range info.Properties {
		have[p.Name] = true
	}
	s.schemaMu.Lock()
	defer s.schemaMu.Unlock()
	for _, p := range properties(s.cfg.Tokenizer) {
		if have[p.Name] {
			continue
		}
		s.writeMu.Lock()
		err := s.c.do(ctx, http.MethodPost, "/v1/schema/"+url.PathEscape(s.cfg.Class)+"/properties", nil, p, nil)
		s.writeMu.Unlock()
		var se *StatusError
		if errors.As(err, &se) && se.Code == http.StatusUnprocessableEntity && strings.Contains(se.Message, "already exists") {
			continue
		}
		if err != nil {
			return fmt.Errorf("add property %s to class %s: %w", p.Name, s.cfg.Class, err)
		}
	}
	return nil
}

// rewriteTenant writes every object of one tenant again as this schema
// encodes it, keeping its context and supersession as stored (none, from
// schema 2), and adds the episodes it meets to episodes. It pages by object
// UUID, which a rewrite keeps.
func (s *Store) rewriteTenant(ctx context.Context, tenant string, episodes episodeSet) error {
	s.termCounts.invalidate([]string{tenant})
	defer s.termCounts.invalidate([]string{tenant})
	enc := s.enc()
	after := ""
	for {
		args := "limit:" + strconv.Itoa(listPage)
		if after != "" {
			args += ",after:" + gqlString(after)
		}
		objs, err := s.get(ctx, tenant, args, pContext+" "+fieldList(s.vectorSelection(true), ""))
		if err != nil {
			return err
		}
		if len(objs) == 0 {
			return nil
		}
		batch := make([]*object, 0, len(objs))
		for i := range objs {
			m, err := objs[i].decode(true)
			if err != nil {
				return err
			}
			o, err := enc.encode(tenant, m)
			if err != nil {
				return err
			}
			if c := objs[i].Context; c != "" {
				o.Properties[pContext] = c
			}
			batch = append(batch, o)
			episodes.add(s, m)
		}
		if err := s.sendAll(ctx, batch); err != nil {
			return err
		}
		if len(objs) < listPage {
			return nil
		}
		after = objs[len(objs)-1].Additional.ID
	}
}

// sendAll writes objects in batches, every one of them or an error.
func (s *Store) sendAll(ctx context.Context, objs []*object) error {
	s.writeMu.RLock()
	defer s.writeMu.RUnlock()
	bad, stored, err := s.sendBatches(ctx, objs)
	if err == nil && len(bad) > 0 {
		err = &BatchError{Failed: bad, Stored: stored}
	}
	return err
}

// setDescription records this store's meta in the class description.
func (s *Store) setDescription(ctx context.Context) error {
	meta, _ := json.Marshal(s.meta())
	err := s.updateClass(ctx, func(class map[string]any) bool {
		if class["description"] == string(meta) {
			return false
		}
		class["description"] = string(meta)
		return true
	})
	if err != nil {
		return fmt.Errorf("upgrade class %s: record schema %d: %w", s.cfg.Class, SchemaVersion, err)
	}
	return nil
}
