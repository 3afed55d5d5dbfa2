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
	func() {
		defer func() {
			if recover() == nil {
				t.Error("a second Register of one name did not panic")
			}
		}()
		Register("test-registry", func() (Embedder, error) { return want, nil })
	}()
}
