package weaviate

import (
	"context"
	"net/http"
	"net/url"
	"reflect"
	"testing"

	"github.com/engram-memory/engram/backend"
	"github.com/engram-memory/engram/memory"
)

// TestVectorIndexConfig: the index and quantizer of the store's config
// reach the server as the named vector's index type and configuration, and
// the vector leg finds the nearest memory through each.
func TestVectorIndexConfig(t *testing.T) {
	cases := []struct {
		index, quantizer string
		want             map[string]any // the vectorIndexConfig fields the server reports
	}{
		{IndexHNSW, "", map[string]any{"bq": false, "rq": false}},
		{IndexHNSW, QuantizerNone, map[string]any{"skipDefaultQuantization": true, "bq": false, "rq": false}},
		{IndexHNSW, QuantizerBQ, map[string]any{"bq": true, "rq": false}},
		{IndexHNSW, QuantizerRQ8, map[string]any{"rq": true, "rqBits": 8.0, "bq": false}},
		{IndexHNSW, QuantizerRQ1, map[string]any{"rq": true, "rqBits": 1.0, "bq": false}},
		{IndexFlat, QuantizerNone, map[string]any{"bq": false, "rq": false}},
	}
	for _, c := range cases {
		t.Run(c.index+"/"+c.quantizer, func(t *testing.T) {
			s := openTest(t, func(cfg *Config) { cfg.VectorIndex, cfg.Quantizer = c.index, c.quantizer })
			t.Cleanup(func() { s.Drop(context.Background()) })
			const dim = 8
			var mems []*memory.Memory
			for i := range 20 {
				v := make([]float32, dim)
				v[i%dim], v[(i+1)%dim] = 1, float32(i)/20
				mems = append(mems, mem("v"+string(rune('a'+i)), "text", func(m *memory.Memory) {
					m.Embedding = &memory.Embedding{Model: "m", Dim: dim, Vector: v}
				}))
			}
			put(t, s, mems...)
			var class struct {
				VectorConfig map[string]struct {
					VectorIndexType   string         `json:"vectorIndexType"`
					VectorIndexConfig map[string]any `json:"vectorIndexConfig"`
				} `json:"vectorConfig"`
			}
			ctx := context.Background()
			if err := s.c.do(ctx, http.MethodGet, "/v1/schema/"+url.PathEscape(s.cfg.Class), nil, nil, &class); err != nil {
				t.Fatal(err)
			}
			vc, ok := class.VectorConfig[VectorName("m", dim)]
			if !ok {
				t.Fatalf("no vector %s in %v", VectorName("m", dim), class.VectorConfig)
			}
			if vc.VectorIndexType != c.index {
				t.Errorf("index type %q, want %q", vc.VectorIndexType, c.index)
			}
			got := map[string]any{}
			for k := range c.want {
				switch k {
				case "bq", "rq":
					sub, _ := vc.VectorIndexConfig[k].(map[string]any)
					got[k] = sub["enabled"]
				case "rqBits":
					sub, _ := vc.VectorIndexConfig["rq"].(map[string]any)
					got[k] = sub["bits"]
				default:
					got[k] = vc.VectorIndexConfig[k]
				}
			}
			if !reflect.DeepEqual(got, c.want) {
				t.Errorf("vectorIndexConfig %v, want %v (all of it: %v)", got, c.want, vc.VectorIndexConfig)
			}
			q := make([]float32, dim)
			q[3], q[4] = 1, 0.15 // nearest: the memory with 1 at 3 and 0.15 at 4, "vd"
			res, err := (&Backend{s: s}).Legs(ctx, backend.LegQuery{K: 3, Vector: q, Model: "m"})
			if err != nil {
				t.Fatal(err)
			}
			if len(res.Vector) == 0 || res.Vector[0].Memory.ID != "vd" {
				t.Fatalf("vector leg: %v, want vd first", res.Vector)
			}
		})
	}
}
