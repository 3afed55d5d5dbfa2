package weaviate

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"strconv"
	"unicode/utf8"

	pb "github.com/weaviate/weaviate/grpc/generated/protocol/v1"
	"google.golang.org/grpc/encoding"
	grpcmem "google.golang.org/grpc/mem"
	"google.golang.org/protobuf/encoding/protowire"
)

// A Search answer is read straight from its bytes into fields, without
// building the protobuf messages first. Generated code reads each property
// value into a map entry and a oneof wrapper, by reflection: for a 50-hit
// leg of whole memories (110 KB) that took 0.65–0.69 ms of CPU, most of the
// client's share of a search. decodeReply reads only what Engram uses and
// skips the rest (groups, generative results, other metadata) as unknown
// fields, with protobuf's rules for what it reads: a field of an
// unexpected wire type is skipped, a scalar's last occurrence wins, a
// message that occurs twice is merged, a map key's last entry wins, and a
// string must be UTF-8. TestWireMatchesProto and FuzzGRPCDecode check it
// against protobuf's own decoding (fieldsOfProto).

// Field numbers of Weaviate v1.38.11's gRPC messages (search_get.proto,
// properties.proto, base.proto).
const (
	replyResults      = 2  // SearchReply.results
	resultProperties  = 1  // SearchResult.properties
	resultMetadata    = 2  // SearchResult.metadata
	propsNonRef       = 11 // PropertiesResult.non_ref_props
	propertiesFields  = 1  // Properties.fields, the map's entries
	entryKey          = 1
	entryValue        = 2
	mdID              = 1 // MetadataResult
	mdDistance        = 7
	mdDistancePresent = 8
	mdScore           = 11
	mdScorePresent    = 12
	mdExplainScore    = 13
	mdVectors         = 23
	vecName           = 1 // Vectors
	vecBytes          = 3
	vecType           = 4
	textValuesValues  = 1 // TextValues.values
)

// reader reads a message's fields in turn: after next, num and typ are the
// field's number and wire type, x a varint's or fixed-width field's value,
// val a length-delimited field's bytes.
type reader struct {
	b   []byte
	num protowire.Number
	typ protowire.Type
	x   uint64
	val []byte
	err error
}

// next reads the next field; false at the end of the message or at an
// error (r.err).
func (r *reader) next() bool {
	if len(r.b) == 0 || r.err != nil {
		return false
	}
	tag, n := r.varint(r.b)
	if n < 0 {
		return r.fail(protowire.ParseError(n))
	}
	r.num, r.typ = protowire.DecodeTag(tag)
	if r.num < protowire.MinValidNumber {
		return r.fail(errFieldNumber)
	}
	b := r.b[n:]
	switch r.typ {
	case protowire.VarintType:
		r.x, n = r.varint(b)
	case protowire.Fixed32Type:
		var v uint32
		v, n = protowire.ConsumeFixed32(b)
		r.x = uint64(v)
	case protowire.Fixed64Type:
		r.x, n = protowire.ConsumeFixed64(b)
	case protowire.BytesType:
		var l uint64
		if l, n = r.varint(b); n >= 0 {
			if l > uint64(len(b)-n) {
				return r.fail(io.ErrUnexpectedEOF)
			}
			r.val = b[n : n+int(l)]
			n += int(l)
		}
	default:
		n = protowire.ConsumeFieldValue(r.num, r.typ, b)
	}
	if n < 0 {
		return r.fail(protowire.ParseError(n))
	}
	r.b = b[n:]
	return true
}

// varint reads a varint from b: its value and length, or a negative length.
func (*reader) varint(b []byte) (uint64, int) {
	if len(b) > 0 && b[0] < 0x80 {
		return uint64(b[0]), 1
	}
	return protowire.ConsumeVarint(b)
}

// errFieldNumber is a field numbered below 1.
var errFieldNumber = errors.New("invalid field number")

// fail ends the reading with err.
func (r *reader) fail(err error) bool {
	r.err = err
	return false
}

// is says whether the field read is field num of wire type typ.
func (r *reader) is(num protowire.Number, typ protowire.Type) bool {
	return r.num == num && r.typ == typ
}

// str is the field's bytes as a string, which must be UTF-8 (protobuf
// refuses a string field that is not).
func (r *reader) str() (string, error) {
	if !utf8.Valid(r.val) {
		return "", fmt.Errorf("string field %d is not valid UTF-8", r.num)
	}
	return string(r.val), nil
}

// decodeReply reads a SearchReply's results.
func decodeReply(b []byte) ([]fields, error) {
	var (
		out     []fields
		scratch []entry
		err     error
	)
	r := reader{b: b}
	for r.next() {
		if !r.is(replyResults, protowire.BytesType) {
			continue
		}
		var f fields
		if f, scratch, err = decodeResult(r.val, scratch[:0]); err != nil {
			return nil, fmt.Errorf("result %d: %w", len(out)+1, err)
		}
		out = append(out, f)
	}
	if r.err != nil {
		return nil, r.err
	}
	return out, nil
}

// entry is one entry of the properties map that Engram reads: the
// property's slot and its value's occurrences (more than one: merged).
type entry struct {
	slot  int
	value []byte
	more  [][]byte
}

// rawVector is one named vector of an answer, checked and decoded once the
// object's id is known.
type rawVector struct {
	name  string
	typ   pb.Vectors_VectorType
	bytes []byte
}

// decodeResult reads one SearchResult into fields; entries is scratch
// space for its properties, returned for the next result. The properties
// and the metadata may each occur more than once, each occurrence
// continuing the one before (a merge).
func decodeResult(b []byte, entries []entry) (fields, []entry, error) {
	var (
		f                     fields
		score, distance       float32
		scoreSet, distanceSet bool
		vectors               []rawVector
		err                   error
	)
	r := reader{b: b}
	for r.next() {
		switch {
		case r.is(resultProperties, protowire.BytesType):
			p := reader{b: r.val}
			for p.next() {
				if p.is(propsNonRef, protowire.BytesType) {
					if entries, err = readEntries(p.val, entries); err != nil {
						return fields{}, entries, err
					}
				}
			}
			if p.err != nil {
				return fields{}, entries, p.err
			}
		case r.is(resultMetadata, protowire.BytesType):
			m := reader{b: r.val}
			for m.next() {
				switch {
				case m.is(mdID, protowire.BytesType):
					if f.Additional.ID, err = m.str(); err != nil {
						return fields{}, entries, err
					}
				case m.is(mdDistance, protowire.Fixed32Type):
					distance = math.Float32frombits(uint32(m.x))
				case m.is(mdDistancePresent, protowire.VarintType):
					distanceSet = m.x != 0
				case m.is(mdScore, protowire.Fixed32Type):
					score = math.Float32frombits(uint32(m.x))
				case m.is(mdScorePresent, protowire.VarintType):
					scoreSet = m.x != 0
				case m.is(mdExplainScore, protowire.BytesType):
					if f.Additional.ExplainScore, err = m.str(); err != nil {
						return fields{}, entries, err
					}
				case m.is(mdVectors, protowire.BytesType):
					v, err := readVector(m.val)
					if err != nil {
						return fields{}, entries, err
					}
					vectors = append(vectors, v)
				}
			}
			if m.err != nil {
				return fields{}, entries, m.err
			}
		}
	}
	if r.err != nil {
		return fields{}, entries, r.err
	}
	if scoreSet {
		f.Additional.Score = json.Number(strconv.FormatFloat(float64(score), 'g', -1, 64))
	}
	if distanceSet {
		d := float64(distance)
		f.Additional.Distance = &d
	}
	for _, v := range vectors {
		vec, err := vectorOf(v.name, v.typ, v.bytes)
		if err != nil {
			return fields{}, entries, fmt.Errorf("object %s: %w", f.Additional.ID, err)
		}
		if f.vectors == nil {
			f.vectors = map[string][]float32{}
		}
		f.vectors[v.name] = vec
	}
	// A map key's last entry wins: each property is set from its last
	// (seen has a bit per slot).
	var seen uint64
	for i := len(entries) - 1; i >= 0; i-- {
		e := &entries[i]
		if seen&(1<<e.slot) != 0 {
			continue
		}
		seen |= 1 << e.slot
		var v value
		err := v.read(e.value)
		for _, c := range e.more {
			if err == nil {
				err = v.read(c)
			}
		}
		if err == nil {
			err = f.set(e.slot, &v)
		}
		if err != nil {
			return fields{}, entries, fmt.Errorf("object %s: property %s: %w", f.Additional.ID, slotNames[e.slot], err)
		}
	}
	return f, entries, nil
}

// slotNames names each slot's property (slotOf's inverse).
var slotNames = func() [slots]string {
	var out [slots]string
	for name, s := range slotOf {
		out[s] = name
	}
	return out
}()

// readVector reads one Vectors message.
func readVector(b []byte) (rawVector, error) {
	var (
		v   rawVector
		err error
	)
	r := reader{b: b}
	for r.next() {
		switch {
		case r.is(vecName, protowire.BytesType):
			if v.name, err = r.str(); err != nil {
				return rawVector{}, err
			}
		case r.is(vecBytes, protowire.BytesType):
			v.bytes = r.val
		case r.is(vecType, protowire.VarintType):
			v.typ = pb.Vectors_VectorType(int32(r.x))
		}
	}
	return v, r.err
}

// readEntries appends the entries of a Properties message whose keys are
// properties Engram reads.
func readEntries(b []byte, entries []entry) ([]entry, error) {
	r := reader{b: b}
	for r.next() {
		if !r.is(propertiesFields, protowire.BytesType) {
			continue
		}
		var (
			key []byte
			e   entry
			n   int
		)
		in := reader{b: r.val}
		for in.next() {
			switch {
			case in.is(entryKey, protowire.BytesType):
				key = in.val
			case in.is(entryValue, protowire.BytesType):
				if n == 0 {
					e.value = in.val
				} else {
					e.more = append(e.more, in.val)
				}
				n++
			}
		}
		if in.err != nil {
			return entries, in.err
		}
		if slot, ok := slotOf[string(key)]; ok {
			e.slot = slot
			entries = append(entries, e)
		}
	}
	return entries, r.err
}

// read reads one occurrence of a Value message into v: a field of the
// value's oneof replaces what v held, unless it is the list v holds
// already, which it continues (its texts are appended).
func (v *value) read(b []byte) error {
	r := reader{b: b}
	for r.next() {
		k := valueKind(r.num)
		switch {
		case r.is(protowire.Number(kindNumber), protowire.Fixed64Type):
			*v = value{kind: k, num: math.Float64frombits(r.x)}
		case r.is(protowire.Number(kindBool), protowire.VarintType):
			*v = value{kind: k, flag: r.x != 0}
		case r.is(protowire.Number(kindInt), protowire.VarintType):
			*v = value{kind: k, integer: int64(r.x)}
		case r.is(protowire.Number(kindNull), protowire.VarintType):
			*v = value{kind: k}
		case r.typ == protowire.BytesType && (k == kindText || k == kindDate || k == kindUUID || k == kindBlob):
			s, err := r.str()
			if err != nil {
				return err
			}
			*v = value{kind: k, str: s}
		case r.typ == protowire.BytesType && (k == kindObject || k == kindGeo || k == kindPhone):
			*v = value{kind: k} // never Engram's: set refuses it
		case r.is(protowire.Number(kindList), protowire.BytesType):
			if v.kind != kindList {
				*v = value{kind: kindList}
			}
			if err := v.readList(r.val); err != nil {
				return err
			}
		}
	}
	return r.err
}

// readList reads one occurrence of a ListValue message into v, as read
// does a Value: its kinds are fields 2 to 8, listText the texts.
func (v *value) readList(b []byte) error {
	r := reader{b: b}
	for r.next() {
		if r.typ != protowire.BytesType || r.num < 2 || r.num > listText {
			continue
		}
		if v.listKind != int(r.num) {
			v.listKind, v.list = int(r.num), nil
		}
		if r.num != listText {
			continue
		}
		in := reader{b: r.val}
		for in.next() {
			if in.is(textValuesValues, protowire.BytesType) {
				s, err := in.str()
				if err != nil {
					return err
				}
				v.list = append(v.list, s)
			}
		}
		if in.err != nil {
			return in.err
		}
	}
	return r.err
}

// searchAnswer is what a Search call made with wireCodec returns.
type searchAnswer struct{ objs []fields }

// wireCodec is gRPC's protobuf codec, except that a Search answer asked for
// as a *searchAnswer is read by decodeReply.
type wireCodec struct{}

// protoCodec is gRPC's own protobuf codec, which the grpc package registers.
var protoCodec = encoding.GetCodecV2("proto")

func (wireCodec) Name() string { return "proto" }

func (wireCodec) Marshal(v any) (grpcmem.BufferSlice, error) { return protoCodec.Marshal(v) }

func (wireCodec) Unmarshal(data grpcmem.BufferSlice, v any) error {
	a, ok := v.(*searchAnswer)
	if !ok {
		return protoCodec.Unmarshal(data, v)
	}
	buf := data.MaterializeToBuffer(grpcmem.DefaultBufferPool())
	defer buf.Free()
	objs, err := decodeReply(buf.ReadOnlyData())
	if err != nil {
		return fmt.Errorf("weaviate search answer: %w", err)
	}
	a.objs = objs
	return nil
}
