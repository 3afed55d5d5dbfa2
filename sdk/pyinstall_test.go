package sdk_test

// The Python package as a user installs it: a fresh virtual environment, then
// `pip install FOLDER` of a clean copy of sdk/python (pip builds it with the
// build backend pyproject.toml names, fetched from the package registry like
// its dependencies), and `pip wheel` of another clean copy installed into
// another fresh environment. From each, the README's quick start runs
// against a real engram serve on 127.0.0.1, from a folder outside the
// checkout so that only the installed package can be imported. Without
// python3 >= 3.10 and its venv module this skips, and fails when CI=true.

import (
	"archive/zip"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"testing"
)

func TestPythonPackageInstalls(t *testing.T) {
	how := "install python3 >= 3.10 with its venv module (Debian: python3-venv), and reach the package registry"
	py, err := exec.LookPath("python3")
	if err != nil {
		missing(t, "python3", how)
	}
	check := exec.Command(py, "-c", "import sys, venv, ensurepip; assert sys.version_info >= (3, 10), sys.version")
	check.Env = pythonEnv()
	if out, err := check.CombinedOutput(); err != nil {
		missing(t, "python3 >= 3.10 with venv and ensurepip", how+": "+strings.TrimSpace(string(out)))
	}
	readme, err := os.ReadFile("python/README.md")
	if err != nil {
		t.Fatal(err)
	}
	example := pythonQuickStart(t, string(readme))

	v := loadVectors(t)
	s := startServer(t, v)
	env := pythonEnv()
	exampleEnv := append(pythonEnv(), "ENGRAM_URL="+s.URL, "ENGRAM_API_KEY="+v.Keys["c"].Key)

	// checkInstalled runs the quick start with the environment's python
	// and checks that it imported the package from the environment.
	checkInstalled := func(t *testing.T, venv string) {
		t.Helper()
		python := venvPython(venv)
		dir := t.TempDir()
		where := run(t, dir, env, python, "-c", "import engram_memory; print(engram_memory.__file__)")
		if !strings.HasPrefix(strings.TrimSpace(where), venv+string(filepath.Separator)) {
			t.Errorf("engram_memory was imported from %s, not from the environment %s", strings.TrimSpace(where), venv)
		}
		if err := os.WriteFile(filepath.Join(dir, "example.py"), []byte(example), 0o644); err != nil {
			t.Fatal(err)
		}
		got := run(t, dir, exampleEnv, python, "example.py")
		for _, want := range []string{"The deploy key lives in the vault", "not_found"} {
			if !strings.Contains(got, want) {
				t.Errorf("the README's quick start printed no %q:\n%s", want, got)
			}
		}
	}

	// The two installs wait mostly on the registry: side by side.
	t.Run("folder", func(t *testing.T) {
		t.Parallel()
		pkg := cleanCopy(t, "python", pythonFiles)
		venv := newVenv(t, py, env)
		run(t, t.TempDir(), env, venvPython(venv), "-m", "pip", "install", pkg)
		checkInstalled(t, venv)
	})

	t.Run("wheel", func(t *testing.T) {
		t.Parallel()
		pkg := cleanCopy(t, "python", pythonFiles)
		build := newVenv(t, py, env)
		wheels := t.TempDir()
		run(t, t.TempDir(), env, venvPython(build), "-m", "pip", "wheel", "--no-deps", "--wheel-dir", wheels, pkg)
		whl, _ := filepath.Glob(filepath.Join(wheels, "engram_memory-*.whl"))
		if len(whl) != 1 {
			t.Fatalf("pip wheel made %v in %s, want one engram_memory-*.whl", whl, wheels)
		}
		zr, err := zip.OpenReader(whl[0])
		if err != nil {
			t.Fatal(err)
		}
		names := map[string]bool{}
		for _, f := range zr.File {
			names[f.Name] = true
		}
		zr.Close()
		for _, want := range []string{"engram_memory/__init__.py", "engram_memory/_client.py", "engram_memory/langchain.py", "engram_memory/py.typed"} {
			if !names[want] {
				t.Errorf("the wheel lacks %s: %v", want, names)
			}
		}
		venv := newVenv(t, py, env)
		run(t, t.TempDir(), env, venvPython(venv), "-m", "pip", "install", whl[0])
		checkInstalled(t, venv)
	})
}

// pythonQuickStart is the first ```python block of the README: the quick
// start.
func pythonQuickStart(t *testing.T, readme string) string {
	t.Helper()
	m := regexp.MustCompile("(?s)```python\n(.*?)```").FindStringSubmatch(readme)
	if m == nil {
		t.Fatal("python/README.md has no ```python block")
	}
	if !strings.Contains(m[1], "from engram_memory import") {
		t.Fatalf("the README's quick start does not import engram_memory:\n%s", m[1])
	}
	return m[1]
}

// newVenv makes a fresh virtual environment (with pip, no system packages).
func newVenv(t *testing.T, py string, env []string) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "venv")
	run(t, t.TempDir(), env, py, "-m", "venv", dir)
	return dir
}

// venvPython is the interpreter of the virtual environment at dir.
func venvPython(dir string) string {
	if runtime.GOOS == "windows" {
		return filepath.Join(dir, "Scripts", "python.exe")
	}
	return filepath.Join(dir, "bin", "python")
}

// pythonEnv is cleanEnv without what would make Python import from
// elsewhere than the environment it runs (a path, another environment, the
// user's site folder) or pip stop to ask; pip's registry settings stay.
func pythonEnv() []string {
	var out []string
	for _, kv := range cleanEnv() {
		name, _, _ := strings.Cut(kv, "=")
		switch name {
		case "PYTHONPATH", "PYTHONHOME", "PYTHONSTARTUP", "VIRTUAL_ENV", "PIP_USER", "PIP_REQUIRE_VIRTUALENV":
			continue
		}
		out = append(out, kv)
	}
	return append(out, "PYTHONNOUSERSITE=1", "PYTHONDONTWRITEBYTECODE=1", "PIP_DISABLE_PIP_VERSION_CHECK=1", "PIP_NO_INPUT=1")
}
