//go:build !amd64 || purego

package linalg

func decodeQ4Blocks(dst []float32, src []byte, blocks int) { decodeQ4Generic(dst, src, blocks) }

func decodeQ8Blocks(dst []float32, src []byte, blocks int) { decodeQ8Generic(dst, src, blocks) }

func qKernels() []*qKernel { return nil }

func qa8Kernels() []*qa8Kernel { return nil }

var useQA8Quant = false

func quantBlock8Fast(dst []byte, src []float32, sOff, cOff int, corr int32) bool { return false }
