package embed

import (
	"errors"
	"slices"
	"strings"
	"testing"
)

func TestRegistry(t *testing.T) {
	want := Func{ModelID: "test-registry"}
	Register("Test-Registry", func() (Embedder, error) { return want, nil })
	e, err := Open(" test-registry ")
	if err != nil || e.Model() != "test-registry" {
		t.Fatalf("Open = %v, %v", e, err)
	}
	if !slices.Contains(Registered(), "test-registry") {
		t.Errorf("Registered() = %v", Registered())
	}
	// No package of this test binary registers the built-in models.
	_, err = Open("")
	if !errors.Is(err, ErrNotRegistered) || !strings.Contains(err.Error(), "embed/builtin") {
		t.Errorf("Open(\"\") without embed/builtin: %v", err)
	}
	Register(Builtin, func() (Embedder, error) { return want, nil })
	Register("test-broken", func() (Embedder, error) { return nil, errors.New("broken") })
	Register("test-other", func() (Embedder, error) { return Func{ModelID: "test-other"}, nil })
	var names []string
	for n, e := range Each() {
		names = append(names, n+"="+e.Model())
	}
	if want := []string{"test-other=test-other", "test-registry=test-registry"}; !slices.Equal(names, want) {
		t.Errorf("Each() = %v, want %v: every registered embedder but Builtin and one that fails to open", names, want)
	}
	for n := range Each() {
		if n != "test-other" {
			t.Errorf("Each() went on to %q after its caller stopped", n)
		}
		break
	}
	func() {
		defer func() {
			if recover() == nil {
				t.Error("a second Register of one name did not panic")
			}
		}()
		Register("test-registry", func() (Embedder, error) { return want, nil })
	}()
}
