package weaviate

import (
	"errors"
	"math"
	"net"
	"reflect"
	"strconv"
	"strings"
	"testing"

	pb "github.com/weaviate/weaviate/grpc/generated/protocol/v1"
	"google.golang.org/protobuf/proto"

	"github.com/engram-memory/engram/backend"
	"github.com/engram-memory/engram/memory"
)

// pbValue is a property value as a gRPC answer carries it.
func pbValue(t testing.TB, v any) *pb.Value {
	switch x := v.(type) {
	case string:
		return &pb.Value{Kind: &pb.Value_TextValue{TextValue: x}}
	case bool:
		return &pb.Value{Kind: &pb.Value_BoolValue{BoolValue: x}}
	case int64:
		return &pb.Value{Kind: &pb.Value_NumberValue{NumberValue: float64(x)}}
	case int:
		return &pb.Value{Kind: &pb.Value_IntValue{IntValue: int64(x)}}
	case float64:
		return &pb.Value{Kind: &pb.Value_NumberValue{NumberValue: x}}
	case []string:
		return &pb.Value{Kind: &pb.Value_ListValue{ListValue: &pb.ListValue{Kind: &pb.ListValue_TextValues{TextValues: &pb.TextValues{Values: x}}}}}
	}
	t.Fatalf("no gRPC value for %T", v)
	return nil
}

// resultOf is the gRPC search result of an encoded object.
func resultOf(t testing.TB, o *object) *pb.SearchResult {
	props := map[string]*pb.Value{}
	for k, v := range o.Properties {
		props[k] = pbValue(t, v)
	}
	md := &pb.MetadataResult{Id: o.ID, Score: 1.5, ScorePresent: true}
	for name, v := range o.Vectors {
		md.Vectors = append(md.Vectors, queryVector(name, v))
	}
	return &pb.SearchResult{Properties: &pb.PropertiesResult{NonRefProps: &pb.Properties{Fields: props}}, Metadata: md}
}

// TestGRPCDecode: a memory read from a gRPC answer is the one written, its
// vector included, as from a GraphQL answer (TestEncodeDecode).
func TestGRPCDecode(t *testing.T) {
	want := full("f")
	o, err := encoder{class: "C"}.encode("", want)
	if err != nil {
		t.Fatal(err)
	}
	f, err := fieldsOf(resultOf(t, o))
	if err != nil {
		t.Fatal(err)
	}
	got, err := f.decode(true)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("round trip:\n got %#v\nwant %#v", got, want)
	}
	if f.Additional.ID != o.ID || f.Additional.Score.String() != "1.5" {
		t.Errorf("metadata: id %q score %q", f.Additional.ID, f.Additional.Score)
	}
}

// TestGRPCDecodeRefuses: what Engram never writes is an error naming the
// property or vector, never a wrong memory.
func TestGRPCDecodeRefuses(t *testing.T) {
	o, err := encoder{class: "C"}.encode("", full("f"))
	if err != nil {
		t.Fatal(err)
	}
	for name, edit := range map[string]func(r *pb.SearchResult){
		"property favorite": func(r *pb.SearchResult) {
			r.Properties.NonRefProps.Fields[pFavorite] = pbValue(t, "yes")
		},
		"property scope": func(r *pb.SearchResult) {
			r.Properties.NonRefProps.Fields[pScope] = pbValue(t, "k=v")
		},
		"not a whole number of float32s": func(r *pb.SearchResult) {
			r.Metadata.Vectors[0].VectorBytes = r.Metadata.Vectors[0].VectorBytes[1:]
		},
		"want a single float32 vector": func(r *pb.SearchResult) {
			r.Metadata.Vectors[0].Type = pb.Vectors_VECTOR_TYPE_MULTI_FP32
		},
	} {
		r := resultOf(t, o)
		edit(r)
		if _, err := fieldsOf(r); err == nil || !strings.Contains(err.Error(), name) {
			t.Errorf("%s: got %v", name, err)
		}
	}
}

// TestVectorBytes: a vector survives its byte form exactly, whatever its
// values.
func TestVectorBytes(t *testing.T) {
	for _, v := range [][]float32{nil, {0}, {1, -2.5, math.MaxFloat32, math.SmallestNonzeroFloat32, float32(math.Inf(1))}} {
		got, err := vectorOf(&pb.Vectors{VectorBytes: vectorBytes(v)})
		if err != nil {
			t.Fatal(err)
		}
		if len(got) != len(v) || (len(v) > 0 && !reflect.DeepEqual(got, v)) {
			t.Errorf("%v came back as %v", v, got)
		}
	}
}

// FuzzGRPCDecode: whatever a server answers over gRPC, reading it returns
// memories or an error, never panics.
func FuzzGRPCDecode(f *testing.F) {
	o, _ := encoder{class: "C"}.encode("", full("f"))
	seed, _ := proto.Marshal(&pb.SearchReply{Results: []*pb.SearchResult{resultOf(f, o)}})
	f.Add(seed, true)
	f.Add([]byte{}, false)
	f.Fuzz(func(t *testing.T, data []byte, withVector bool) {
		var reply pb.SearchReply
		if proto.Unmarshal(data, &reply) != nil {
			return
		}
		for _, r := range reply.GetResults() {
			fl, err := fieldsOf(r)
			if err != nil {
				continue
			}
			m, err := fl.decode(withVector)
			if err == nil && (m == nil || m.ID == "") {
				t.Fatalf("decode gave %v without an error", m)
			}
			if _, err := fl.decodeLean(); err == nil && fl.ID == "" {
				t.Fatal("a lean memory without an id")
			}
		}
	})
}

// TestGRPCUnavailable: a server whose gRPC port does not answer leaves the
// store open (REST answers) and makes each search and write fail as
// unavailable, naming the address, after the retries.
func TestGRPCUnavailable(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := l.Addr().(*net.TCPAddr).Port
	l.Close() // nothing listens there now
	s := openTest(t, func(c *Config) { c.GRPCPort, c.Retries = port, 1 })
	ctx := ctxT(t)
	addr := "127.0.0.1:" + strconv.Itoa(port)
	_, err = s.BM25(ctx, LegQuery{Text: "anything", K: 5})
	if !errors.Is(err, ErrUnavailable) || !errors.Is(err, backend.ErrUnavailable) || !strings.Contains(err.Error(), addr) {
		t.Errorf("search: got %v, want unavailable naming %s", err, addr)
	}
	err = s.Put(ctx, []*memory.Memory{mem("a", "some text", nil)})
	if !errors.Is(err, ErrUnavailable) || !strings.Contains(err.Error(), addr) {
		t.Errorf("put: got %v, want unavailable naming %s", err, addr)
	}
}
