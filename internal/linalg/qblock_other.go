//go:build !amd64 || purego

package linalg

func decodeQ4Blocks(dst []float32, src []byte, blocks int) { decodeQ4Generic(dst, src, blocks) }

func decodeQ8Blocks(dst []float32, src []byte, blocks int) { decodeQ8Generic(dst, src, blocks) }

func qKernels() []*qKernel { return nil }
