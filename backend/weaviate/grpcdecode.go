package weaviate

import (
	"encoding/binary"
	"fmt"
	"math"

	pb "github.com/weaviate/weaviate/grpc/generated/protocol/v1"
)

// A gRPC search answer is read into the fields a GraphQL answer fills, so
// that both transports decode memories alike (fields.decode). The answer's
// bytes are read directly (grpcwire.go); the property values meet the
// fields here, through value, whatever read them.

// valueKind is the kind of a property value: its field number in
// Weaviate's Value message (base.proto), 0 when the value holds none.
type valueKind int

const (
	kindNone   valueKind = 0
	kindNumber valueKind = 1
	kindBool   valueKind = 3
	kindObject valueKind = 4
	kindList   valueKind = 5
	kindDate   valueKind = 6
	kindUUID   valueKind = 7
	kindInt    valueKind = 8
	kindGeo    valueKind = 9
	kindBlob   valueKind = 10
	kindPhone  valueKind = 11
	kindNull   valueKind = 12
	kindText   valueKind = 13
)

// kindNames name the kinds in errors.
var kindNames = [...]string{kindNone: "empty", kindNumber: "number", kindBool: "boolean", kindObject: "object",
	kindList: "list", kindDate: "date", kindUUID: "uuid", kindInt: "int", kindGeo: "geo coordinates",
	kindBlob: "blob", kindPhone: "phone number", kindNull: "null", kindText: "text"}

// String names the kind in errors.
func (k valueKind) String() string {
	if k >= 0 && int(k) < len(kindNames) && kindNames[k] != "" {
		return kindNames[k]
	}
	return fmt.Sprintf("kind %d", int(k))
}

// listText is the field number of a list of texts in Weaviate's ListValue;
// a list of any other kind (numbers, booleans, ...) is not Engram's.
const listText = 8

// value is one property value of an answer: its kind and what that kind
// carries. A list is a list of texts when listKind is listText, and empty
// (nil) when listKind is 0.
type value struct {
	kind     valueKind
	str      string // text, date, uuid, blob
	num      float64
	integer  int64
	flag     bool
	listKind int
	list     []string
}

// The properties a memory's fields are read from, each a slot.
const (
	slotID = iota
	slotName
	slotDescription
	slotText
	slotType
	slotScene
	slotSource
	slotMetadata
	slotCreated
	slotUpdated
	slotDemandAt
	slotHash
	slotTextKey
	slotModel
	slotEpisode
	slotSpeaker
	slotOccurred
	slotSupersedes
	slotSupersededBy
	slotSupersededAt
	slotContext
	slotDay
	slotUses
	slotDemand
	slotDim
	slotSeq
	slotScope
	slotTags
	slotFavorite
	slots
)

// decodeResult keeps a bit per slot in a uint64.
var _ [64 - slots]struct{}

// slotOf is each property's slot; a property not here is not read.
var slotOf = map[string]int{
	pID: slotID, pName: slotName, pDescription: slotDescription, pText: slotText, pType: slotType,
	pScene: slotScene, pSource: slotSource, pMetadata: slotMetadata, pCreated: slotCreated,
	pUpdated: slotUpdated, pDemandAt: slotDemandAt, pHash: slotHash, pTextKey: slotTextKey,
	pModel: slotModel, pEpisode: slotEpisode, pSpeaker: slotSpeaker, pOccurred: slotOccurred,
	pSupersedes: slotSupersedes, pSupersededBy: slotSupersededBy, pSupersededAt: slotSupersededAt,
	pContext: slotContext, pDay: slotDay, pUses: slotUses, pDemand: slotDemand, pDim: slotDim,
	pSeq: slotSeq, pScope: slotScope, pTags: slotTags, pFavorite: slotFavorite,
}

// set stores the value of the property in slot in f: a text or date in a
// string field, a number or int in a numeric one, a boolean in a flag, a
// list of texts (or an empty list) in a list. A null or empty value leaves
// the zero value; any other kind is an error naming it.
func (f *fields) set(slot int, v *value) error {
	if v.kind == kindNone || v.kind == kindNull {
		return nil
	}
	var (
		str  *string
		num  *float64
		list *[]string
		flag *bool
	)
	switch slot {
	case slotID:
		str = &f.ID
	case slotName:
		str = &f.Name
	case slotDescription:
		str = &f.Description
	case slotText:
		str = &f.Text
	case slotType:
		str = &f.Type
	case slotScene:
		str = &f.Scene
	case slotSource:
		str = &f.Source
	case slotMetadata:
		str = &f.Metadata
	case slotCreated:
		str = &f.Created
	case slotUpdated:
		str = &f.Updated
	case slotDemandAt:
		str = &f.DemandAt
	case slotHash:
		str = &f.Hash
	case slotTextKey:
		str = &f.TextKey
	case slotModel:
		str = &f.Model
	case slotEpisode:
		str = &f.Episode
	case slotSpeaker:
		str = &f.Speaker
	case slotOccurred:
		str = &f.Occurred
	case slotSupersedes:
		str = &f.Supersedes
	case slotSupersededBy:
		str = &f.SuperBy
	case slotSupersededAt:
		str = &f.SuperAt
	case slotContext:
		str = &f.Context
	case slotDay:
		str = &f.Day
	case slotUses:
		num = &f.Uses
	case slotDemand:
		num = &f.Demand
	case slotDim:
		num = &f.Dim
	case slotSeq:
		num = &f.Seq
	case slotScope:
		list = &f.Scope
	case slotTags:
		list = &f.Tags
	case slotFavorite:
		flag = &f.Favorite
	default:
		return nil
	}
	switch {
	case str != nil && (v.kind == kindText || v.kind == kindDate):
		*str = v.str
	case num != nil && v.kind == kindNumber:
		*num = v.num
	case num != nil && v.kind == kindInt:
		*num = float64(v.integer)
	case flag != nil && v.kind == kindBool:
		*flag = v.flag
	case list != nil && v.kind == kindList && v.listKind == 0:
		*list = nil
	case list != nil && v.kind == kindList && v.listKind == listText:
		*list = v.list
	case v.kind == kindList:
		return fmt.Errorf("unexpected list value (not of texts)")
	default:
		return fmt.Errorf("unexpected %s value", v.kind)
	}
	return nil
}

// vectorOf decodes a single float32 vector (little-endian bytes) of the
// named vector of this type.
func vectorOf(name string, t pb.Vectors_VectorType, b []byte) ([]float32, error) {
	if t != pb.Vectors_VECTOR_TYPE_UNSPECIFIED && t != pb.Vectors_VECTOR_TYPE_SINGLE_FP32 {
		return nil, fmt.Errorf("vector %q is of type %s, want a single float32 vector", name, t)
	}
	if len(b)%4 != 0 {
		return nil, fmt.Errorf("vector %q has %d bytes, not a whole number of float32s", name, len(b))
	}
	out := make([]float32, len(b)/4)
	for i := range out {
		out[i] = math.Float32frombits(binary.LittleEndian.Uint32(b[4*i:]))
	}
	return out, nil
}

// vectorBytes encodes a vector as gRPC carries it.
func vectorBytes(v []float32) []byte {
	b := make([]byte, 4*len(v))
	for i, x := range v {
		binary.LittleEndian.PutUint32(b[4*i:], math.Float32bits(x))
	}
	return b
}
