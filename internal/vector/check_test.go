package vector

import (
	"bytes"
	"errors"
	"hash/crc32"
	"math/rand"
	"runtime"
	"slices"
	"sync"
	"testing"

	"github.com/engram-memory/engram/internal/binenc"
)

// spoilRow flips a byte of row r's float32 values in a snapshot written by
// snapshotBytes: the rows start at the first 64 KiB boundary of the first
// section, after the array's length fields.
func spoilRow(tb testing.TB, snap []byte, r, dim int) []byte {
	tb.Helper()
	spans, err := binenc.Spans(snap)
	if err != nil {
		tb.Fatal(err)
	}
	sp := spans[0]
	start := (sp[0] + 12 + binenc.MapAlign - 1) / binenc.MapAlign * binenc.MapAlign
	bad := bytes.Clone(snap)
	bad[start+int64(r*dim*4)+5] ^= 0x20
	return bad
}

// TestRowsCheckedWhenRead loads a mapped snapshot with one float32 row
// spoilt: the load succeeds, reading rows of other blocks finds nothing,
// and reading the spoilt row, writing over it, growing the matrix off its
// mapping, Settle or writing a new snapshot each find it. A sound snapshot
// is never reported, whatever is read. Read into memory instead of mapped,
// the same snapshot is refused at load.
func TestRowsCheckedWhenRead(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("matrices are mapped (and checked lazily) on Linux only")
	}
	const n, dim = 3000, 128 // 1.5 MB of rows: mapped; 96 blocks of 32 rows
	r := rand.New(rand.NewSource(4))
	orig, _ := fixture(t, r, n, dim, 0)
	snap := snapshotBytes(t, orig)
	const bad = 1234 // in block 38 (rows 1216-1247)
	spoilt := spoilRow(t, snap, bad, dim)
	far := []int{0, 31, 1215, 1248, n - 1} // rows of other blocks

	if _, err := readBytes(spoilt); !errors.Is(err, binenc.ErrCorrupt) {
		t.Fatalf("read into memory: %v, want ErrCorrupt at load", err)
	}
	cases := []struct {
		name string
		use  func(t *testing.T, ix *Index)
	}{
		{"the row read", func(t *testing.T, ix *Index) { ix.Vector(ix.rowDoc[bad]) }},
		{"the rows scanned", func(t *testing.T, ix *Index) {
			defer func(old int) { quantMinFloats = old }(quantMinFloats)
			quantMinFloats = 1 << 30 // the float32 scan, every row
			ix.Search(randVec(r, dim), nil, 5)
		}},
		{"the row rescored", func(t *testing.T, ix *Index) { ix.Rescore(randVec(r, dim), []uint32{ix.rowDoc[bad]}, 1) }},
		{"the row written over", func(t *testing.T, ix *Index) {
			if err := ix.Set(ix.rowDoc[bad], randVec(r, dim)); err != nil {
				t.Fatal(err)
			}
		}},
		{"the row moved into a hole", func(t *testing.T, ix *Index) {
			for _, d := range slices.Clone(ix.rowDoc[bad+1:]) {
				ix.Remove(d) // the last row moves into each hole until the spoilt one is last
			}
			ix.Remove(ix.rowDoc[0])
		}},
		{"the matrix grown off its mapping", func(t *testing.T, ix *Index) {
			for i := range 2*n + 2000 {
				if err := ix.Set(uint32(10*n+i), randVec(r, dim)); err != nil {
					t.Fatal(err)
				}
			}
		}},
		{"Settle", func(t *testing.T, ix *Index) { ix.Settle() }},
		{"a new snapshot", func(t *testing.T, ix *Index) {
			w := binenc.NewWriter(&bytes.Buffer{})
			ix.WriteSnapshot(w)
			if got, want := w.Err(), ix.Corrupt(); (got != nil) != (want != nil) {
				t.Fatalf("writing a snapshot: %v, with the rows found %v", got, want)
			}
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			for _, in := range []struct {
				snap  []byte
				wantC bool
			}{{snap, false}, {spoilt, true}} {
				ix, err := readFile(t, in.snap)
				if err != nil {
					t.Fatalf("load: %v", err)
				}
				if ix.check == nil {
					t.Fatal("the rows are not checked lazily")
				}
				for _, row := range far {
					ix.Vector(ix.rowDoc[row])
					ix.Rescore(randVec(r, dim), []uint32{ix.rowDoc[row]}, 1)
				}
				ix.Search(randVec(r, dim), nil, 10) // screened: a few rows read
				if err := ix.Corrupt(); err != nil && in.wantC && !slices.Contains(readRows(ix), bad) {
					t.Fatalf("reported before the spoilt row was read: %v", err)
				}
				c.use(t, ix)
				if err := ix.Corrupt(); errors.Is(err, ErrCorrupt) != in.wantC {
					t.Fatalf("spoilt %t: Corrupt() = %v", in.wantC, err)
				}
			}
		})
	}
}

// readRows lists the rows whose blocks have been checked.
func readRows(ix *Index) []int {
	var rows []int
	for r := range ix.fileRows {
		b := r * 4 * ix.dim / checkBlock
		if ix.check.checked[b/64].Load()&(1<<(b%64)) != 0 {
			rows = append(rows, r)
		}
	}
	return rows
}

// TestBlockSums checks the checksums of a stream fed in pieces of any size
// against those of its blocks computed whole.
func TestBlockSums(t *testing.T) {
	r := rand.New(rand.NewSource(8))
	for _, size := range []int{0, 1, checkBlock - 1, checkBlock, checkBlock + 1, 5*checkBlock + 77} {
		data := make([]byte, size)
		r.Read(data)
		var want []uint32
		for off := 0; off < size; off += checkBlock {
			want = append(want, crc32c(data[off:min(off+checkBlock, size)]))
		}
		var s blockSums
		for rest := data; len(rest) > 0; {
			k := min(len(rest), 1+r.Intn(3*checkBlock))
			s.write(rest[:k])
			rest = rest[k:]
		}
		if got := s.done(); !slices.Equal(got, want) {
			t.Fatalf("%d bytes: sums %x, want %x", size, got, want)
		}
	}
}

func crc32c(b []byte) uint32 { return crc32.Checksum(b, castagnoli()) }

// TestRowsCheckedConcurrently reads the rows of a lazily checked snapshot
// from several goroutines at once (for -race), each block checked by
// whichever reader comes first: a sound snapshot is never reported, and a
// spoilt row is found once every row has been read.
func TestRowsCheckedConcurrently(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("matrices are mapped (and checked lazily) on Linux only")
	}
	const n, dim = 3000, 128
	orig, _ := fixture(t, rand.New(rand.NewSource(5)), n, dim, 0)
	snap := snapshotBytes(t, orig)
	for _, in := range []struct {
		snap  []byte
		wantC bool
	}{{snap, false}, {spoilRow(t, snap, 2999, dim), true}} {
		for round := range 5 {
			ix, err := readFile(t, in.snap)
			if err != nil {
				t.Fatal(err)
			}
			var wg sync.WaitGroup
			for g := range 4 {
				wg.Go(func() {
					r := rand.New(rand.NewSource(int64(10*round + g)))
					for i := range n {
						row := (i*7 + g*911) % n // every row, in an order of its own
						ix.Vector(ix.rowDoc[row])
						if i%200 == 0 {
							ix.Search(randVec(r, dim), nil, 10)
						}
					}
				})
			}
			wg.Wait()
			if err := ix.Corrupt(); errors.Is(err, ErrCorrupt) != in.wantC {
				t.Fatalf("spoilt %t, round %d: Corrupt() = %v", in.wantC, round, err)
			}
			if left := ix.check.left.Load(); left != 0 {
				t.Fatalf("%d blocks left unchecked after every row was read", left)
			}
		}
	}
}
