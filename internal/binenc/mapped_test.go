package binenc

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"testing"
	"unsafe"

	"github.com/engram-memory/engram/internal/mmap"
)

// mappableStream writes a small value, then each array with Mappable, then a
// closing value.
func mappableStream(t testing.TB, arrays ...[]byte) []byte {
	var buf bytes.Buffer
	w := NewWriter(&buf)
	w.String("head")
	for _, a := range arrays {
		w.Mappable(a)
	}
	w.Uint32(99)
	if err := w.Finish(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func pattern(n int, seed byte) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(i*7) ^ seed
	}
	return b
}

func TestMappable(t *testing.T) {
	small, large, larger := pattern(1000, 1), pattern(MapMin, 2), pattern(MapMin+12345, 3)
	data := mappableStream(t, small, nil, large, larger)
	path := filepath.Join(t.TempDir(), "s")
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, withFile := range []bool{false, true} {
		f, err := os.Open(path)
		if err != nil {
			t.Fatal(err)
		}
		r := NewReader(f, int64(len(data)))
		if withFile {
			r.SetMapper(mmap.Mapper(f))
		}
		if r.String() != "head" {
			t.Fatal("head")
		}
		var regions int
		for i, want := range [][]byte{small, nil, large, larger} {
			got, reg := r.Mappable(len(want) + 100)
			if !bytes.Equal(got, want) {
				t.Fatalf("file %v, array %d: bytes differ", withFile, i)
			}
			if reg != nil && cap(got) < len(want)+100 {
				t.Errorf("file %v, array %d: capacity %d, asked for %d", withFile, i, cap(got), len(want)+100)
			}
			if reg != nil {
				regions++
				// Copy-on-write: writing and appending never reach the file.
				got[0] ^= 0xff
				got = append(got, 1, 2, 3)
				if got[len(want)] != 1 {
					t.Fatal("append to a mapping")
				}
				if err := reg.Close(); err != nil {
					t.Fatal(err)
				}
			}
		}
		if r.Uint32() != 99 {
			t.Fatal("tail")
		}
		if err := r.Verify(); err != nil {
			t.Fatalf("file %v: %v", withFile, err)
		}
		f.Close()
		wantRegions := 0
		if withFile && runtime.GOOS == "linux" {
			wantRegions = 2 // the two arrays of at least MapMin bytes
		}
		if regions != wantRegions {
			t.Errorf("file %v: %d arrays mapped, want %d", withFile, regions, wantRegions)
		}
	}
	if again, _ := os.ReadFile(path); !bytes.Equal(again, data) {
		t.Fatal("writing to a mapping changed the file")
	}
}

// fileOf writes data to a new file of the test's and opens it for reading,
// closed when the test ends.
func fileOf(t testing.TB, data []byte) *os.File {
	t.Helper()
	path := filepath.Join(t.TempDir(), "data")
	if err := os.WriteFile(path, data, 0o600); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	return f
}

func TestMappableCorrupt(t *testing.T) {
	large := pattern(MapMin, 4)
	good := mappableStream(t, large)
	read := func(data []byte) error {
		f := fileOf(t, data)
		r := NewReader(f, int64(len(data)))
		r.SetMapper(mmap.Mapper(f))
		_ = r.String()
		if _, reg := r.Mappable(0); reg != nil {
			defer reg.Close()
		}
		r.Uint32()
		return r.Verify()
	}
	if err := read(good); err != nil {
		t.Fatal(err)
	}
	padAt := 8 + 4 + 8 // head string, then the array's length, then its padding length
	mapped := len(good) - 4 - 4 - MapMin
	cases := []struct {
		name string
		edit func([]byte) []byte
	}{
		{"padding holds data", func(b []byte) []byte { b[padAt+4] = 1; return b }},
		{"padding too long", func(b []byte) []byte { b[padAt+2] = 0xff; return b }},
		{"a mapped byte flipped", func(b []byte) []byte { b[mapped+10] ^= 1; return b }},
		{"cut inside the array", func(b []byte) []byte { return b[:mapped+100] }},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			err := read(c.edit(bytes.Clone(good)))
			if !errors.Is(err, ErrCorrupt) {
				t.Fatalf("got %v, want ErrCorrupt", err)
			}
		})
	}
}

// FuzzMappable reads arbitrary input as a file through a Mapper, as a
// snapshot is read: Mappable, interleaved with other reads, never panics and
// never returns more bytes than the input holds, mapped or not.
func FuzzMappable(f *testing.F) {
	f.Add(mappableStream(f, pattern(MapMin, 5)))
	f.Add(mappableStream(f, pattern(10, 6), pattern(MapMin+1, 7)))
	f.Add([]byte{})
	dir := f.TempDir()
	f.Fuzz(func(t *testing.T, in []byte) {
		file, err := os.CreateTemp(dir, "in")
		if err != nil {
			t.Fatal(err)
		}
		defer os.Remove(file.Name())
		defer file.Close()
		if _, err := file.Write(in); err != nil {
			t.Fatal(err)
		}
		if _, err := file.Seek(0, 0); err != nil {
			t.Fatal(err)
		}
		r := NewReader(file, int64(len(in)))
		r.SetMapper(mmap.Mapper(file))
		for i := 0; r.Err() == nil && r.Remaining() > 0; i++ {
			before := r.Remaining()
			if i%2 == 0 {
				_ = r.String()
				continue
			}
			b, c := r.Mappable(2 * MapMin)
			if int64(len(b)) > before {
				t.Fatalf("%d bytes from %d", len(b), before)
			}
			if c != nil {
				for j := range b { // every mapped byte is readable
					_ = b[j]
				}
				c.Close()
			}
		}
		_ = r.Verify()
	})
}

// Mappings hold the ranges kept (not those without a Closer), tell
// addresses inside them, bounds included and excluded as for a slice, and
// close each one once.
func TestMappings(t *testing.T) {
	a, b := make([]byte, 80), make([]byte, 16) // a's first 64 bytes kept
	closed := map[string]int{}
	var m Mappings
	m.Keep(unsafe.Pointer(&a[0]), 64, closerFunc(func() error { closed["a"]++; return nil }))
	m.Keep(unsafe.Pointer(&b[0]), len(b), nil) // read, not mapped
	for _, c := range []struct {
		name string
		p    unsafe.Pointer
		want bool
	}{
		{"first byte", unsafe.Pointer(&a[0]), true},
		{"last byte", unsafe.Pointer(&a[63]), true},
		{"past the end", unsafe.Pointer(&a[64]), false},
		{"not kept", unsafe.Pointer(&b[0]), false},
		{"nil", nil, false},
	} {
		if got := m.Has(c.p); got != c.want {
			t.Errorf("%s: Has %v, want %v", c.name, got, c.want)
		}
	}
	m.Close()
	if len(m) != 1 || closed["a"] != 1 {
		t.Fatalf("%d kept, closed %v: want one, closed once", len(m), closed)
	}
	// Release closes and forgets what nothing points into any more.
	c := make([]byte, 32)
	m.Keep(unsafe.Pointer(&c[0]), len(c), closerFunc(func() error { closed["c"]++; return nil }))
	m.Release(unsafe.Pointer(&c[5]), nil)
	if len(m) != 1 || !m.Has(unsafe.Pointer(&c[0])) || m.Has(unsafe.Pointer(&a[0])) || closed["a"] != 2 || closed["c"] != 0 {
		t.Fatalf("after releasing a: %d kept, closed %v", len(m), closed)
	}
	m.Release()
	if len(m) != 0 || closed["c"] != 1 {
		t.Fatalf("after releasing everything: %d kept, closed %v", len(m), closed)
	}
}

type closerFunc func() error

func (f closerFunc) Close() error { return f() }
