package embed

import (
	"errors"
	"testing"
)

// checkDecoded is the decoders' contract: an error wraps ErrBadResponse, a
// success has exactly n non-empty vectors.
func checkDecoded(t *testing.T, got [][]float32, err error, n int) {
	t.Helper()
	if err != nil {
		if !errors.Is(err, ErrBadResponse) {
			t.Fatalf("error %v does not wrap ErrBadResponse", err)
		}
		return
	}
	if len(got) != n {
		t.Fatalf("%d vectors for %d texts", len(got), n)
	}
	for i, v := range got {
		if len(v) == 0 {
			t.Fatalf("vector %d empty", i)
		}
	}
}

func FuzzDecodeOpenAI(f *testing.F) {
	f.Add([]byte(`{"data":[{"index":1,"embedding":[2]},{"index":0,"embedding":[1]}]}`), uint8(2))
	f.Add([]byte(`{"data":[{"embedding":[1,2]}]}`), uint8(1))
	f.Add([]byte(`{"data":[{"index":0,"embedding":[1]},{"index":0,"embedding":[1]}]}`), uint8(2))
	f.Add([]byte(`{"error":{"message":"x"}}`), uint8(1))
	f.Add([]byte(`{"data":[{"index":-5,"embedding":[]}]}`), uint8(1))
	f.Fuzz(func(t *testing.T, body []byte, n uint8) {
		got, err := decodeOpenAI(body, int(n), "")
		checkDecoded(t, got, err, int(n))
	})
}

func FuzzDecodeOllama(f *testing.F) {
	f.Add([]byte(`{"embeddings":[[1,2],[3,4]]}`), uint8(2))
	f.Add([]byte(`{"embeddings":[[]]}`), uint8(1))
	f.Add([]byte(`{"error":"model not found"}`), uint8(1))
	f.Fuzz(func(t *testing.T, body []byte, n uint8) {
		got, err := decodeOllama(body, int(n))
		checkDecoded(t, got, err, int(n))
	})
}
