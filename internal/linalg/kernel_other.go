//go:build !amd64 || purego

package linalg

// kernels lists the micro-kernels this machine can run, best first.
func kernels() []*kernel { return []*kernel{generic} }

// f16Kernels lists the float16-panel micro-kernels this machine can run:
// none, so PackedF16 products decode the panels at first use.
func f16Kernels() []*kernel { return nil }

// qkernels lists the int8 micro-kernels this machine can run, best first.
func qkernels() []*qkernel { return []*qkernel{qgeneric} }

const useQuantAsm = false

func quantizeRow(dst []uint8, src []float32) float32 { return quantizeRowGeneric(dst, src) }

// bkernels lists the bf16 micro-kernels this machine can run, best first.
func bkernels() []*bkernel { return []*bkernel{bgeneric} }

func toBF16Row(dst []uint16, src []float32) { toBF16RowGeneric(dst, src) }
