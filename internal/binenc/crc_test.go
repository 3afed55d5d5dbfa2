package binenc

import (
	"hash/crc32"
	"math/rand/v2"
	"testing"
)

func TestCRCCombine(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	data := make([]byte, 1<<16)
	for i := range data {
		data[i] = byte(rng.Uint32())
	}
	for _, tc := range []struct{ n, cut int }{
		{0, 0}, {1, 0}, {1, 1}, {2, 1}, {7, 3}, {64, 1}, {64, 63}, {1000, 500}, {4097, 4096}, {1 << 16, 1 << 15}, {1 << 16, 1},
	} {
		b := data[:tc.n]
		want := crc32.Checksum(b, castagnoli())
		a, c := crc32.Checksum(b[:tc.cut], castagnoli()), crc32.Checksum(b[tc.cut:], castagnoli())
		if got := crcCombine(a, c, uint64(tc.n-tc.cut)); got != want {
			t.Errorf("n %d cut %d: combined %08x, want %08x", tc.n, tc.cut, got, want)
		}
	}
}

// TestCRCCombineLong checks the shift by a length far beyond any test input:
// appending n zero bytes one way and the other.
func TestCRCCombineLong(t *testing.T) {
	zeros := make([]byte, 3<<20)
	for _, n := range []int{1 << 20, 3 << 20, 3<<20 - 17} {
		a := crc32.Checksum([]byte("engram"), castagnoli())
		want := crc32.Update(a, castagnoli(), zeros[:n])
		if got := crcCombine(a, crc32.Checksum(zeros[:n], castagnoli()), uint64(n)); got != want {
			t.Errorf("%d zeros: combined %08x, want %08x", n, got, want)
		}
	}
}

func TestCRCParallel(t *testing.T) {
	defer func(v, p int) { parallelCRCMin, parallelCRCPiece = v, p }(parallelCRCMin, parallelCRCPiece)
	rng := rand.New(rand.NewPCG(3, 4))
	data := make([]byte, 40<<20+13)
	for i := range data {
		data[i] = byte(rng.Uint32())
	}
	for _, tc := range []struct{ min, piece int }{{1, 1}, {1, 7}, {1, 16 << 20}, {16 << 20, 16 << 20}, {64 << 20, 16 << 20}} {
		parallelCRCMin, parallelCRCPiece = tc.min, tc.piece
		for _, n := range []int{0, 1, 2, 9, 16<<20 - 1, 16 << 20, 32<<20 + 5, len(data)} {
			if got, want := crcParallel(data[:n]), crc32.Checksum(data[:n], castagnoli()); got != want {
				t.Errorf("threshold %d, pieces %d, %d bytes: %08x, want %08x", tc.min, tc.piece, n, got, want)
			}
		}
	}
}

func FuzzCRCCombine(f *testing.F) {
	f.Add([]byte("hello, world"), uint(5))
	f.Add([]byte{}, uint(0))
	f.Fuzz(func(t *testing.T, b []byte, cut uint) {
		k := int(cut % uint(len(b)+1))
		want := crc32.Checksum(b, castagnoli())
		if got := crcCombine(crc32.Checksum(b[:k], castagnoli()), crc32.Checksum(b[k:], castagnoli()), uint64(len(b)-k)); got != want {
			t.Fatalf("cut %d of %d: %08x, want %08x", k, len(b), got, want)
		}
	})
}

func BenchmarkCRCParallel(b *testing.B) {
	data := make([]byte, 256<<20)
	for i := range data {
		data[i] = byte(i * 7)
	}
	for _, tc := range []struct {
		name string
		f    func([]byte) uint32
	}{
		{"serial", func(p []byte) uint32 { return crc32.Checksum(p, castagnoli()) }},
		{"parallel", crcParallel},
	} {
		b.Run(tc.name, func(b *testing.B) {
			b.SetBytes(int64(len(data)))
			for b.Loop() {
				tc.f(data)
			}
		})
	}
}
