//go:build !amd64 || purego

package vector

import "testing"

// kernels lists the dot-product implementations this machine can run.
func kernels() []kernel { return []kernel{{"generic", dotGeneric}} }

// useKernel is a no-op: only the generic kernel exists here.
func useKernel(tb testing.TB, name string) { tb.Helper() }
