package vector

// The float32 matrix of a snapshot, checked block by block as rows are first
// used instead of all at once when it is loaded.
//
// The matrix is most of a snapshot (4·dim bytes a row, against 2·dim for
// both int8 copies) and a search reads few of its rows: the int8 screening
// decides, and only the rows near the cut are read in float32. Checksumming
// it whole at every open read 15 MB at 10k 384-d memories, a fifth of an
// in-process CLI call. So the writer records a CRC-32C of every checkBlock
// bytes of the matrix in the (checked) section that follows it, and the
// matrix's own section is mapped and never read at load: a row is checked
// the first time anything reads it or writes over it, by reading its block
// from the file (pread, as rescoring does: file.go) and comparing the sum.
// When the matrix has moved off its mapping (grown past its room, or
// reserved anew), every block still pending is checked before the mapping
// is let go (releaseMoved), reading the file as it still holds the bytes
// copied; a new snapshot checks them all before it writes any.
//
// A block that fails marks the index corrupt (Corrupt): what a search
// returned from it is then not to be used, and the owner rebuilds the index
// from its source, as it does for a snapshot that fails at load.

import (
	"errors"
	"fmt"
	"hash/crc32"
	"sync"
	"sync/atomic"
	"unsafe"
)

// checkBlock is the number of matrix bytes one checksum covers: four pages,
// about ten 384-d rows, so that checking the rows one search rescores reads
// little more than the rows.
const checkBlock = 16 << 10

// castagnoli is the CRC-32C table, made on first use (binenc's too).
func castagnoli() *crc32.Table { return crc32.MakeTable(crc32.Castagnoli) }

// ErrCorrupt is what Corrupt wraps: a block of the matrix did not match the
// checksum written with it.
var ErrCorrupt = errors.New("vector: float32 rows differ from their snapshot checksum")

// blockSums computes the CRC-32C of every checkBlock bytes of a stream of
// bytes fed to it in pieces of any size.
type blockSums struct {
	sums []uint32
	cur  uint32
	n    int // bytes of the current block so far
}

func (s *blockSums) write(p []byte) {
	for len(p) > 0 {
		k := min(len(p), checkBlock-s.n)
		s.cur = crc32.Update(s.cur, castagnoli(), p[:k])
		s.n += k
		p = p[k:]
		if s.n == checkBlock {
			s.sums = append(s.sums, s.cur)
			s.cur, s.n = 0, 0
		}
	}
}

// done returns the sums, the last block's if it is short.
func (s *blockSums) done() []uint32 {
	if s.n > 0 {
		s.sums = append(s.sums, s.cur)
		s.cur, s.n = 0, 0
	}
	return s.sums
}

// pending is what is left to check of the matrix a snapshot mapped.
type pending struct {
	sums []uint32 // CRC-32C of each checkBlock bytes
	size int64    // the matrix's bytes in the file
	// base is where data started when it was loaded: blocks not read from
	// the file are read from there (the bytes the file held), which holds
	// as long as data has not moved (settle runs before it does).
	base    *float32
	checked []atomic.Uint64 // bit b of word b/64: block b checked
	left    atomic.Int64    // blocks not checked yet
	bad     atomic.Int64    // the first block that failed, plus one (0: none)
	all     sync.Mutex      // serialises settle
}

func newPending(sums []uint32, size int64, base *float32) *pending {
	p := &pending{sums: sums, size: size, base: base, checked: make([]atomic.Uint64, (len(sums)+63)/64)}
	p.left.Store(int64(len(sums)))
	return p
}

// checkRows checks the blocks holding rows lo..hi-1 that are not checked
// yet. Safe for concurrent use (two readers may check one block twice).
func (ix *Index) checkRows(lo, hi int) {
	p := ix.check
	if p == nil || p.left.Load() == 0 || lo >= hi {
		return
	}
	rowBytes := int64(4 * ix.dim)
	from, to := int64(lo)*rowBytes, min(int64(hi)*rowBytes, p.size)
	if from >= to {
		return // rows past those the file holds
	}
	for b := from / checkBlock; b <= (to-1)/checkBlock; b++ {
		if p.checked[b/64].Load()&(1<<(b%64)) == 0 {
			ix.checkBlock(p, int(b))
		}
	}
}

// checkListed is checkRows for each of the listed rows.
func (ix *Index) checkListed(rows []int32) {
	if p := ix.check; p == nil || p.left.Load() == 0 {
		return
	}
	for _, r := range rows {
		ix.checkRows(int(r), int(r)+1)
	}
}

// checkBlock reads block b, from the file or else from data where it was
// loaded, and compares its checksum.
func (ix *Index) checkBlock(p *pending, b int) {
	off := int64(b) * checkBlock
	n := min(int64(checkBlock), p.size-off)
	buf := blockBufs.Get().(*[checkBlock]byte)
	defer blockBufs.Put(buf)
	got := buf[:n]
	ok := false
	if ix.file != nil {
		k, err := ix.file.ReadAt(got, off)
		ok = err == nil && int64(k) == n
	}
	if !ok {
		// The file cannot be read (its lease was broken and the mapping made
		// the process's own): the bytes are those data was loaded with.
		if p.base == nil || unsafe.SliceData(ix.data) != p.base || int64(cap(ix.data))*4 < off+n {
			p.fail(b)
			return
		}
		got = unsafe.Slice((*byte)(unsafe.Pointer(p.base)), cap(ix.data)*4)[off : off+n]
	}
	if crc32.Checksum(got, castagnoli()) != p.sums[b] {
		p.fail(b)
	}
	if old := p.checked[b/64].Or(1 << (b % 64)); old&(1<<(b%64)) == 0 {
		p.left.Add(-1)
	}
}

// blockBufs hold a block read for its check: on the heap, reused (on the
// stack, each search goroutine's first check grew a fresh stack for it).
var blockBufs = sync.Pool{New: func() any { return new([checkBlock]byte) }}

func (p *pending) fail(b int) { p.bad.CompareAndSwap(0, int64(b)+1) }

// settle checks every block not checked yet: before the mapping the matrix
// moved off is let go, or the matrix is written out whole.
func (ix *Index) settle() {
	p := ix.check
	if p == nil || p.left.Load() == 0 {
		return
	}
	p.all.Lock()
	defer p.all.Unlock()
	for b := range p.sums {
		if p.checked[b/64].Load()&(1<<(b%64)) == 0 {
			ix.checkBlock(p, b)
		}
	}
}

// Corrupt returns an error wrapping ErrCorrupt once a block of the float32
// matrix read from a snapshot has failed its checksum, and nil otherwise
// (blocks not read yet have not been checked: Settle checks them all).
// Search results obtained while it is non-nil may hold wrong cosines.
func (ix *Index) Corrupt() error {
	if p := ix.check; p != nil {
		if b := p.bad.Load(); b != 0 {
			return fmt.Errorf("%w: block %d (bytes %d-%d of the matrix)", ErrCorrupt, b-1, (b-1)*checkBlock, min(b*checkBlock, p.size)-1)
		}
	}
	return nil
}

// Settle checks every block of the snapshot's matrix not checked yet and
// returns Corrupt: for a full check (Mirror.Verify, snapshots, tests). Safe for concurrent
// use with readers.
func (ix *Index) Settle() error {
	ix.settle()
	return ix.Corrupt()
}
