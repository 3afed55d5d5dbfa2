//go:build amd64 && !purego

package linalg

// f16PairsBF16 is bf16f16_amd64.s: AVX512_BF16 and AVX512BW, which HasBF16
// implies on amd64.
//
//go:noescape
func f16PairsBF16(dst, src *uint16, pairs, stride int)

// f16PairsPortable: f16PairsBF16 runs on any CPU (tests call it directly).
const f16PairsPortable = false
