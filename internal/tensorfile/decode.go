package tensorfile

import (
	"fmt"
	"math"
	"unsafe"
)

// Float32s decodes a Float32, Float16 or Int8Rows tensor into dst (grown as
// needed) and returns it.
func (t *Tensor) Float32s(dst []float32) ([]float32, error) {
	n := t.Len()
	if cap(dst) < n {
		dst = make([]float32, n)
	}
	dst = dst[:n]
	d := t.Data
	switch t.DType {
	case Float32:
		for i := range dst {
			dst[i] = math.Float32frombits(le32(d, 4*i))
		}
	case Float16:
		for i := range dst {
			dst[i] = HalfToFloat(uint16(d[2*i]) | uint16(d[2*i+1])<<8)
		}
	case Int8Rows:
		scales, q, err := t.Int8Rows()
		if err != nil {
			return nil, err
		}
		cols := n / max(len(scales), 1)
		for r, s := range scales {
			row := dst[r*cols : (r+1)*cols]
			qr := q[r*cols : (r+1)*cols]
			for i := range row {
				row[i] = float32(int8(qr[i])) * s
			}
		}
	default:
		return nil, fmt.Errorf("tensorfile: tensor %q is %v, not numbers", t.Name, t.DType)
	}
	return dst, nil
}

// Int8Rows returns an Int8Rows tensor's per-row scales and its int8 values
// (as bytes, row after row, in place).
func (t *Tensor) Int8Rows() (scales []float32, q string, err error) {
	if t.DType != Int8Rows {
		return nil, "", fmt.Errorf("tensorfile: tensor %q is %v, not %v", t.Name, t.DType, Int8Rows)
	}
	rows := t.rows()
	scales = make([]float32, rows)
	for i := range scales {
		scales[i] = math.Float32frombits(le32(t.Data, 4*i))
	}
	return scales, t.Data[4*rows:], nil
}

// HalfToFloat converts IEEE 754 binary16 bits to float32 exactly.
func HalfToFloat(h uint16) float32 {
	sign := uint32(h>>15) << 31
	exp := uint32(h>>10) & 0x1f
	frac := uint32(h) & 0x3ff
	switch {
	case exp == 0x1f: // Inf or NaN
		return math.Float32frombits(sign | 0x7f800000 | frac<<13)
	case exp != 0: // normal
		return math.Float32frombits(sign | (exp+112)<<23 | frac<<13)
	case frac == 0: // zero
		return math.Float32frombits(sign)
	}
	// Subnormal: value = frac × 2^-24, exact in float32.
	f := float32(frac) * (1.0 / (1 << 24))
	if sign != 0 {
		return -f
	}
	return f
}

// FloatToHalf converts float32 to binary16 bits, rounding to nearest even (the
// writer's conversion, for tests and fixtures).
func FloatToHalf(f float32) uint16 {
	b := math.Float32bits(f)
	sign := uint16(b>>16) & 0x8000
	exp := int32(b>>23) & 0xff
	frac := b & 0x7fffff
	if exp == 0xff {
		if frac != 0 {
			return sign | 0x7e00
		}
		return sign | 0x7c00
	}
	e := exp - 127 + 15
	if e >= 0x1f {
		return sign | 0x7c00
	}
	if e <= 0 {
		if e < -10 {
			return sign
		}
		m := frac | 0x800000
		shift := uint32(14 - e)
		half := uint32(1) << (shift - 1)
		v := m >> shift
		rem := m & (1<<shift - 1)
		if rem > half || (rem == half && v&1 == 1) {
			v++
		}
		return sign | uint16(v)
	}
	v := uint32(e)<<10 | frac>>13
	rem := frac & 0x1fff
	if rem > 0x1000 || (rem == 0x1000 && v&1 == 1) {
		v++ // may carry into the exponent, which is the right result
	}
	return sign | uint16(v)
}

// le32 reads a little-endian uint32 at s[i:].
func le32(s string, i int) uint32 {
	s = s[i : i+4]
	return uint32(s[0]) | uint32(s[1])<<8 | uint32(s[2])<<16 | uint32(s[3])<<24
}

// littleEndian is true on machines that store a uint16's low byte first,
// where a file's float16 values can be used in place.
var littleEndian = func() bool {
	x := uint16(1)
	return *(*byte)(unsafe.Pointer(&x)) == 1
}()

// Float16s returns a Float16 tensor's values as binary16 bits. On a
// little-endian machine, when the data is 2-byte aligned (tensors are
// 64-byte aligned in the file), the slice is the file's bytes in place, not
// a copy: for a go:embed file it is read-only memory, never to be written.
// Otherwise it is decoded into a new slice.
func (t *Tensor) Float16s() ([]uint16, error) {
	if t.DType != Float16 {
		return nil, fmt.Errorf("tensorfile: tensor %q is %v, not %v", t.Name, t.DType, Float16)
	}
	n := t.Len()
	if n == 0 {
		return []uint16{}, nil
	}
	p := unsafe.StringData(t.Data)
	if littleEndian && uintptr(unsafe.Pointer(p))%2 == 0 {
		return unsafe.Slice((*uint16)(unsafe.Pointer(p)), n), nil
	}
	out := make([]uint16, n)
	for i := range out {
		out[i] = uint16(t.Data[2*i]) | uint16(t.Data[2*i+1])<<8
	}
	return out, nil
}
