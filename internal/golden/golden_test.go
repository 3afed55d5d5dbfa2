package golden

import (
	"os"
	"path/filepath"
	"testing"
)

// recorder is a testing.TB that records failures instead of stopping.
type recorder struct {
	testing.TB
	failed bool
}

func (r *recorder) Helper()               {}
func (r *recorder) Errorf(string, ...any) { r.failed = true }
func (r *recorder) Fatalf(string, ...any) { r.failed = true }

func TestCheck(t *testing.T) {
	path := filepath.Join(t.TempDir(), "a", "out.txt")
	r := &recorder{TB: t}
	Check(r, path, []byte("x"))
	if !r.failed {
		t.Fatal("a missing golden file passed")
	}
	*update = true
	r = &recorder{TB: t}
	Check(r, path, []byte("hello\n"))
	*update = false
	if b, err := os.ReadFile(path); r.failed || err != nil || string(b) != "hello\n" {
		t.Fatalf("-update did not write the file: %q, %v, failed %v", b, err, r.failed)
	}
	for _, c := range []struct {
		got  string
		fail bool
	}{{"hello\n", false}, {"hello", true}, {"", true}} {
		r = &recorder{TB: t}
		Check(r, path, []byte(c.got))
		if r.failed != c.fail {
			t.Errorf("Check(%q): failed %v, want %v", c.got, r.failed, c.fail)
		}
	}
}
