//go:build !amd64 || purego

package linalg

import "unsafe"

// f16PairsBF16 is the assembly routine's portable twin (HasBF16 is false
// here, so nothing calls it outside tests).
func f16PairsBF16(dst, src *uint16, pairs, stride int) {
	for p := range pairs {
		s := unsafe.Slice((*uint16)(unsafe.Add(unsafe.Pointer(src), 64*p)), 32)
		d := unsafe.Slice((*uint16)(unsafe.Add(unsafe.Pointer(dst), stride*p)), 32)
		for j := range 16 {
			d[2*j], d[2*j+1] = toBF16(halfToFloat(s[j])), toBF16(halfToFloat(s[16+j]))
		}
	}
}

// f16PairsPortable: f16PairsBF16 runs on any CPU (tests call it directly).
const f16PairsPortable = true
