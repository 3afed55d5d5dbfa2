package engram_test

import (
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// TestRootHoldsNoIndexMachinery: the root package is the API; the index
// (BM25, tokenizer, snapshot codec) lives below the backend seam.
func TestRootHoldsNoIndexMachinery(t *testing.T) {
	banned := []string{"internal/bm25", "internal/tokenize", "internal/binenc", "internal/index", "internal/mirror", "internal/vector"}
	for _, path := range imports(t, ".") {
		for _, b := range banned {
			if path == module+"/"+b {
				t.Errorf("the root imports %s", path)
			}
		}
	}
}

// module is this module's path: the root's own imports start with it.
const module = "github.com/engram-memory/engram"

// imports lists the module's packages that the non-test files of the package
// in dir import, whatever their build constraints.
func imports(t *testing.T, dir string) []string {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(dir, "*.go"))
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	fset := token.NewFileSet()
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, name, nil, parser.ImportsOnly)
		if err != nil {
			t.Fatal(err)
		}
		for _, imp := range f.Imports {
			path, _ := strconv.Unquote(imp.Path.Value)
			if path == module || strings.HasPrefix(path, module+"/") {
				out = append(out, path)
			}
		}
	}
	return out
}

// TestRootLinksNoDriverOrModel: a program that imports only the root (and
// opens a SQLite store) links neither the Weaviate backend nor an embedding
// model: they register themselves when a program imports them. Everything
// the root reaches, transitively, is checked.
func TestRootLinksNoDriverOrModel(t *testing.T) {
	seen := map[string]bool{module: true}
	todo := []string{module}
	for len(todo) > 0 {
		pkg := todo[len(todo)-1]
		todo = todo[:len(todo)-1]
		dir := "." + strings.TrimPrefix(pkg, module)
		if _, err := os.Stat(dir); err != nil {
			t.Fatalf("%s: %v", pkg, err)
		}
		for _, imp := range imports(t, dir) {
			if !seen[imp] {
				seen[imp] = true
				todo = append(todo, imp)
			}
		}
	}
	var reached []string
	for pkg := range seen {
		reached = append(reached, pkg)
	}
	slices.Sort(reached)
	if len(reached) < 10 {
		t.Fatalf("the walk reached only %v", reached) // the walk itself is broken
	}
	for _, pkg := range reached {
		rel := strings.TrimPrefix(pkg, module+"/")
		if strings.HasPrefix(rel, "backend/weaviate") || strings.HasPrefix(rel, "embed/") {
			t.Errorf("the root reaches %s (%s)", rel, strings.Join(reached, " "))
		}
	}
}
