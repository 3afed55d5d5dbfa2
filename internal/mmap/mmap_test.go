package mmap

import (
	"bytes"
	"errors"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"testing"
)

// tempFile writes data to a new file and opens it for reading; the file is
// closed when the test ends.
func tempFile(t *testing.T, data []byte) (string, *os.File) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "f")
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	return path, f
}

func TestMap(t *testing.T) {
	page := os.Getpagesize()
	data := make([]byte, 3*page+100)
	for i := range data {
		data[i] = byte(i * 13)
	}
	path, f := tempFile(t, data)
	cases := []struct {
		name                   string
		off                    int64
		length, capacity       int
		wantErr, unsupportedOK bool
	}{
		{"whole file", 0, len(data), len(data), false, true},
		{"from the second page, room to grow", int64(page), 2*page + 100, 10 * page, false, true},
		{"a part of a page", int64(page), 10, 10, false, true},
		{"nothing, only room", 0, 0, page, false, true},
		{"unaligned offset", 1, 10, 10, true, false},
		{"capacity below length", 0, 10, 5, true, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r, err := Map(f, c.off, c.length, c.capacity)
			if errors.Is(err, ErrUnsupported) && runtime.GOOS != "linux" && c.unsupportedOK {
				t.Skip(err)
			}
			if c.wantErr {
				if err == nil {
					r.Close()
					t.Fatal("no error")
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			b := r.Bytes()
			if !bytes.Equal(b, data[c.off:c.off+int64(c.length)]) {
				t.Fatal("bytes differ from the file")
			}
			if cap(b) != c.capacity {
				t.Fatalf("capacity %d, want %d", cap(b), c.capacity)
			}
			// Past the file's bytes the region is zero, and writable.
			grown := b[:cap(b)]
			for i := c.length; i < len(grown); i++ {
				if i >= c.length+page { // the rest of the last file page shows the file
					if grown[i] != 0 {
						t.Fatalf("byte %d past the file is %d", i, grown[i])
					}
				}
				grown[i] = 7
			}
			if len(b) > 0 {
				b[0] ^= 0xff
			}
			checkReadAt(t, r, data[c.off:c.off+int64(c.length)])
			if err := r.Close(); err != nil {
				t.Fatal(err)
			}
			if err := r.Close(); err != nil {
				t.Fatal("second close:", err)
			}
			if r.Bytes() != nil {
				t.Fatal("bytes after close")
			}
			if _, err := r.ReadAt(make([]byte, 1), 0); !errors.Is(err, ErrClosed) {
				t.Fatalf("ReadAt after close: %v, want ErrClosed", err)
			}
		})
	}
	if again, _ := os.ReadFile(path); !bytes.Equal(again, data) {
		t.Fatal("writes through a mapping reached the file")
	}
}

// checkReadAt reads the region's file bytes want back through ReadAt, at
// every offset of a few lengths: whole reads return them (not what was
// written through the mapping), reads past the end stop short with io.EOF,
// and a negative offset or one past the end is an error.
func checkReadAt(t *testing.T, r *Region, want []byte) {
	t.Helper()
	for _, n := range []int{1, 7, 100, len(want)} {
		for off := 0; off <= len(want); off += max(1, len(want)/37) {
			p := make([]byte, n)
			got, err := r.ReadAt(p, int64(off))
			end := min(off+n, len(want))
			if got != end-off || !bytes.Equal(p[:got], want[off:end]) {
				t.Fatalf("ReadAt(%d bytes, %d) = %d bytes, want %d of the file's", n, off, got, end-off)
			}
			if (off+n > len(want)) != (err == io.EOF) || err != nil && err != io.EOF {
				t.Fatalf("ReadAt(%d bytes, %d) of %d: error %v", n, off, len(want), err)
			}
		}
	}
	for _, off := range []int64{-1, int64(len(want)) + 1} {
		if _, err := r.ReadAt(make([]byte, 1), off); err == nil {
			t.Fatalf("ReadAt at %d of %d bytes: no error", off, len(want))
		}
	}
}

// unsupported reports whether this system does not map, after checking
// that call said so with ErrUnsupported.
func unsupported(t *testing.T, call string, err error) bool {
	t.Helper()
	if runtime.GOOS == "linux" {
		return false
	}
	if !errors.Is(err, ErrUnsupported) {
		t.Fatalf("%s = %v, want ErrUnsupported", call, err)
	}
	return true
}

// TestView maps a whole file read-only: the bytes are the file's, Close
// unmaps them (twice is a no-op), and an empty view is an error.
func TestView(t *testing.T) {
	data := bytes.Repeat([]byte("engram view "), 1000)
	_, f := tempFile(t, data)
	v, err := View(f, len(data))
	if unsupported(t, "View", err) {
		return
	}
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(v.Bytes(), data) {
		t.Fatal("the view differs from the file")
	}
	if err := v.Close(); err != nil {
		t.Fatal(err)
	}
	if v.Bytes() != nil || v.Close() != nil {
		t.Fatal("a closed view")
	}
	if _, err := View(f, 0); err == nil {
		t.Fatal("an empty view")
	}
}

// TestAnon: an anonymous region is empty with the capacity asked for,
// zeroed and writable to the end; it has no file to read; a region of
// nothing is an error.
func TestAnon(t *testing.T) {
	r, err := Anon(3*os.Getpagesize() + 5)
	if unsupported(t, "Anon", err) {
		return
	}
	if err != nil {
		t.Fatal(err)
	}
	b := r.Bytes()
	if len(b) != 0 || cap(b) != 3*os.Getpagesize()+5 {
		t.Fatalf("len %d cap %d", len(b), cap(b))
	}
	b = b[:cap(b)]
	for i := range b {
		if b[i] != 0 {
			t.Fatalf("byte %d is %d", i, b[i])
		}
		b[i] = byte(i)
	}
	if _, err := r.ReadAt(make([]byte, 1), 0); !errors.Is(err, ErrClosed) {
		t.Fatalf("ReadAt of an anonymous region: %v, want ErrClosed", err)
	}
	if err := r.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := Anon(0); err == nil {
		t.Fatal("an empty anonymous region")
	}
}

// TestMapperSharesDescriptor: a Mapper's regions hold one duplicate of the
// file's descriptor between them, closed with the last region; a region
// mapped after that takes a new one.
func TestMapperSharesDescriptor(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("maps on Linux only")
	}
	page := os.Getpagesize()
	data := make([]byte, 4*page)
	for i := range data {
		data[i] = byte(i / page)
	}
	_, f := tempFile(t, data)
	fds := func() int {
		es, err := os.ReadDir("/proc/self/fd")
		if err != nil {
			t.Fatal(err)
		}
		return len(es)
	}
	before := fds()
	m := Mapper(f)
	var regions []io.Closer
	for i := range 3 {
		b, c, err := m(int64(i*page), page, page)
		if err != nil {
			t.Fatal(err)
		}
		if b[0] != byte(i) {
			t.Fatalf("region %d starts with %d", i, b[0])
		}
		regions = append(regions, c)
	}
	if got := fds(); got != before+1 {
		t.Fatalf("%d descriptors open for three regions, want %d", got, before+1)
	}
	for i, c := range regions[:2] {
		if err := c.Close(); err != nil {
			t.Fatalf("close %d: %v", i, err)
		}
	}
	checkReadAt(t, regions[2].(*Region), data[2*page:3*page])
	if err := regions[2].Close(); err != nil {
		t.Fatal(err)
	}
	if got := fds(); got != before {
		t.Fatalf("%d descriptors open after closing every region, want %d", got, before)
	}
	b, c, err := m(int64(3*page), page, page)
	if err != nil {
		t.Fatal(err)
	}
	checkReadAt(t, c.(*Region), data[3*page:])
	if b[0] != 3 || fds() != before+1 {
		t.Fatalf("a region after the last closed: byte %d, %d descriptors", b[0], fds())
	}
	c.Close()
}
