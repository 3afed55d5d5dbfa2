package backend

import (
	"context"
	"errors"
	"strings"
	"testing"
)

func TestScheme(t *testing.T) {
	for _, tc := range []struct{ loc, want string }{
		{"agent.db", ""},
		{"/var/lib/engram/agent.db", ""},
		{`C:\Users\me\agent.db`, ""},
		{"dir:with:colons/agent.db", ""},
		{"sqlite:///var/lib/agent.db", "sqlite"},
		{"  Weaviate://localhost:8080?class=Memory", "weaviate"},
		{"git+ssh://host/x", "git+ssh"},
		{"1x://host", ""},
		{"://host", ""},
		{"we aviate://host", ""},
	} {
		if got := Scheme(tc.loc); got != tc.want {
			t.Errorf("Scheme(%q) = %q, want %q", tc.loc, got, tc.want)
		}
	}
}

func TestRegisterOpen(t *testing.T) {
	ctx := context.Background()
	boom := errors.New("boom")
	var got string
	Register("testdrv", func(_ context.Context, loc string) (Backend, error) { got = loc; return nil, boom })
	if _, err := Open(ctx, "TestDrv://h?x=1"); !errors.Is(err, boom) || got != "TestDrv://h?x=1" {
		t.Fatalf("Open through the driver: %v, location %q", err, got)
	}
	if !strings.Contains(strings.Join(Schemes(), ","), "testdrv") {
		t.Errorf("Schemes() = %v, want testdrv in it", Schemes())
	}
	for _, loc := range []string{"nodrv://h", "agent.db"} {
		if _, err := Open(ctx, loc); err == nil {
			t.Errorf("Open(%q): no error", loc)
		}
	}
	_, err := Open(ctx, "nodrv://h")
	if want := `no backend registered for scheme "nodrv"`; err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("Open of an unregistered scheme: %v, want it to say %s", err, want)
	}
	for name, reg := range map[string]func(){
		"twice":      func() { Register("testdrv", func(context.Context, string) (Backend, error) { return nil, nil }) },
		"nil":        func() { Register("testnil", nil) },
		"bad scheme": func() { Register("Bad Scheme", func(context.Context, string) (Backend, error) { return nil, nil }) },
	} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("Register %s: no panic", name)
				}
			}()
			reg()
		}()
	}
}

// FuzzScheme: any location gives either no scheme or a valid lower-case one
// that the location, trimmed, starts with (in any case), followed by "://".
func FuzzScheme(f *testing.F) {
	for _, s := range []string{"agent.db", "sqlite:///a.db", "weaviate://h:1?class=M", "C:\\x", "://", "A+b.c-d://x"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, loc string) {
		s := Scheme(loc)
		if s == "" {
			return
		}
		if !validScheme(s) {
			t.Fatalf("Scheme(%q) = %q: not a valid scheme", loc, s)
		}
		if !strings.HasPrefix(strings.ToLower(strings.TrimSpace(loc)), s+"://") {
			t.Fatalf("Scheme(%q) = %q: not the location's prefix", loc, s)
		}
	})
}
