package weaviate

import (
	"context"
	"errors"
	"slices"
	"time"

	pb "github.com/weaviate/weaviate/grpc/generated/protocol/v1"

	"github.com/engram-memory/engram/memory"
)

// grpcOperators are Weaviate's filter operators by their GraphQL names.
var grpcOperators = map[string]pb.Filters_Operator{
	"Equal":            pb.Filters_OPERATOR_EQUAL,
	"NotEqual":         pb.Filters_OPERATOR_NOT_EQUAL,
	"GreaterThan":      pb.Filters_OPERATOR_GREATER_THAN,
	"GreaterThanEqual": pb.Filters_OPERATOR_GREATER_THAN_EQUAL,
	"LessThan":         pb.Filters_OPERATOR_LESS_THAN,
	"LessThanEqual":    pb.Filters_OPERATOR_LESS_THAN_EQUAL,
	"ContainsAny":      pb.Filters_OPERATOR_CONTAINS_ANY,
	"ContainsAll":      pb.Filters_OPERATOR_CONTAINS_ALL,
	"And":              pb.Filters_OPERATOR_AND,
	"Or":               pb.Filters_OPERATOR_OR,
}

// uuidPath is the object UUID as a gRPC filter names it ("id" in GraphQL).
const uuidPath = "_id"

// proto renders the clause as a gRPC filter. Dates travel as text, as
// Weaviate's gRPC filters take them.
func (c clause) proto() *pb.Filters {
	f := &pb.Filters{Operator: grpcOperators[c.op]}
	if c.op == "And" || c.op == "Or" {
		for _, s := range c.sub {
			f.Filters = append(f.Filters, s.proto())
		}
		return f
	}
	path := c.path
	if path == "id" {
		path = uuidPath
	}
	f.Target = &pb.FilterTarget{Target: &pb.FilterTarget_Property{Property: path}}
	switch {
	case c.date != nil:
		f.TestValue = &pb.Filters_ValueText{ValueText: formatTime(*c.date)}
	case c.list:
		f.TestValue = &pb.Filters_ValueTextArray{ValueTextArray: &pb.TextArray{Values: c.texts}}
	default:
		f.TestValue = &pb.Filters_ValueText{ValueText: c.texts[0]}
	}
	return f
}

// protoFilter is the conjunction of clauses as one gRPC filter (nil: none).
func protoFilter(cs []clause) *pb.Filters {
	switch len(cs) {
	case 0:
		return nil
	case 1:
		return cs[0].proto()
	}
	return clause{op: "And", sub: cs}.proto()
}

// selection is what a search returns of each object: the lean or full
// properties, the named vectors (if any) and the metadata meta asks for
// (the UUID always).
func selection(lean bool, vectors []string, meta *pb.MetadataRequest) (*pb.PropertiesRequest, *pb.MetadataRequest) {
	props := fullProps
	if lean {
		props = leanProps
	}
	if meta == nil {
		meta = &pb.MetadataRequest{}
	}
	meta.Uuid, meta.Vectors = true, vectors
	return &pb.PropertiesRequest{NonRefProperties: props}, meta
}

// search runs one gRPC Search in a tenant of the class, with the store's
// consistency level, and reads each result's fields straight from the
// answer's bytes (grpcwire.go). A missing tenant reads as empty.
func (s *Store) search(ctx context.Context, tenant string, req *pb.SearchRequest) ([]fields, error) {
	req.Collection, req.Tenant, req.ConsistencyLevel = s.cfg.Class, tenant, consistency(s.cfg.Consistency)
	req.Uses_123Api, req.Uses_125Api, req.Uses_127Api = true, true, true
	var ans searchAnswer
	err := s.c.rpc.call(ctx, "search", func(ctx context.Context, _ pb.WeaviateClient) error {
		return s.c.rpc.search(ctx, req, &ans)
	})
	if errors.Is(err, errTenantNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	return ans.objs, nil
}

// byUUIDs reads the memories (vectors left out) with these object UUIDs in
// the tenant, in one gRPC search.
func (s *Store) byUUIDs(ctx context.Context, tenant string, uuids []string) ([]*memory.Memory, error) {
	req := &pb.SearchRequest{Limit: uint32(len(uuids)), Filters: textsClause("id", "ContainsAny", uuids).proto()}
	req.Properties, req.Metadata = selection(false, nil, nil)
	objs, err := s.search(ctx, tenant, req)
	if err != nil {
		return nil, err
	}
	return s.decodeAll(objs, nil, false)
}

// termsInFlight bounds the concurrent requests (probes, counts) of one
// termStats.
const termsInFlight = 8

// count is how many objects of the tenant the filter (nil: all) admits, in
// one gRPC Aggregate; 0 for a missing tenant.
func (s *Store) count(ctx context.Context, tenant string, filter *pb.Filters) (int, error) {
	req := &pb.AggregateRequest{Collection: s.cfg.Class, Tenant: tenant, ObjectsCount: true, Filters: filter}
	var reply *pb.AggregateReply
	err := s.c.rpc.call(ctx, "aggregate", func(ctx context.Context, api pb.WeaviateClient) error {
		var err error
		reply, err = api.Aggregate(ctx, req)
		return err
	})
	if errors.Is(err, errTenantNotFound) {
		return 0, nil
	}
	if err != nil {
		return 0, err
	}
	return int(reply.GetSingleResult().GetObjectsCount()), nil
}

// termStats is a tenant's memory count and the number holding each of terms,
// from the store's termCache where it has them (termstats.go), else found by
// countTerms.
func (s *Store) termStats(ctx context.Context, tenant string, terms []string) (int, map[string]int, error) {
	uniq := slices.Compact(slices.Sorted(slices.Values(terms)))
	return s.termCounts.stats(ctx, tenant, uniq, time.Now(), func(ctx context.Context, n int, terms []string) (int, map[string]int, error) {
		return s.countTerms(ctx, tenant, n, terms)
	})
}

// countTerms finds how many of the tenant's n memories hold each of terms
// (distinct), counting n too when it is negative (termdf.go): first that
// count and the probe of all terms at once (one term: its own probe), then
// its own probe for each term the first could not tell, then a filtered
// count (gRPC Aggregate) of each term no probe could tell; each round's
// requests termsInFlight at a time. A class split into shards keeps
// statistics per shard, and a probe's hits may all come from one: there
// every term is counted.
func (s *Store) countTerms(ctx context.Context, tenant string, n int, terms []string) (int, map[string]int, error) {
	probe := s.cfg.Shards <= 1
	df := make(map[string]int, len(terms))
	var (
		all  []multiHit // the probe of all terms
		one  []probeHit // the probe of the only term
		jobs []func(ctx context.Context) error
	)
	if n < 0 {
		jobs = append(jobs, func(ctx context.Context) error {
			var err error
			n, err = s.count(ctx, tenant, nil)
			return err
		})
	}
	switch {
	case !probe || len(terms) == 0:
	case len(terms) == 1:
		jobs = append(jobs, func(ctx context.Context) error {
			var err error
			one, err = s.probe(ctx, tenant, terms[0])
			return err
		})
	default:
		jobs = append(jobs, func(ctx context.Context) error {
			var err error
			all, err = s.probeAll(ctx, tenant, terms)
			return err
		})
	}
	if err := eachParallel(ctx, len(jobs), termsInFlight, func(ctx context.Context, i int) error { return jobs[i](ctx) }); err != nil {
		return 0, nil, err
	}
	left := terms
	switch {
	case !probe:
	case len(terms) == 1:
		if f, ok := dfFromProbe(one, n, s.cfg.K1, s.cfg.B); ok {
			df[terms[0]], left = f, nil
		}
	default:
		dfs, ok := dfsFromProbe(all, terms, n, s.cfg.K1, s.cfg.B)
		left = nil
		for i, t := range terms {
			if ok[i] {
				df[t] = dfs[i]
			} else {
				left = append(left, t)
			}
		}
		hits := make([][]probeHit, len(left))
		err := eachParallel(ctx, len(left), termsInFlight, func(ctx context.Context, i int) error {
			var err error
			hits[i], err = s.probe(ctx, tenant, left[i])
			return err
		})
		if err != nil {
			return 0, nil, err
		}
		var still []string
		for i, t := range left {
			if f, ok := dfFromProbe(hits[i], n, s.cfg.K1, s.cfg.B); ok {
				df[t] = f
			} else {
				still = append(still, t)
			}
		}
		left = still
	}
	counts := make([]int, len(left))
	err := eachParallel(ctx, len(left), termsInFlight, func(ctx context.Context, i int) error {
		var err error
		counts[i], err = s.count(ctx, tenant, textClause(pTerms, "Equal", left[i]).proto())
		return err
	})
	if err != nil {
		return 0, nil, err
	}
	for i, t := range left {
		df[t] = counts[i]
	}
	return n, df, nil
}
