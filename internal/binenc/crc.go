package binenc

// Checksumming a large section on several cores without changing the file:
// the CRC-32C of a concatenation follows from the CRCs of its parts and the
// length of the second (crcCombine), so a section held in memory (a mapped
// file) is cut into pieces, each piece checksummed on its own goroutine, and
// the pieces' CRCs folded together into the one the trailer holds.
//
// The arithmetic is that of polynomials over GF(2) modulo the Castagnoli
// polynomial, in the reflected bit order hash/crc32 uses: bit 31 of a word is
// the coefficient of x^0. Appending n zero bytes to a message multiplies its
// CRC register by x^(8n); the pre- and post-inversion of the standard CRC
// cancel in the sum, so crc(A‖B) = crc(A)·x^(8|B|) + crc(B).

import (
	"hash/crc32"
	"runtime"
	"sync"
)

// castagnoliReflected is the Castagnoli polynomial in reflected order.
const castagnoliReflected = 0x82f63b78

// gfMul returns a·b modulo the polynomial, both in reflected order.
func gfMul(a, b uint32) uint32 {
	var p uint32
	for m := uint32(1) << 31; m != 0; m >>= 1 {
		if a&m != 0 {
			p ^= b
		}
		// b ← b·x
		if b&1 != 0 {
			b = b>>1 ^ castagnoliReflected
		} else {
			b >>= 1
		}
	}
	return p
}

// x2pow[k] is x^(2^k) modulo the polynomial.
var x2pow = func() (t [64]uint32) {
	p := uint32(1) << 30 // x^1
	for k := range t {
		t[k] = p
		p = gfMul(p, p)
	}
	return t
}()

// xPow8 returns x^(8n) modulo the polynomial: the factor that appending n
// zero bytes multiplies a CRC register by.
func xPow8(n uint64) uint32 {
	p := uint32(1) << 31 // x^0
	for k := 3; n != 0; n, k = n>>1, k+1 {
		if n&1 != 0 {
			p = gfMul(x2pow[k%64], p)
		}
	}
	return p
}

// crcCombine returns the CRC-32C of A‖B from crcA = CRC(A), crcB = CRC(B)
// and lenB = |B|.
func crcCombine(crcA, crcB uint32, lenB uint64) uint32 {
	return gfMul(xPow8(lenB), crcA) ^ crcB
}

// parallelCRCMin is the least input that crcParallel splits (below it one
// goroutine checksums faster than several can be started), and
// parallelCRCPiece the least piece it cuts (so that combining costs nothing).
// Variables so tests can lower them.
var parallelCRCMin, parallelCRCPiece = 64 << 20, 16 << 20

// crcParallel returns the CRC-32C of b, computed in pieces on up to
// GOMAXPROCS goroutines when b is large.
func crcParallel(b []byte) uint32 {
	procs := runtime.GOMAXPROCS(0)
	if len(b) < parallelCRCMin || procs < 2 {
		return crc32.Update(0, castagnoli(), b)
	}
	// More pieces than goroutines, so that a goroutine slowed by other work
	// (the rest of the snapshot decoding beside it) leaves its share to the
	// others.
	pieces := max(1, min(4*procs, len(b)/parallelCRCPiece))
	size := (len(b) + pieces - 1) / pieces
	pieces = (len(b) + size - 1) / size // none empty
	crcs := make([]uint32, pieces)
	next := make(chan int, pieces)
	for i := range pieces {
		next <- i
	}
	close(next)
	var wg sync.WaitGroup
	for range min(procs, pieces) {
		wg.Go(func() {
			for i := range next {
				crcs[i] = crc32.Update(0, castagnoli(), b[i*size:min((i+1)*size, len(b))])
			}
		})
	}
	wg.Wait()
	crc := crcs[0]
	for i := 1; i < pieces; i++ {
		crc = crcCombine(crc, crcs[i], uint64(min((i+1)*size, len(b))-i*size))
	}
	return crc
}
