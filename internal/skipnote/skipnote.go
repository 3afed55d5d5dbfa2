// Package skipnote makes a skipped test suite visible without -v. go test
// ./... shows only "ok" for a package that passes, so a suite skipped for a
// missing tool (a Weaviate server, python, node) would pass unseen. A test
// that skips a suite calls Skipf; the package's TestMain calls Main, which
// writes one line a reason after the tests ("skipped: 12 tests in
// backend/weaviate because ..."): to stderr (shown by go test -v, by go test
// in a package's directory, and with a failure) and to the terminal,
// /dev/tty, when there is one (shown by go test ./... too).
package skipnote

import (
	"fmt"
	"io"
	"os"
	"runtime/debug"
	"sort"
	"strings"
	"sync"
	"testing"
)

var (
	mu      sync.Mutex
	reasons = map[string][]string{} // reason → the tests skipped for it
)

// Skipf skips t for a reason Main reports.
func Skipf(t testing.TB, format string, a ...any) {
	t.Helper()
	reason := fmt.Sprintf(format, a...)
	mu.Lock()
	reasons[reason] = append(reasons[reason], t.Name())
	mu.Unlock()
	t.Skip(reason)
}

// Main runs the tests and then reports the suites skipped:
// os.Exit(skipnote.Main(m)).
func Main(m *testing.M) int {
	code := m.Run()
	Done()
	return code
}

// Done reports the suites skipped, for a TestMain that runs the tests
// itself: to stderr, and to the terminal when there is one.
func Done() {
	Report(os.Stderr)
	if testing.Verbose() {
		return // -v shows stderr: once is enough
	}
	if tty, err := os.OpenFile("/dev/tty", os.O_WRONLY, 0); err == nil {
		Report(tty)
		tty.Close()
	}
}

// Report writes one line a reason for the tests skipped so far.
func Report(w io.Writer) {
	mu.Lock()
	defer mu.Unlock()
	keys := make([]string, 0, len(reasons))
	for r := range reasons {
		keys = append(keys, r)
	}
	sort.Strings(keys)
	pkg := packagePath()
	for _, r := range keys {
		tests := reasons[r]
		what := tests[0]
		if len(tests) > 1 {
			what = fmt.Sprintf("%d tests", len(tests))
		}
		fmt.Fprintf(w, "skipped: %s in %s because %s\n", what, pkg, r)
	}
}

// packagePath is the test binary's package, relative to the module.
func packagePath() string {
	info, ok := debug.ReadBuildInfo()
	if !ok {
		return "this package"
	}
	p := strings.TrimSuffix(info.Path, ".test")
	if rest, ok := strings.CutPrefix(p, info.Main.Path+"/"); ok {
		return rest
	}
	if p == info.Main.Path {
		return "."
	}
	return p
}
