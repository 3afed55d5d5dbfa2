//go:build !amd64 || purego

package linalg

import "testing"

func vecPaths() []string { return []string{"generic"} }

func useVec(tb testing.TB, name string) { tb.Helper() }
