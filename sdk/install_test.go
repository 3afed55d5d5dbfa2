package sdk_test

// The TypeScript package as a user installs it: from a clean copy of its
// folder (no node_modules, no dist/) with `npm install FOLDER`, and from the
// tarball `npm pack` makes of another clean copy, each into a fresh project;
// there the README's quick start runs against a real engram serve on
// 127.0.0.1 and type-checks against the installed package's types. npm
// links a folder dependency and runs its prepare script without installing
// its devDependencies: scripts/build.mjs installs the pinned build tools
// (from the registry) and builds dist/. Without node >= 20 and npm this
// skips, and fails when CI=true.

import (
	"bytes"
	"context"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"
)

// packageFiles are what a clean clone holds of sdk/typescript that the
// build reads (node_modules and dist are never committed).
var packageFiles = []string{"package.json", "package-lock.json", "tsconfig.json", "README.md", "src", "scripts"}

// pythonFiles are what a clean clone holds of sdk/python (no build/, dist/,
// *.egg-info or __pycache__, which are never committed).
var pythonFiles = []string{"pyproject.toml", "README.md", "constraints.txt", "src", "tests"}

func TestTypeScriptPackageInstalls(t *testing.T) {
	how := "install Node >= 20 with npm (and reach the npm registry)"
	node, err := exec.LookPath("node")
	if err != nil {
		missing(t, "node", how)
	}
	npm, err := exec.LookPath("npm")
	if err != nil {
		missing(t, "npm", how)
	}
	out, err := exec.Command(node, "--version").Output()
	m := regexp.MustCompile(`^v(\d+)\.`).FindStringSubmatch(strings.TrimSpace(string(out)))
	if err != nil || m == nil {
		missing(t, "a working node >= 20", how)
	}
	if major, _ := strconv.Atoi(m[1]); major < 20 {
		missing(t, "node >= 20", how+" (this is "+strings.TrimSpace(string(out))+")")
	}
	readme, err := os.ReadFile("typescript/README.md")
	if err != nil {
		t.Fatal(err)
	}
	example := quickStart(t, string(readme))

	v := loadVectors(t)
	s := startServer(t, v)
	env := append(cleanEnv(), "npm_config_audit=false", "npm_config_fund=false", "npm_config_update_notifier=false")
	exampleEnv := append(cleanEnv(), "ENGRAM_URL="+s.URL, "ENGRAM_API_KEY="+v.Keys["c"].Key)

	// checkInstalled runs the quick start in project and type-checks it
	// with the build tools of pkg (typescript, @types/node).
	checkInstalled := func(t *testing.T, project, pkg string) {
		t.Helper()
		if err := os.WriteFile(filepath.Join(project, "example.mjs"), []byte(example), 0o644); err != nil {
			t.Fatal(err)
		}
		got := run(t, project, exampleEnv, node, "example.mjs")
		for _, want := range []string{"The deploy key lives in the vault", "not_found"} {
			if !strings.Contains(got, want) {
				t.Errorf("the README's quick start printed no %q:\n%s", want, got)
			}
		}
		if err := os.WriteFile(filepath.Join(project, "example.ts"), []byte(example), 0o644); err != nil {
			t.Fatal(err)
		}
		tools := filepath.Join(pkg, "node_modules")
		run(t, project, env, node, filepath.Join(tools, "typescript", "bin", "tsc"), "--noEmit", "--strict",
			"--target", "es2022", "--module", "nodenext", "--moduleResolution", "nodenext",
			"--typeRoots", filepath.Join(tools, "@types"), "--types", "node", "example.ts")
	}

	t.Run("folder", func(t *testing.T) {
		pkg := cleanCopy(t, "typescript", packageFiles)
		project := newProject(t)
		run(t, project, env, npm, "install", pkg)
		if _, err := os.Stat(filepath.Join(pkg, "dist", "index.js")); err != nil {
			t.Fatalf("npm install FOLDER built no dist/ in the folder: %v", err)
		}
		checkInstalled(t, project, pkg)
	})

	t.Run("tarball", func(t *testing.T) {
		pkg := cleanCopy(t, "typescript", packageFiles)
		packs := t.TempDir()
		run(t, pkg, env, npm, "pack", "--silent", "--pack-destination", packs)
		tgz, _ := filepath.Glob(filepath.Join(packs, "engram-memory-*.tgz"))
		if len(tgz) != 1 {
			t.Fatalf("npm pack made %v in %s, want one engram-memory-*.tgz", tgz, packs)
		}
		list := run(t, packs, env, "tar", "tzf", tgz[0])
		for _, want := range []string{"package/dist/index.js", "package/dist/index.d.ts", "package/dist/client.js", "package/package.json"} {
			if !strings.Contains(list, want+"\n") {
				t.Errorf("the tarball lacks %s:\n%s", want, list)
			}
		}
		if strings.Contains(list, "node_modules/") {
			t.Errorf("the tarball holds node_modules:\n%s", list)
		}
		project := newProject(t)
		run(t, project, env, npm, "install", tgz[0])
		fi, err := os.Lstat(filepath.Join(project, "node_modules", "engram-memory"))
		if err != nil || !fi.IsDir() {
			t.Fatalf("node_modules/engram-memory is not a folder after installing the tarball: %v", err)
		}
		checkInstalled(t, project, pkg)
	})
}

// quickStart is the first ```ts block of the README: the quick start.
func quickStart(t *testing.T, readme string) string {
	t.Helper()
	m := regexp.MustCompile("(?s)```ts\n(.*?)```").FindStringSubmatch(readme)
	if m == nil {
		t.Fatal("typescript/README.md has no ```ts block")
	}
	if !strings.Contains(m[1], `from "engram-memory"`) {
		t.Fatalf("the README's quick start does not import engram-memory:\n%s", m[1])
	}
	return m[1]
}

// cleanCopy copies what a clean clone holds of the SDK folder dir (its
// files, folders walked whole but for caches) to a temporary folder.
func cleanCopy(t *testing.T, dir string, files []string) string {
	t.Helper()
	dst := filepath.Join(t.TempDir(), dir)
	if err := os.MkdirAll(dst, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, name := range files {
		src := filepath.Join(dir, name)
		err := filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			rel, _ := filepath.Rel(dir, p)
			if d.IsDir() && (d.Name() == "__pycache__" || strings.HasSuffix(d.Name(), ".egg-info")) {
				return filepath.SkipDir
			}
			if d.IsDir() {
				return os.MkdirAll(filepath.Join(dst, rel), 0o755)
			}
			data, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			return os.WriteFile(filepath.Join(dst, rel), data, 0o644)
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	return dst
}

// newProject is an empty ESM project for npm install.
func newProject(t *testing.T) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "project")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	pj := `{"name": "try-engram-memory", "version": "1.0.0", "private": true, "type": "module"}` + "\n"
	if err := os.WriteFile(filepath.Join(dir, "package.json"), []byte(pj), 0o644); err != nil {
		t.Fatal(err)
	}
	return dir
}

// run runs a command in dir and returns its output; a failure ends the test
// with it.
func run(t *testing.T, dir string, env []string, name string, args ...string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Dir, cmd.Env = dir, env
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil {
		t.Fatalf("%s %s in %s: %v\n%s", filepath.Base(name), strings.Join(args, " "), dir, err, out.String())
	}
	return out.String()
}
