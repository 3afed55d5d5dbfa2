package weaviatetest

import (
	"context"
	"net/http"
	"os"
	"regexp"
	"testing"
	"time"
)

func TestMain(m *testing.M) { os.Exit(Main(m)) }

// TestStartStopRestart: a private server answers ready on loopback, reports
// the pinned version when started from the pinned binary, refuses
// connections once stopped, and comes back on the same address.
func TestStartStopRestart(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a server twice")
	}
	s := Start(t)
	if err := waitReady(context.Background(), s.URL, nil, 10*time.Second); err != nil {
		t.Fatal(err)
	}
	if Bin() == DefaultBin() {
		if v := ServerVersion(t, s.URL); v != Version {
			t.Errorf("server reports %s, want the pinned %s", v, Version)
		}
	}
	if err := s.Stop(); err != nil {
		t.Fatal(err)
	}
	if resp, err := http.Get(s.URL + "/v1/.well-known/ready"); err == nil {
		resp.Body.Close()
		t.Fatalf("a stopped server answered %d", resp.StatusCode)
	}
	if err := s.Restart(); err != nil {
		t.Fatal(err)
	}
	if err := waitReady(context.Background(), s.URL, nil, 10*time.Second); err != nil {
		t.Fatal(err)
	}
}

// TestSharedURL: URL gives the same ready server to every caller.
func TestSharedURL(t *testing.T) {
	a, b := URL(t), URL(t)
	if a != b {
		t.Fatalf("URL gave %s, then %s", a, b)
	}
	if err := waitReady(context.Background(), a, nil, 10*time.Second); err != nil {
		t.Fatal(err)
	}
}

var classRE = regexp.MustCompile(`^[A-Z][_0-9A-Za-z]{0,254}$`)

// TestClass: names are valid Weaviate class names, distinct per call.
func TestClass(t *testing.T) {
	seen := map[string]bool{}
	for _, name := range []string{"plain", "with spaces/and:odd—chars", "日本語", ""} {
		t.Run(name, func(t *testing.T) {
			c := Class(t, "http://127.0.0.1:1") // cleanup against nothing is a no-op
			if !classRE.MatchString(c) {
				t.Errorf("Class = %q is not a valid class name", c)
			}
			if seen[c] {
				t.Errorf("Class = %q twice", c)
			}
			seen[c] = true
		})
	}
}
