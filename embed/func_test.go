package embed

import (
	"context"
	"errors"
	"testing"
)

func TestFunc(t *testing.T) {
	boom := errors.New("boom")
	for _, tc := range []struct {
		name    string
		f       Func
		wantErr error
	}{
		{"ok", Func{"f:m", func(_ context.Context, in []string) ([][]float32, error) {
			return fakeVecs(in, 2), nil
		}}, nil},
		{"nil F", Func{ModelID: "f:m"}, ErrNoEmbedder},
		{"error passed on", Func{"f:m", func(context.Context, []string) ([][]float32, error) { return nil, boom }}, boom},
		{"wrong count", Func{"f:m", func(context.Context, []string) ([][]float32, error) { return [][]float32{{1}}, nil }}, ErrBadResponse},
	} {
		t.Run(tc.name, func(t *testing.T) {
			in := []string{"a", "b"}
			got, err := tc.f.Embed(context.Background(), in)
			if !errors.Is(err, tc.wantErr) {
				t.Fatalf("error %v, want %v", err, tc.wantErr)
			}
			if err == nil && !equalVecs(got, fakeVecs(in, 2)) {
				t.Fatal(got)
			}
			if tc.f.Model() != "f:m" {
				t.Fatal(tc.f.Model())
			}
		})
	}
}
