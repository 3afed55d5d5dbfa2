package weaviate

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/engram-memory/engram/memory"
)

// TestIngest measures ingest through gRPC batches with pre-computed vectors;
// it is not part of the default run. For example:
//
//	ENGRAM_WEAVIATE_INGEST=100000 go test -run TestIngest -v -timeout 1h ./backend/weaviate
//
// Memories of 30 words from a 5,000-word vocabulary, each with a 384-value
// vector, are put 1,000 per Put call (the store sends them in batches of
// Config.BatchSize); the rate is over the whole run, the last 10% reported
// apart so that a rate that falls with the class's size shows.
func TestIngest(t *testing.T) {
	n, _ := strconv.Atoi(os.Getenv("ENGRAM_WEAVIATE_INGEST"))
	if n <= 0 {
		t.Skip("set ENGRAM_WEAVIATE_INGEST=100000 to measure")
	}
	const dim, perPut = 384, 1000
	s := openTest(t, func(c *Config) { c.Timeout = time.Minute })
	t.Cleanup(func() { s.Drop(ctxT(t)) })
	rng := rand.New(rand.NewPCG(1, 2))
	words := make([]string, 5000)
	for i := range words {
		words[i] = fmt.Sprintf("w%x", rng.Uint64()%1e9)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Hour)
	defer cancel()
	start := time.Now()
	var tail time.Time
	for done := 0; done < n; done += perPut {
		if tail.IsZero() && done >= n*9/10 {
			tail = time.Now()
		}
		mems := make([]*memory.Memory, min(perPut, n-done))
		for i := range mems {
			var b strings.Builder
			for range 30 {
				b.WriteString(words[rng.IntN(len(words))] + " ")
			}
			v := make([]float32, dim)
			for j := range v {
				v[j] = rng.Float32()*2 - 1
			}
			mems[i] = mem("m"+strconv.Itoa(done+i), b.String(), func(m *memory.Memory) {
				m.Embedding = &memory.Embedding{Model: "bench", Dim: dim, Vector: v}
			})
		}
		if err := s.Put(ctx, mems); err != nil {
			t.Fatalf("put %d..: %v", done, err)
		}
	}
	total := time.Since(start)
	t.Logf("%d memories (%d-d vectors) in %s: %.0f/s; last 10%%: %.0f/s (batches of %d over gRPC)",
		n, dim, total.Round(time.Millisecond), float64(n)/total.Seconds(),
		float64(n-n*9/10)/time.Since(tail).Seconds(), s.cfg.BatchSize)
}
