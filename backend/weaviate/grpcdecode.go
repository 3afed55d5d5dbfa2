package weaviate

import (
	"encoding/binary"
	"encoding/json"
	"fmt"
	"math"
	"strconv"

	pb "github.com/weaviate/weaviate/grpc/generated/protocol/v1"
)

// fieldsOf reads one gRPC search result into the fields a GraphQL answer
// fills, so that both transports decode memories alike (fields.decode). A
// property of a kind Engram never writes to it is an error naming it.
func fieldsOf(r *pb.SearchResult) (fields, error) {
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
		vec, err := vectorOf(v)
		if err != nil {
			return fields{}, fmt.Errorf("object %s: %w", f.Additional.ID, err)
		}
		if f.vectors == nil {
			f.vectors = map[string][]float32{}
		}
		f.vectors[v.GetName()] = vec
	}
	for name, v := range r.GetProperties().GetNonRefProps().GetFields() {
		if err := f.set(name, v); err != nil {
			return fields{}, fmt.Errorf("object %s: property %s: %w", f.Additional.ID, name, err)
		}
	}
	return f, nil
}

// vectorOf decodes a single float32 vector (little-endian bytes).
func vectorOf(v *pb.Vectors) ([]float32, error) {
	if t := v.GetType(); t != pb.Vectors_VECTOR_TYPE_UNSPECIFIED && t != pb.Vectors_VECTOR_TYPE_SINGLE_FP32 {
		return nil, fmt.Errorf("vector %q is of type %s, want a single float32 vector", v.GetName(), t)
	}
	b := v.GetVectorBytes()
	if len(b)%4 != 0 {
		return nil, fmt.Errorf("vector %q has %d bytes, not a whole number of float32s", v.GetName(), len(b))
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

// set stores one property value in f; properties Engram does not read are
// ignored, null values leave the zero value.
func (f *fields) set(name string, v *pb.Value) error {
	if _, null := v.GetKind().(*pb.Value_NullValue); null || v.GetKind() == nil {
		return nil
	}
	var (
		str  *string
		num  *float64
		list *[]string
		flag *bool
	)
	switch name {
	case pID:
		str = &f.ID
	case pName:
		str = &f.Name
	case pDescription:
		str = &f.Description
	case pText:
		str = &f.Text
	case pType:
		str = &f.Type
	case pScene:
		str = &f.Scene
	case pSource:
		str = &f.Source
	case pMetadata:
		str = &f.Metadata
	case pCreated:
		str = &f.Created
	case pUpdated:
		str = &f.Updated
	case pDemandAt:
		str = &f.DemandAt
	case pHash:
		str = &f.Hash
	case pTextKey:
		str = &f.TextKey
	case pModel:
		str = &f.Model
	case pEpisode:
		str = &f.Episode
	case pSpeaker:
		str = &f.Speaker
	case pOccurred:
		str = &f.Occurred
	case pSupersedes:
		str = &f.Supersedes
	case pSupersededBy:
		str = &f.SuperBy
	case pSupersededAt:
		str = &f.SuperAt
	case pContext:
		str = &f.Context
	case pDay:
		str = &f.Day
	case pUses:
		num = &f.Uses
	case pDemand:
		num = &f.Demand
	case pDim:
		num = &f.Dim
	case pSeq:
		num = &f.Seq
	case pScope:
		list = &f.Scope
	case pTags:
		list = &f.Tags
	case pFavorite:
		flag = &f.Favorite
	default:
		return nil
	}
	switch k := v.GetKind().(type) {
	case *pb.Value_TextValue:
		if str != nil {
			*str = k.TextValue
			return nil
		}
	case *pb.Value_DateValue:
		if str != nil {
			*str = k.DateValue
			return nil
		}
	case *pb.Value_NumberValue:
		if num != nil {
			*num = k.NumberValue
			return nil
		}
	case *pb.Value_IntValue:
		if num != nil {
			*num = float64(k.IntValue)
			return nil
		}
	case *pb.Value_BoolValue:
		if flag != nil {
			*flag = k.BoolValue
			return nil
		}
	case *pb.Value_ListValue:
		if list != nil {
			switch l := k.ListValue.GetKind().(type) {
			case nil:
				*list = nil
				return nil
			case *pb.ListValue_TextValues:
				*list = l.TextValues.GetValues()
				return nil
			}
		}
	}
	return fmt.Errorf("unexpected value %T", v.GetKind())
}
