package engram_test

import (
	"go/parser"
	"go/token"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// TestRootHoldsNoIndexMachinery: the root package is the API; the index
// (BM25, tokenizer, snapshot codec) lives below the backend seam.
func TestRootHoldsNoIndexMachinery(t *testing.T) {
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	banned := []string{"internal/bm25", "internal/tokenize", "internal/binenc", "internal/index", "internal/mirror", "internal/vector"}
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
			for _, b := range banned {
				if strings.HasSuffix(path, "/"+b) {
					t.Errorf("%s imports %s", name, path)
				}
			}
		}
	}
}
