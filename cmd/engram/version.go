package main

import (
	"fmt"
	"io"
	"regexp"
	"runtime"
	"runtime/debug"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/engram-memory/engram/embed/builtin"
)

func init() { register(newVersion) }

// build says what this binary was built from.
type build struct {
	Version  string `json:"version"`          // module version, else "devel"
	Commit   string `json:"commit,omitempty"` // full hash
	Modified bool   `json:"modified,omitempty"`
	Date     string `json:"date,omitempty"` // the commit's time, RFC 3339
	Go       string `json:"go"`
	Platform string `json:"platform"`
	// Cgo: built with CGO_ENABLED=1, which links the C library dynamically
	// (for net's resolver only): each process starts about 0.5 ms later (docs/development.md).
	Cgo    bool            `json:"cgo,omitempty"`
	Models []builtin.Model `json:"models,omitempty"`
}

// commit and date may be set at link time, for a build without version
// control information: go build -ldflags "-X main.commit=$(git rev-parse
// HEAD) -X main.date=$(date -u +%Y-%m-%dT%H:%M:%SZ)".
var commit, date string

// readBuild reads the build from the binary's build information.
func readBuild() build {
	info, _ := debug.ReadBuildInfo()
	return buildFrom(info)
}

// pseudoVersion matches the tail of a Go pseudo-version
// (v0.0.0-20261205073955-b335e1ae2455): the commit's time and hash.
var pseudoVersion = regexp.MustCompile(`(?:^|[-.])(\d{14})-([0-9a-f]{12})(?:\+.*)?$`)

// buildFrom reads version, commit and date from the version control settings
// go build stamps (vcs.revision, vcs.time, vcs.modified), else from a
// pseudo-version such as go install ...@latest gives an untagged commit.
func buildFrom(info *debug.BuildInfo) build {
	b := build{Version: "devel", Go: runtime.Version(), Platform: runtime.GOOS + "/" + runtime.GOARCH}
	if info == nil {
		return b
	}
	if info.GoVersion != "" {
		b.Go = info.GoVersion
	}
	if v := info.Main.Version; v != "" && v != "(devel)" {
		b.Version = v
	}
	for _, s := range info.Settings {
		switch s.Key {
		case "vcs.revision":
			b.Commit = s.Value
		case "vcs.time":
			b.Date = s.Value
		case "vcs.modified":
			b.Modified = s.Value == "true"
		case "CGO_ENABLED":
			b.Cgo = s.Value == "1"
		}
	}
	if b.Commit == "" && commit != "" {
		b.Commit, b.Date = commit, date
	}
	if b.Commit == "" {
		if m := pseudoVersion.FindStringSubmatch(b.Version); m != nil {
			b.Commit = m[2]
			if t, err := time.Parse("20060102150405", m[1]); err == nil {
				b.Date = t.UTC().Format(time.RFC3339)
			}
		}
	}
	return b
}

// shortCommit is the commit's first 12 characters, or "unknown".
func (b build) shortCommit() string {
	switch {
	case b.Commit == "":
		return "unknown"
	case len(b.Commit) > 12:
		return b.Commit[:12]
	}
	return b.Commit
}

// short is what --version prints after "engram ": the version, the commit
// (or "commit unknown": built without version control information) and Go.
func (b build) short() string {
	mod := ""
	if b.Modified {
		mod = ", modified"
	}
	return fmt.Sprintf("%s (commit %s%s, %s)", b.Version, b.shortCommit(), mod, b.Go)
}

func newVersion(e *env) *cobra.Command {
	return &cobra.Command{
		Use:   "version",
		Short: "Print the version, commit, build date, Go version and built-in models",
		Long: `Print what this binary was built from: its version (a release tag, a
pseudo-version, or devel), the commit and its date (from go build's version
control stamp; "unknown" when built without it, as go build -buildvcs=false
does), the Go version and platform, and the built-in embedding models with the
id each stores with its vectors. --json prints the same as an object.`,
		Args: args(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, _ []string) error {
			b := readBuild()
			ms, err := builtin.Models()
			if err != nil {
				return err
			}
			b.Models = ms
			return e.out(b, func(w io.Writer) error { return writeVersion(w, b) })
		},
	}
}

func writeVersion(w io.Writer, b build) error {
	var s strings.Builder
	fmt.Fprintf(&s, "engram %s\n", b.Version)
	commit := b.Commit
	if commit == "" {
		commit = "unknown (built without version control information)"
	} else if b.Modified {
		commit += " (modified)"
	}
	date := b.Date
	if date == "" {
		date = "unknown"
	}
	fmt.Fprintf(&s, "commit:   %s\ndate:     %s\ngo:       %s %s\n", commit, date, b.Go, b.Platform)
	if b.Cgo {
		// Nothing in Engram needs cgo: only net's resolver uses it when a C
		// compiler is found, and the dynamic link costs every call.
		s.WriteString("cgo:      on (each call starts about 0.5 ms later; CGO_ENABLED=0 go install builds without it)\n")
	}
	s.WriteString("models:\n")
	width := 0
	for _, m := range b.Models {
		width = max(width, len(m.Name))
	}
	for _, m := range b.Models {
		def := ""
		if m.Default {
			def = ", the default"
		}
		fmt.Fprintf(&s, "  %-*s %s, %d dimensions%s: vectors stored as %s\n", width, m.Name, m.Title, m.Dim, def, m.ID)
	}
	_, err := io.WriteString(w, s.String())
	return err
}
