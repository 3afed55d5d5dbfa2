package sdk_test

// The Python and TypeScript clients' own suites (pytest, node --test), run
// from go test so that the README's test command runs everything. Each suite
// starts its own engram serve from the binary built here. Without the tools
// (python with the SDK's test requirements; node >= 20 and npm ci in
// sdk/typescript) a suite is skipped on a developer's machine and fails
// when CI=true; .ci/run installs them.

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/engram-memory/engram/internal/skipnote"
)

// missing skips the test, or fails it under CI, for a tool that is not there.
func missing(t *testing.T, what, how string) {
	t.Helper()
	if os.Getenv("CI") == "true" {
		t.Fatalf("%s is missing (CI=true): %s", what, how)
	}
	skipnote.Skipf(t, "%s is missing: %s (CI=true makes this a failure)", what, how)
}

// runSuite runs a client's test suite and reports its output.
func runSuite(t *testing.T, dir string, env []string, name string, args ...string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Dir = dir
	cmd.Env = env
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err := cmd.Run()
	text := strings.TrimRight(out.String(), "\n")
	lines := strings.Split(text, "\n")
	if err != nil {
		t.Fatalf("%s %s in %s: %v\n%s", name, strings.Join(args, " "), dir, err, text)
	}
	// The runner's closing lines say how many tests ran.
	tail := lines[max(0, len(lines)-8):]
	t.Logf("%s %s:\n%s", name, strings.Join(args, " "), strings.Join(tail, "\n"))
}

func suiteEnv(t *testing.T, extra ...string) []string {
	return append(append(cleanEnv(), "ENGRAM_BIN="+engramBin(t)), extra...)
}

func TestPythonSDK(t *testing.T) {
	py := os.Getenv("ENGRAM_SDK_PYTHON")
	if py == "" {
		py = "python3"
	}
	how := "pip install -e 'sdk/python[test]' into a Python >= 3.10 (or set ENGRAM_SDK_PYTHON to one that has it)"
	if _, err := exec.LookPath(py); err != nil {
		missing(t, "python ("+py+")", how)
	}
	src, err := filepath.Abs("python/src")
	if err != nil {
		t.Fatal(err)
	}
	// The tests import the package from this repository's source
	// (PYTHONPATH), whatever version is installed; the interpreter brings the
	// dependencies.
	check := exec.Command(py, "-c", "import sys; assert sys.version_info >= (3, 10), sys.version; import httpx, h11, pytest, langchain_core")
	check.Env = append(cleanEnv(), "PYTHONPATH="+src)
	if out, err := check.CombinedOutput(); err != nil {
		missing(t, "the Python SDK's test requirements", how+": "+strings.TrimSpace(string(out)))
	}
	runSuite(t, "python", suiteEnv(t, "PYTHONPATH="+src, "PYTHONDONTWRITEBYTECODE=1"),
		py, "-m", "pytest", "-q", "-p", "no:cacheprovider", "tests")
}

func TestTypeScriptSDK(t *testing.T) {
	how := "install Node >= 20 and run npm ci in sdk/typescript"
	node, err := exec.LookPath("node")
	if err != nil {
		missing(t, "node", how)
	}
	out, err := exec.Command(node, "--version").Output()
	if err != nil {
		missing(t, "a working node", how)
	}
	m := regexp.MustCompile(`^v(\d+)\.`).FindStringSubmatch(strings.TrimSpace(string(out)))
	if m == nil {
		missing(t, "node >= 20", how+" (node --version says "+strings.TrimSpace(string(out))+")")
	}
	if major, _ := strconv.Atoi(m[1]); major < 20 {
		missing(t, "node >= 20", how+" (this is "+strings.TrimSpace(string(out))+")")
	}
	tsc := filepath.Join("typescript", "node_modules", ".bin", "tsc")
	if _, err := os.Stat(tsc); err != nil {
		missing(t, "sdk/typescript/node_modules", how)
	}
	env := suiteEnv(t)
	runSuite(t, "typescript", env, filepath.Join("node_modules", ".bin", "tsc"), "-p", "tsconfig.json")
	tests, err := filepath.Glob(filepath.Join("typescript", "test", "*.test.mjs"))
	if err != nil || len(tests) == 0 {
		t.Fatalf("no test files in typescript/test: %v", err)
	}
	args := []string{"--test"}
	for _, f := range tests {
		args = append(args, strings.TrimPrefix(f, "typescript"+string(filepath.Separator)))
	}
	runSuite(t, "typescript", env, node, args...)
}
