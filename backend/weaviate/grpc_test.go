package weaviate

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"net"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"

	pb "github.com/weaviate/weaviate/grpc/generated/protocol/v1"
	"google.golang.org/protobuf/encoding/protowire"
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

// fieldsOfProto is the reference for decodeReply: a result that protobuf's
// generated code decoded, read through the generated accessors (a map of
// property values, each a oneof) into the same fields.
func fieldsOfProto(r *pb.SearchResult) (fields, error) {
	var f fields
	md := r.GetMetadata()
	f.Additional.ID = md.GetId()
	if md.GetScorePresent() {
		f.Additional.Score = json.Number(strconv.FormatFloat(float64(md.GetScore()), 'g', -1, 64))
	}
	if md.GetDistancePresent() {
		d := float64(md.GetDistance())
		f.Additional.Distance = &d
	}
	f.Additional.ExplainScore = md.GetExplainScore()
	for _, v := range md.GetVectors() {
		vec, err := vectorOf(v.GetName(), v.GetType(), v.GetVectorBytes())
		if err != nil {
			return fields{}, fmt.Errorf("object %s: %w", f.Additional.ID, err)
		}
		if f.vectors == nil {
			f.vectors = map[string][]float32{}
		}
		f.vectors[v.GetName()] = vec
	}
	for name, pv := range r.GetProperties().GetNonRefProps().GetFields() {
		slot, ok := slotOf[name]
		if !ok {
			continue
		}
		var v value
		switch k := pv.GetKind().(type) {
		case *pb.Value_NumberValue:
			v = value{kind: kindNumber, num: k.NumberValue}
		case *pb.Value_BoolValue:
			v = value{kind: kindBool, flag: k.BoolValue}
		case *pb.Value_ObjectValue:
			v = value{kind: kindObject}
		case *pb.Value_ListValue:
			v = value{kind: kindList}
			switch l := k.ListValue.GetKind().(type) {
			case nil:
			case *pb.ListValue_TextValues:
				v.listKind, v.list = listText, l.TextValues.GetValues()
			default:
				v.listKind = -1 // any other list
			}
		case *pb.Value_DateValue:
			v = value{kind: kindDate, str: k.DateValue}
		case *pb.Value_UuidValue:
			v = value{kind: kindUUID, str: k.UuidValue}
		case *pb.Value_IntValue:
			v = value{kind: kindInt, integer: k.IntValue}
		case *pb.Value_GeoValue:
			v = value{kind: kindGeo}
		case *pb.Value_BlobValue:
			v = value{kind: kindBlob, str: k.BlobValue}
		case *pb.Value_PhoneValue:
			v = value{kind: kindPhone}
		case *pb.Value_NullValue:
			v = value{kind: kindNull}
		case *pb.Value_TextValue:
			v = value{kind: kindText, str: k.TextValue}
		}
		if err := f.set(slot, &v); err != nil {
			return fields{}, fmt.Errorf("object %s: property %s: %w", f.Additional.ID, name, err)
		}
	}
	return f, nil
}

// decodeBoth reads an answer's bytes with decodeReply and with the
// reference: the reference's fields, or why it refused them (refused), or
// that protobuf could not parse the bytes at all (unparsed).
func decodeBoth(data []byte) (wire, ref []fields, wireErr, refErr error, unparsed bool) {
	wire, wireErr = decodeReply(data)
	var reply pb.SearchReply
	if err := proto.Unmarshal(data, &reply); err != nil {
		return wire, nil, wireErr, err, true
	}
	for _, r := range reply.GetResults() {
		f, err := fieldsOfProto(r)
		if err != nil {
			return wire, nil, wireErr, err, false
		}
		ref = append(ref, f)
	}
	return wire, ref, wireErr, nil, false
}

// checkAgainstProto fails t unless decodeReply reads data as the reference
// does: the same fields where the reference reads them, an error where it
// refuses them. Where protobuf cannot parse the bytes, decodeReply (which
// skips what it does not read) may read them. It returns what decodeReply
// read.
func checkAgainstProto(t *testing.T, data []byte) ([]fields, error) {
	t.Helper()
	wire, ref, wireErr, refErr, unparsed := decodeBoth(data)
	switch {
	case unparsed:
	case refErr != nil && wireErr == nil:
		t.Fatalf("the reference refuses the answer (%v), decodeReply read it", refErr)
	case refErr == nil && wireErr != nil:
		t.Fatalf("decodeReply refuses what the reference reads: %v", wireErr)
	case refErr == nil && !reflect.DeepEqual(wire, ref):
		t.Fatalf("decodeReply read\n%#v\nthe reference\n%#v", wire, ref)
	}
	return wire, wireErr
}

// TestGRPCDecode: a memory read from a gRPC answer is the one written, its
// vector included, as from a GraphQL answer (TestEncodeDecode).
func TestGRPCDecode(t *testing.T) {
	want := full("f")
	o, err := encoder{class: "C"}.encode("", want)
	if err != nil {
		t.Fatal(err)
	}
	data, err := proto.Marshal(&pb.SearchReply{Results: []*pb.SearchResult{resultOf(t, o)}})
	if err != nil {
		t.Fatal(err)
	}
	fs, err := checkAgainstProto(t, data)
	if err != nil || len(fs) != 1 {
		t.Fatalf("%d results, %v", len(fs), err)
	}
	f := fs[0]
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
		"property favorite: unexpected text value": func(r *pb.SearchResult) {
			r.Properties.NonRefProps.Fields[pFavorite] = pbValue(t, "yes")
		},
		"property scope: unexpected text value": func(r *pb.SearchResult) {
			r.Properties.NonRefProps.Fields[pScope] = pbValue(t, "k=v")
		},
		"property tags: unexpected list value (not of texts)": func(r *pb.SearchResult) {
			r.Properties.NonRefProps.Fields[pTags] = &pb.Value{Kind: &pb.Value_ListValue{ListValue: &pb.ListValue{
				Kind: &pb.ListValue_IntValues{IntValues: &pb.IntValues{Values: []byte{1}}}}}}
		},
		"property text: unexpected uuid value": func(r *pb.SearchResult) {
			r.Properties.NonRefProps.Fields[pText] = &pb.Value{Kind: &pb.Value_UuidValue{UuidValue: "x"}}
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
		data, err := proto.Marshal(&pb.SearchReply{Results: []*pb.SearchResult{r}})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := decodeReply(data); err == nil || !strings.Contains(err.Error(), "result 1: object ") || !strings.Contains(err.Error(), name) {
			t.Errorf("%s: got %v", name, err)
		}
		if _, err := fieldsOfProto(r); err == nil || !strings.Contains(err.Error(), name) {
			t.Errorf("reference, %s: got %v", name, err)
		}
	}
}

// TestWireMatchesProto: answers as protobuf may encode them, beyond what
// proto.Marshal writes (a message or key repeated, a field of another wire
// type, unknown fields, a oneof changing kind), read by decodeReply as by
// protobuf's generated code.
func TestWireMatchesProto(t *testing.T) {
	msg := func(num protowire.Number, parts ...[]byte) []byte {
		return protowire.AppendBytes(protowire.AppendTag(nil, num, protowire.BytesType), slices.Concat(parts...))
	}
	str := func(num protowire.Number, s string) []byte { return msg(num, []byte(s)) }
	varint := func(num protowire.Number, x uint64) []byte {
		return protowire.AppendVarint(protowire.AppendTag(nil, num, protowire.VarintType), x)
	}
	fixed32 := func(num protowire.Number, x uint32) []byte {
		return protowire.AppendFixed32(protowire.AppendTag(nil, num, protowire.Fixed32Type), x)
	}
	fixed64 := func(num protowire.Number, x uint64) []byte {
		return protowire.AppendFixed64(protowire.AppendTag(nil, num, protowire.Fixed64Type), x)
	}
	entry := func(key string, value ...[]byte) []byte { // one map entry, its value a Value's fields
		return msg(propertiesFields, str(entryKey, key), msg(entryValue, value...))
	}
	texts := func(ss ...string) []byte {
		var b [][]byte
		for _, s := range ss {
			b = append(b, str(textValuesValues, s))
		}
		return msg(protowire.Number(kindList), msg(listText, b...))
	}
	result := func(props, meta []byte) []byte { // a reply of one result
		return msg(replyResults, msg(resultProperties, msg(propsNonRef, props)), msg(resultMetadata, meta))
	}
	id := str(mdID, "obj")
	cases := []struct {
		name string
		data []byte
	}{
		{"empty", nil},
		{"a result with nothing", msg(replyResults)},
		{"text and number", result(slices.Concat(entry(pText, str(13, "hello")), entry(pUses, fixed64(1, math.Float64bits(3)))), id)},
		{"int for a number", result(entry(pSeq, varint(8, 1<<60)), id)},
		{"a key's last entry wins", result(slices.Concat(entry(pText, str(13, "first")), entry(pText, str(13, "second"))), id)},
		{"a later empty entry wins", result(slices.Concat(entry(pText, str(13, "first")), msg(propertiesFields, str(entryKey, pText))), id)},
		{"a later null wins", result(slices.Concat(entry(pText, str(13, "first")), entry(pText, varint(12, 0))), id)},
		{"a later good entry wins over a bad one", result(slices.Concat(entry(pFavorite, str(13, "yes")), entry(pFavorite, varint(3, 1))), id)},
		{"a later bad entry loses", result(slices.Concat(entry(pFavorite, varint(3, 1)), entry(pFavorite, str(13, "yes"))), id)},
		{"a value's oneof changes kind", result(entry(pText, fixed64(1, 7), str(13, "t")), id)},
		{"a value's oneof of a wrong wire type is skipped", result(entry(pText, str(13, "t"), varint(13, 5)), id)},
		{"a value's list given twice is merged", result(entry(pTags, texts("a"), texts("b", "c")), id)},
		{"a list of texts then a list of ints", result(entry(pTags, texts("a"), msg(5, msg(7, []byte{1}))), id)},
		{"an empty list", result(entry(pScope, msg(5)), id)},
		{"an empty list of texts", result(entry(pScope, msg(5, msg(listText))), id)},
		{"the value message given twice in an entry", result(msg(propertiesFields, str(entryKey, pTags), msg(entryValue, texts("a")), msg(entryValue, texts("b"))), id)},
		{"the key given twice in an entry", result(msg(propertiesFields, str(entryKey, pName), str(entryKey, pText), msg(entryValue, str(13, "x"))), id)},
		{"an unknown property", result(entry("elsewhere", str(7, "u")), id)},
		{"unknown fields everywhere", slices.Concat(varint(1, 9), result(slices.Concat(entry(pText, str(13, "x"), varint(99, 1)), varint(77, 1)), slices.Concat(id, varint(99, 1), fixed64(98, 1))), str(3, "z"))},
		{"properties and metadata twice", slices.Concat(
			msg(replyResults, msg(resultProperties, msg(propsNonRef, entry(pText, str(13, "x")))), msg(resultMetadata, id, fixed32(mdScore, math.Float32bits(2)), varint(mdScorePresent, 1)),
				msg(resultProperties, msg(propsNonRef, entry(pName, str(13, "n")))), msg(resultMetadata, str(mdExplainScore, "why"), varint(mdScorePresent, 0))))},
		{"distance and score", result(nil, slices.Concat(id, fixed32(mdDistance, math.Float32bits(0.25)), varint(mdDistancePresent, 1), fixed32(mdScore, math.Float32bits(1.1)), varint(mdScorePresent, 1)))},
		{"vectors, one name twice", result(nil, slices.Concat(id, msg(mdVectors, str(vecName, "v"), msg(vecBytes, vectorBytes([]float32{1, 2}))), msg(mdVectors, str(vecName, "v"), msg(vecBytes, vectorBytes([]float32{3}))), msg(mdVectors, str(vecName, "w"))))},
		{"a vector of another type", result(nil, slices.Concat(id, msg(mdVectors, str(vecName, "v"), varint(vecType, 2))))},
		{"a negative vector type", result(nil, slices.Concat(id, msg(mdVectors, str(vecName, "v"), varint(vecType, math.MaxUint64))))},
		{"two results", slices.Concat(result(entry(pText, str(13, "a")), id), result(entry(pText, str(13, "b")), str(mdID, "other")))},
		{"a text not UTF-8", result(entry(pText, str(13, "\xff")), id)},
		{"an id not UTF-8", result(nil, str(mdID, "\xfe"))},
		{"a group", slices.Concat(protowire.AppendTag(nil, 9, protowire.StartGroupType), varint(1, 1), protowire.AppendTag(nil, 9, protowire.EndGroupType), result(entry(pText, str(13, "a")), id))},
		{"cut short", result(entry(pText, str(13, "abc")), id)[:20]},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) { checkAgainstProto(t, c.data) })
	}
}

// TestVectorBytes: a vector survives its byte form exactly, whatever its
// values.
func TestVectorBytes(t *testing.T) {
	for _, v := range [][]float32{nil, {0}, {1, -2.5, math.MaxFloat32, math.SmallestNonzeroFloat32, float32(math.Inf(1))}} {
		got, err := vectorOf("v", pb.Vectors_VECTOR_TYPE_SINGLE_FP32, vectorBytes(v))
		if err != nil {
			t.Fatal(err)
		}
		if len(got) != len(v) || (len(v) > 0 && !reflect.DeepEqual(got, v)) {
			t.Errorf("%v came back as %v", v, got)
		}
	}
}

// FuzzGRPCDecode: whatever a server answers over gRPC, decodeReply reads
// it as protobuf's generated code does (checkAgainstProto), never panics,
// and what it reads decodes to memories or an error.
func FuzzGRPCDecode(f *testing.F) {
	o, _ := encoder{class: "C"}.encode("", full("f"))
	seed, _ := proto.Marshal(&pb.SearchReply{Results: []*pb.SearchResult{resultOf(f, o)}})
	f.Add(seed, true)
	f.Add([]byte{}, false)
	f.Fuzz(func(t *testing.T, data []byte, withVector bool) {
		fs, err := checkAgainstProto(t, data)
		if err != nil {
			return
		}
		for _, fl := range fs {
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

// BenchmarkDecodeReply: a 50-hit leg's answer of whole memories (SciFact
// abstracts, as TestEval's legs read them) read by decodeReply and by
// protobuf's generated code with the reference reading.
func BenchmarkDecodeReply(b *testing.B) {
	var results []*pb.SearchResult
	for i := range 50 {
		m := full(fmt.Sprintf("m%d", i))
		m.Text = strings.Repeat("Chronic inflammation of the airway drives remodelling in asthma. ", 24)
		m.Embedding = nil
		o, err := encoder{class: "C"}.encode("", m)
		if err != nil {
			b.Fatal(err)
		}
		r := resultOf(b, o)
		r.Metadata.Vectors = nil
		results = append(results, r)
	}
	data, err := proto.Marshal(&pb.SearchReply{Results: results})
	if err != nil {
		b.Fatal(err)
	}
	b.Run("wire", func(b *testing.B) {
		b.SetBytes(int64(len(data)))
		for b.Loop() {
			if _, err := decodeReply(data); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("protobuf", func(b *testing.B) {
		b.SetBytes(int64(len(data)))
		for b.Loop() {
			var reply pb.SearchReply
			if err := proto.Unmarshal(data, &reply); err != nil {
				b.Fatal(err)
			}
			for _, r := range reply.GetResults() {
				if _, err := fieldsOfProto(r); err != nil {
					b.Fatal(err)
				}
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
