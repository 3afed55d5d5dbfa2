package weaviate

import (
	"context"
	"fmt"
	"sort"

	pb "github.com/weaviate/weaviate/grpc/generated/protocol/v1"
	"google.golang.org/protobuf/types/known/structpb"
)

// batchObject is an object as a gRPC batch carries it: the properties as
// the same map a REST batch sends (Weaviate reads both into one), the named
// vectors as float32 bytes.
func batchObject(o *object) (*pb.BatchObject, error) {
	props := make(map[string]any, len(o.Properties))
	for k, v := range o.Properties {
		if ss, ok := v.([]string); ok {
			l := make([]any, len(ss))
			for i, s := range ss {
				l[i] = s
			}
			v = l
		}
		props[k] = v
	}
	st, err := structpb.NewStruct(props)
	if err != nil {
		return nil, fmt.Errorf("object %s: properties: %w", o.ID, err)
	}
	b := &pb.BatchObject{Uuid: o.ID, Collection: o.Class, Tenant: o.Tenant,
		Properties: &pb.BatchObject_Properties{NonRefProperties: st}}
	names := make([]string, 0, len(o.Vectors))
	for name := range o.Vectors {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		b.Vectors = append(b.Vectors, queryVector(name, o.Vectors[name]))
	}
	return b, nil
}

// batchOnce sends objs in one gRPC BatchObjects call with the store's
// consistency level and returns the message of each refused object by its
// index in objs.
func (s *Store) batchOnce(ctx context.Context, objs []*object) (map[int]string, error) {
	req := &pb.BatchObjectsRequest{Objects: make([]*pb.BatchObject, len(objs)), ConsistencyLevel: consistency(s.cfg.Consistency)}
	for i, o := range objs {
		var err error
		if req.Objects[i], err = batchObject(o); err != nil {
			return nil, err
		}
	}
	var reply *pb.BatchObjectsReply
	err := s.c.rpc.call(ctx, "batch", func(ctx context.Context, api pb.WeaviateClient) error {
		var err error
		reply, err = api.BatchObjects(ctx, req)
		return err
	})
	if err != nil {
		return nil, err
	}
	refused := map[int]string{}
	for _, e := range reply.GetErrors() {
		i := int(e.GetIndex())
		if i < 0 || i >= len(objs) {
			return nil, fmt.Errorf("weaviate gRPC batch: an error names object %d of %d", i, len(objs))
		}
		refused[i] += s.c.clean(e.GetError())
	}
	return refused, nil
}

// foundUUIDs is which of the UUIDs a filter on them finds in the tenant, in
// one gRPC search.
func (s *Store) foundUUIDs(ctx context.Context, tenant string, uuids []string) (map[string]bool, error) {
	req := &pb.SearchRequest{Limit: uint32(len(uuids)), Filters: textsClause("id", "ContainsAny", uuids).proto(),
		Properties: &pb.PropertiesRequest{}, Metadata: &pb.MetadataRequest{Uuid: true}}
	objs, err := s.search(ctx, tenant, req)
	if err != nil {
		return nil, err
	}
	have := make(map[string]bool, len(objs))
	for _, f := range objs {
		have[f.Additional.ID] = true
	}
	return have, nil
}
