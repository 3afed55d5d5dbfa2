package store

import (
	"context"
	"testing"

	"github.com/engram-memory/engram/memory"
)

// TestVersion: a Version stays equal while nothing commits and changes with
// every commit, this handle's or another's; a setting read from memory is the
// file's, whoever wrote it last.
func TestVersion(t *testing.T) {
	ctx := context.Background()
	s, path := openTemp(t)
	other, err := Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	version := func() Version {
		t.Helper()
		v, err := s.Version(ctx)
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	setting := func(want string) {
		t.Helper()
		for range 2 { // the second read is the cached one
			got, ok, err := s.Setting(ctx, "k")
			if err != nil || got != want || ok != (want != "") {
				t.Fatalf("setting k = %q, %v, %v; want %q", got, ok, err, want)
			}
		}
	}
	steps := []struct {
		name  string
		write func() error
		want  string // setting k afterwards
	}{
		{"nothing", nil, ""},
		{"own put", func() error { _, _, err := s.Put(ctx, nil, []*memory.Memory{testMemory("a")}); return err }, ""},
		{"other put", func() error { _, _, err := other.Put(ctx, nil, []*memory.Memory{testMemory("b")}); return err }, ""},
		{"own setting", func() error { return s.SetSetting(ctx, "k", "1") }, "1"},
		{"other setting", func() error { return other.SetSetting(ctx, "k", "2") }, "2"},
		{"other deletes it", func() error { return other.SetSetting(ctx, "k", "") }, ""},
	}
	for _, st := range steps {
		before := version()
		if st.write != nil {
			if err := st.write(); err != nil {
				t.Fatalf("%s: %v", st.name, err)
			}
		}
		if after := version(); (after == before) != (st.write == nil) {
			t.Errorf("%s: version %v -> %v", st.name, before, after)
		}
		setting(st.want)
		if again := version(); again != version() {
			t.Errorf("%s: version moved with nothing written", st.name)
		}
	}
	if (Version{}) == version() {
		t.Error("a read Version equals the zero Version")
	}
}

// TestVersionBoundedPool: a handle whose pool is bounded keeps no connection
// for Version (it could drain the pool) and its reads still work.
func TestVersionBoundedPool(t *testing.T) {
	ctx := context.Background()
	s, _ := openTemp(t)
	s.db.SetMaxOpenConns(1)
	if _, err := s.Version(ctx); err == nil {
		t.Fatal("Version on a one-connection pool: no error")
	}
	if err := s.SetSetting(ctx, "k", "v"); err != nil {
		t.Fatal(err)
	}
	if got, ok, err := s.Setting(ctx, "k"); err != nil || !ok || got != "v" {
		t.Fatalf("setting = %q, %v, %v", got, ok, err)
	}
}
