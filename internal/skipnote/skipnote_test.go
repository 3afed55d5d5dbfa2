package skipnote

import (
	"bytes"
	"os"
	"testing"
)

// TestReport: the tests skipped are reported one line a reason, naming the
// package and the test (or how many), so that a skipped suite is visible
// without -v.
func TestReport(t *testing.T) {
	for _, name := range []string{"a", "b"} {
		t.Run(name, func(t *testing.T) { Skipf(t, "python3 is missing: %s", "install it") })
	}
	t.Run("alone", func(t *testing.T) { Skipf(t, "node is missing") })
	var b bytes.Buffer
	Report(&b)
	mu.Lock()
	clear(reasons) // reported here: not again by Main
	mu.Unlock()
	want := "skipped: TestReport/alone in internal/skipnote because node is missing\n" +
		"skipped: 2 tests in internal/skipnote because python3 is missing: install it\n"
	if b.String() != want {
		t.Fatalf("report:\n%s\nwant:\n%s", b.String(), want)
	}
}

func TestMain(m *testing.M) { os.Exit(Main(m)) }
