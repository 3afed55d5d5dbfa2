package tensorfile

import (
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"math"
)

// Writer builds a file in memory, as tools/modelconv/etf.py does (the same
// input gives the same bytes); tests use it to make fixtures.
type Writer struct {
	meta    []byte
	tensors []wtensor
}

type wtensor struct {
	name  string
	dtype DType
	shape []int
	data  []byte
}

// NewWriter starts a file with the given JSON header.
func NewWriter(meta []byte) *Writer { return &Writer{meta: meta} }

// AddBytes adds a Bytes tensor.
func (w *Writer) AddBytes(name string, b []byte) {
	w.tensors = append(w.tensors, wtensor{name, Bytes, []int{len(b)}, append([]byte(nil), b...)})
}

// Add adds values of the given shape stored as dtype (Float32, Float16 or
// Int8Rows, quantised as the converter does: scale = max|row| / 127,
// q = round-half-even(x / scale)).
func (w *Writer) Add(name string, dtype DType, shape []int, v []float32) error {
	t := wtensor{name: name, dtype: dtype, shape: append([]int(nil), shape...)}
	if n := (&Tensor{Shape: shape}).Len(); n != len(v) {
		return fmt.Errorf("tensorfile: tensor %q: shape %v holds %d values, got %d", name, shape, n, len(v))
	}
	switch dtype {
	case Float32:
		t.data = make([]byte, 4*len(v))
		for i, x := range v {
			binary.LittleEndian.PutUint32(t.data[4*i:], math.Float32bits(x))
		}
	case Float16:
		t.data = make([]byte, 2*len(v))
		for i, x := range v {
			binary.LittleEndian.PutUint16(t.data[2*i:], FloatToHalf(x))
		}
	case Int8Rows:
		rows := (&Tensor{Shape: shape}).rows()
		cols := 0
		if rows > 0 {
			cols = len(v) / rows
		}
		t.data = make([]byte, 4*rows+len(v))
		for r := 0; r < rows; r++ {
			row := v[r*cols : (r+1)*cols]
			scale, q := QuantizeRow(row)
			binary.LittleEndian.PutUint32(t.data[4*r:], math.Float32bits(scale))
			for i, x := range q {
				t.data[4*rows+r*cols+i] = byte(x)
			}
		}
	default:
		return fmt.Errorf("tensorfile: cannot write dtype %v", dtype)
	}
	w.tensors = append(w.tensors, t)
	return nil
}

// QuantizeRow is the converter's int8 quantisation of one row.
func QuantizeRow(row []float32) (float32, []int8) {
	var amax float32
	for _, x := range row {
		amax = max(amax, float32(math.Abs(float64(x))))
	}
	scale := amax / 127
	q := make([]int8, len(row))
	if scale == 0 {
		return 0, q
	}
	for i, x := range row {
		v := math.RoundToEven(float64(x / scale))
		q[i] = int8(max(-127, min(127, v)))
	}
	return scale, q
}

// Bytes returns the encoded file.
func (w *Writer) Bytes() []byte {
	var out []byte
	out = append(out, Magic...)
	out = binary.LittleEndian.AppendUint32(out, Version)
	out = binary.LittleEndian.AppendUint32(out, uint32(len(w.meta)))
	out = append(out, w.meta...)
	out = binary.LittleEndian.AppendUint32(out, uint32(len(w.tensors)))
	dir := 0
	for _, t := range w.tensors {
		dir += 2 + len(t.name) + 2 + 4*len(t.shape) + 16
	}
	off := align(len(out) + dir)
	offs := make([]int, len(w.tensors))
	for i, t := range w.tensors {
		out = binary.LittleEndian.AppendUint16(out, uint16(len(t.name)))
		out = append(out, t.name...)
		out = append(out, byte(t.dtype), byte(len(t.shape)))
		for _, d := range t.shape {
			out = binary.LittleEndian.AppendUint32(out, uint32(d))
		}
		out = binary.LittleEndian.AppendUint64(out, uint64(off))
		out = binary.LittleEndian.AppendUint64(out, uint64(len(t.data)))
		offs[i] = off
		off = align(off + len(t.data))
	}
	for i, t := range w.tensors {
		out = append(out, make([]byte, offs[i]-len(out))...)
		out = append(out, t.data...)
	}
	return binary.LittleEndian.AppendUint32(out, crc32.ChecksumIEEE(out))
}

func align(n int) int { return (n + Align - 1) / Align * Align }
