package main

import (
	"encoding/json"
	"fmt"
	"runtime/debug"
	"strings"
	"testing"

	"github.com/engram-memory/engram/embed/builtin"
)

// TestBuildFrom: the version, commit and date come from go build's version
// control stamp, else from a pseudo-version (go install ...@latest of an
// untagged commit), else say the commit is unknown; --version names it.
func TestBuildFrom(t *testing.T) {
	vcs := func(kv ...string) []debug.BuildSetting {
		var s []debug.BuildSetting
		for i := 0; i < len(kv); i += 2 {
			s = append(s, debug.BuildSetting{Key: kv[i], Value: kv[i+1]})
		}
		return s
	}
	for _, c := range []struct {
		name    string
		version string
		set     []debug.BuildSetting
		want    build
		short   string
	}{
		{"go build in a checkout", "(devel)", vcs("vcs.revision", "b335e1ae2455f0d0c0ffee00000000000000000a", "vcs.time", "2026-12-05T07:39:55Z", "vcs.modified", "true", "CGO_ENABLED", "0"),
			build{Version: "devel", Commit: "b335e1ae2455f0d0c0ffee00000000000000000a", Date: "2026-12-05T07:39:55Z", Modified: true},
			"devel (commit b335e1ae2455, modified, go1.99)"},
		{"go install of a pseudo-version", "v0.0.0-20261205073955-b335e1ae2455", nil,
			build{Version: "v0.0.0-20261205073955-b335e1ae2455", Commit: "b335e1ae2455", Date: "2026-12-05T07:39:55Z"},
			"v0.0.0-20261205073955-b335e1ae2455 (commit b335e1ae2455, go1.99)"},
		{"pseudo-version after a tag", "v1.2.4-0.20261205073955-b335e1ae2455+dirty", nil,
			build{Version: "v1.2.4-0.20261205073955-b335e1ae2455+dirty", Commit: "b335e1ae2455", Date: "2026-12-05T07:39:55Z"},
			"v1.2.4-0.20261205073955-b335e1ae2455+dirty (commit b335e1ae2455, go1.99)"},
		{"go install of a tag", "v1.2.3", nil, build{Version: "v1.2.3"}, "v1.2.3 (commit unknown, go1.99)"},
		{"go install with a C compiler", "v1.2.3", vcs("CGO_ENABLED", "1"), build{Version: "v1.2.3", Cgo: true}, "v1.2.3 (commit unknown, go1.99)"},
		{"no version control stamp", "(devel)", nil, build{Version: "devel"}, "devel (commit unknown, go1.99)"},
	} {
		t.Run(c.name, func(t *testing.T) {
			info := &debug.BuildInfo{GoVersion: "go1.99", Main: debug.Module{Version: c.version}, Settings: c.set}
			got := buildFrom(info)
			c.want.Go, c.want.Platform = "go1.99", got.Platform
			if fmt.Sprint(got) != fmt.Sprint(c.want) {
				t.Fatalf("buildFrom: %+v, want %+v", got, c.want)
			}
			if s := got.short(); s != c.short {
				t.Fatalf("--version: %q, want %q", s, c.short)
			}
		})
	}
}

// TestVersionCommand: engram version names the build and the built-in
// models with the id each stores; --json says the same; --version is one
// line naming the commit (unknown in a test binary).
func TestVersionCommand(t *testing.T) {
	out, errs, code := engramRun(t, "", "version")
	if code != 0 || errs != "" {
		t.Fatalf("exit %d: %s", code, errs)
	}
	for _, want := range []string{"engram ", "commit:", "date:", "go:", "bge-small    bge-small-en-v1.5, 384 dimensions, the default: vectors stored as bge-small-en-v1.5.2-v2",
		"minilm       all-MiniLM-L6-v2, 384 dimensions: vectors stored as all-minilm-l6-v2-v2",
		"multilingual multilingual-e5-small, 384 dimensions: vectors stored as multilingual-e5-small-q4-v2"} {
		if !strings.Contains(out, want) {
			t.Fatalf("engram version lacks %q:\n%s", want, out)
		}
	}
	var b build
	out, _, code = engramRun(t, "", "version", "--json")
	if err := json.Unmarshal([]byte(out), &b); err != nil || code != 0 || len(b.Models) != len(builtin.Names()) || b.Go == "" {
		t.Fatalf("version --json: exit %d, %v: %s", code, err, out)
	}
	out, _, _ = engramRun(t, "", "--version")
	if !strings.HasPrefix(out, "engram ") || !strings.Contains(out, "(commit ") || strings.Count(out, "\n") != 1 {
		t.Fatalf("--version: %q", out)
	}
	var w strings.Builder
	fixed := build{Version: "v1.2.3", Commit: "b335e1ae2455f0d0c0ffee00000000000000000a", Date: "2026-12-05T07:39:55Z",
		Go: "go1.99", Platform: "linux/amd64", Cgo: true, Models: b.Models}
	if err := writeVersion(&w, fixed); err != nil {
		t.Fatal(err)
	}
	checkGolden(t, "help/version.golden", w.String())
}

// TestDescribeModel: a built-in model's id is explained where people read
// it (stats, version): the model's own name and the code revision.
func TestDescribeModel(t *testing.T) {
	for id, want := range map[string]string{
		"all-minilm-l6-v2-v2":     "all-MiniLM-L6-v2, built-in minilm, code revision 2",
		"minilm-static256-v1":     "MiniLM static 256-d, built-in static, code revision 1",
		"openai:text-embedding-3": "",
	} {
		if got := builtin.Describe(id); got != want {
			t.Errorf("Describe(%q) = %q, want %q", id, got, want)
		}
	}
}
