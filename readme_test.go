package engram_test

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestReadmeShape keeps the README what a newcomer reads in five minutes: at
// most 8 KB, the install line and the two set-up commands, and no link
// into the repository that leads nowhere (the docs it points to included).
func TestReadmeShape(t *testing.T) {
	data, err := os.ReadFile("README.md")
	if err != nil {
		t.Fatal(err)
	}
	if len(data) > 8<<10 {
		t.Errorf("README.md is %d bytes, over 8 KB: move detail into docs/", len(data))
	}
	for _, want := range []string{
		"CGO_ENABLED=0 go install -ldflags='-s -w' github.com/engram-memory/engram/cmd/engram@latest",
		"go run ./cmd/engram demo",
		"go test -race ./...",
	} {
		if !strings.Contains(string(data), want) {
			t.Errorf("README.md lacks %q", want)
		}
	}
	docs, err := filepath.Glob("docs/*.md")
	if err != nil {
		t.Fatal(err)
	}
	link := regexp.MustCompile(`\]\(([^)#\s]+)(#[^)\s]*)?\)`)
	for _, file := range append([]string{"README.md"}, docs...) {
		text, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range link.FindAllStringSubmatch(string(text), -1) {
			target := m[1]
			if strings.Contains(target, "://") || strings.HasPrefix(target, "mailto:") {
				continue
			}
			if _, err := os.Stat(filepath.Join(filepath.Dir(file), target)); err != nil {
				t.Errorf("%s links to %s, which is not in the repository", file, target)
			}
		}
	}
}
