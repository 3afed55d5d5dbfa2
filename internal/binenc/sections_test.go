package binenc

import (
	"bytes"
	"errors"
	"os"
	"runtime"
	"slices"
	"sync"
	"testing"

	"github.com/engram-memory/engram/internal/mmap"
)

// sectioned writes sections: a string, a mappable array, then n small ones.
func sectioned(tb testing.TB, large []byte, n int) []byte {
	tb.Helper()
	var buf bytes.Buffer
	w := NewWriter(&buf)
	w.String("head")
	w.EndSection()
	w.Mappable(large)
	w.Uint32(7)
	w.EndSection()
	for i := range n {
		w.Uint32s([]uint32{uint32(i), uint32(i * i)})
		w.String(string(rune('a' + i%26)))
		w.EndSection()
	}
	w.Uint64(99) // an open section: FinishSections ends it
	if err := w.FinishSections(); err != nil {
		tb.Fatal(err)
	}
	if w.Len() != int64(buf.Len()) {
		tb.Fatalf("Len %d, wrote %d", w.Len(), buf.Len())
	}
	return buf.Bytes()
}

// readSectioned decodes what sectioned wrote, each small section on its own
// goroutine, and returns the first error. With view it decodes from data in
// place (Sections.SetView), as a mapped snapshot is.
func readSectioned(data []byte, file *os.File, n int, view ...bool) error {
	var src interface {
		ReadAt([]byte, int64) (int, error)
	} = bytes.NewReader(data)
	if file != nil {
		src = file
	}
	s, err := OpenSections(src, int64(len(data)))
	if err != nil {
		return err
	}
	if file != nil {
		s.SetMapper(mmap.Mapper(file))
	}
	if len(view) > 0 && view[0] {
		s.SetView(data)
	}
	if s.Len() != n+3 {
		return errors.New("section count")
	}
	head := s.Next()
	if head.String() != "head" {
		head.Corruptf("head")
	}
	if err := head.Verify(); err != nil {
		return err
	}
	arr := s.Next()
	b, c := arr.Mappable(0)
	if c != nil {
		defer c.Close()
	}
	if arr.Uint32() != 7 {
		arr.Corruptf("after the array")
	}
	if err := arr.Verify(); err != nil {
		return err
	}
	if !bytes.Equal(b, pattern(len(b), 9)) || (file != nil && runtime.GOOS == "linux" && c == nil) {
		return errors.New("array differs or was not mapped")
	}
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		r := s.Next()
		wg.Go(func() {
			got := r.Uint32s()
			if r.String() != string(rune('a'+i%26)) || !slices.Equal(got, []uint32{uint32(i), uint32(i * i)}) {
				r.Corruptf("section %d", i)
			}
			errs[i] = r.Verify()
		})
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return err
	}
	tail := s.Next()
	if tail.Uint64() != 99 {
		tail.Corruptf("tail")
	}
	if err := tail.Verify(); err != nil {
		return err
	}
	if err := s.Next().Verify(); !errors.Is(err, ErrCorrupt) {
		return errors.New("a section past the last")
	}
	return nil
}

// TestSections round-trips sections from memory and from a file (the array
// mapped at its absolute offset), and rejects a flipped byte anywhere, a cut
// anywhere, and extra bytes.
func TestSections(t *testing.T) {
	const n = 5
	good := sectioned(t, pattern(MapMin, 9), n)
	f := fileOf(t, good)
	if err := readSectioned(good, f, n); err != nil {
		t.Fatalf("from a file: %v", err)
	}
	if err := readSectioned(good, nil, n); err != nil {
		t.Fatalf("from memory: %v", err)
	}
	// From a view in place, every section checksummed in small pieces on
	// several goroutines (crcParallel) as well as in one.
	defer func(v, p int) { parallelCRCMin, parallelCRCPiece = v, p }(parallelCRCMin, parallelCRCPiece)
	views := []struct{ min, piece int }{{parallelCRCMin, parallelCRCPiece}, {1, 1000}}
	for _, v := range views {
		parallelCRCMin, parallelCRCPiece = v.min, v.piece
		if err := readSectioned(good, f, n, true); err != nil {
			t.Fatalf("from a view, pieces of %d: %v", v.piece, err)
		}
	}
	spans, err := Spans(good)
	if err != nil {
		t.Fatal(err)
	}
	// A byte flipped in every section (its start, middle and trailer), in
	// the table and in the footer.
	var at []int
	for _, sp := range spans {
		at = append(at, int(sp[0]), int(sp[0]+sp[1]/2), int(sp[0]+sp[1]-1))
	}
	last := spans[len(spans)-1]
	toc := int(last[0] + last[1])
	at = append(at, toc, toc+9, len(good)-footerSize-1, len(good)-footerSize, len(good)-1)
	for _, i := range at {
		bad := bytes.Clone(good)
		bad[i] ^= 0x20
		if err := readSectioned(bad, nil, n); !errors.Is(err, ErrCorrupt) {
			t.Errorf("byte %d flipped: %v, want ErrCorrupt", i, err)
		}
		for _, v := range views {
			parallelCRCMin, parallelCRCPiece = v.min, v.piece
			if err := readSectioned(bad, nil, n, true); !errors.Is(err, ErrCorrupt) {
				t.Errorf("byte %d flipped, from a view in pieces of %d: %v, want ErrCorrupt", i, v.piece, err)
			}
		}
	}
	// Cut at every length up to the mapped array, then at many points after.
	for cut := 0; cut < len(good); cut++ {
		if cut > 8192 && cut < len(good)-8192 && cut%997 != 0 {
			continue
		}
		if err := readSectioned(good[:cut], nil, n); !errors.Is(err, ErrCorrupt) {
			t.Fatalf("cut at %d: %v, want ErrCorrupt", cut, err)
		}
		if err := readSectioned(good[:cut], nil, n, true); !errors.Is(err, ErrCorrupt) {
			t.Fatalf("cut at %d, from a view: %v, want ErrCorrupt", cut, err)
		}
	}
	if err := readSectioned(append(bytes.Clone(good), 0), nil, n); !errors.Is(err, ErrCorrupt) {
		t.Fatalf("a byte appended: %v, want ErrCorrupt", err)
	}
	// A plain stream is no sectioned one.
	if _, err := OpenSections(bytes.NewReader(encodeAll(t)), int64(len(encodeAll(t)))); !errors.Is(err, ErrCorrupt) {
		t.Fatalf("plain stream: %v, want ErrCorrupt", err)
	}
}

// TestBytesReader reads a stream from memory as NewReader does from a reader.
func TestBytesReader(t *testing.T) {
	b := encodeAll(t)
	r := NewBytesReader(b)
	decodeAll(r)
	if err := r.Verify(); err != nil {
		t.Fatal(err)
	}
	for _, in := range [][]byte{nil, b[:3], b[:len(b)-1], append(bytes.Clone(b), 1)} {
		r := NewBytesReader(in)
		decodeAll(r)
		if err := r.Verify(); !errors.Is(err, ErrCorrupt) {
			t.Fatalf("%d bytes: %v, want ErrCorrupt", len(in), err)
		}
	}
}

// TestShared reads with the scratch-reusing readers.
func TestShared(t *testing.T) {
	var buf bytes.Buffer
	w := NewWriter(&buf)
	w.Uint32s([]uint32{1, 2, 3})
	w.Uint32s(nil)
	w.Bytes([]byte("abc"))
	w.Bytes(nil)
	w.Bytes(bytes.Repeat([]byte{7}, 70<<10))
	if err := w.Finish(); err != nil {
		t.Fatal(err)
	}
	r := NewBytesReader(buf.Bytes())
	scratch := make([]uint32, 0, 8)
	a := r.Uint32sTo(scratch)
	if !slices.Equal(a, []uint32{1, 2, 3}) || &a[0] != &scratch[:1][0] {
		t.Fatalf("Uint32sTo = %v, not in the scratch space", a)
	}
	if b := r.Uint32sTo(scratch); len(b) != 0 {
		t.Fatalf("empty Uint32sTo = %v", b)
	}
	var arena []byte
	x := r.BytesShared(&arena)
	if string(x) != "abc" || cap(x) != 3 {
		t.Fatalf("BytesShared = %q, capacity %d", x, cap(x))
	}
	if y := r.BytesShared(&arena); y != nil {
		t.Fatalf("empty BytesShared = %q", y)
	}
	if z := r.BytesShared(&arena); len(z) != 70<<10 || z[0] != 7 || string(x) != "abc" {
		t.Fatal("a large BytesShared")
	}
	if err := r.Verify(); err != nil {
		t.Fatal(err)
	}
}

// FuzzSections opens arbitrary input as sections: never a panic, and the
// sections it accepts tile the input before the table.
func FuzzSections(f *testing.F) {
	f.Add(sectioned(f, pattern(100, 1), 3))
	f.Add([]byte{})
	f.Add(make([]byte, 40))
	f.Fuzz(func(t *testing.T, in []byte) {
		s, err := OpenSections(bytes.NewReader(in), int64(len(in)))
		if err != nil {
			return
		}
		var end int64
		for _, sp := range s.spans {
			if sp[0] != end || sp[1] < TrailerSize {
				t.Fatalf("section %v after %d", sp, end)
			}
			end += sp[1]
		}
		if end > int64(len(in)) {
			t.Fatalf("sections end at %d of %d", end, len(in))
		}
		for s.Left() > 0 {
			r := s.Next()
			for r.Err() == nil && r.Remaining() > 0 {
				r.Strings()
			}
			_ = r.Verify()
		}
		if err := s.Done(); err != nil {
			t.Fatal(err)
		}
	})
}

// TestPayload: a section's payload taken whole, to be decoded later: mapped
// from the file (MapPayload, from the page that holds the section, which
// need not start on one) or read (Rest), then the section consumed
// (SkipRest) and verified; a view returns BytesView's bytes in place, a
// streamed Reader copies them.
func TestPayload(t *testing.T) {
	var buf bytes.Buffer
	w := NewWriter(&buf)
	w.String("head of 21 bytes")
	w.EndSection()
	want := [][]byte{pattern(5000, 3), pattern(70000, 9), {1, 2, 3}}
	for _, p := range want {
		w.Bytes(p)
		w.Uint32(uint32(len(p)))
		w.EndSection()
	}
	if err := w.FinishSections(); err != nil {
		t.Fatal(err)
	}
	data := buf.Bytes()
	f := fileOf(t, data)
	for _, mode := range []string{"streamed", "view", "mapped"} {
		t.Run(mode, func(t *testing.T) {
			s, err := OpenSections(f, int64(len(data)))
			if err != nil {
				t.Fatal(err)
			}
			if mode != "streamed" {
				s.SetView(data)
			}
			if mode == "mapped" {
				s.SetMapper(mmap.Mapper(f))
			}
			_ = s.Next().String()
			for i, p := range want {
				r := s.Next()
				payload, c, err := r.MapPayload()
				switch {
				case mode == "mapped" && err != nil && runtime.GOOS == "linux":
					t.Fatalf("section %d: %v", i, err)
				case err == nil:
					defer c.Close()
					if !r.SkipRest() {
						t.Fatal(r.Err())
					}
				default:
					payload = r.Rest()
				}
				if err := r.Verify(); err != nil {
					t.Fatalf("section %d: %v", i, err)
				}
				in := NewPayloadReader(payload)
				got := in.BytesView()
				if !bytes.Equal(got, p) || in.Uint32() != uint32(len(p)) || in.Remaining() != 0 || in.Unchecked() != nil {
					t.Fatalf("section %d: payload decodes as %d bytes, want %d", i, len(got), len(p))
				}
				if len(got) > 0 && &got[0] != &payload[8] {
					t.Fatalf("section %d: BytesView copied from a payload in memory", i)
				}
			}
		})
	}
	// A corrupt byte in a payload taken by SkipRest fails its Verify.
	bad := bytes.Clone(data)
	spans, err := Spans(data)
	if err != nil {
		t.Fatal(err)
	}
	bad[spans[2][0]+100] ^= 1
	s, err := OpenSections(bytes.NewReader(bad), int64(len(bad)))
	if err != nil {
		t.Fatal(err)
	}
	s.SetView(bad)
	s.Next()
	s.Next()
	r := s.Next()
	if !r.SkipRest() || !errors.Is(r.Verify(), ErrCorrupt) {
		t.Fatal("a changed byte passed Verify after SkipRest")
	}
	// Without a mapper there is nothing to map.
	if _, _, err := NewBytesReader(data[:spans[1][0]+spans[1][1]]).MapPayload(); err == nil {
		t.Fatal("MapPayload without a mapper")
	}
}
