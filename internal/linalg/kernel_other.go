//go:build !amd64 || purego

package linalg

// kernels lists the micro-kernels this machine can run, best first.
func kernels() []*kernel { return []*kernel{generic} }
