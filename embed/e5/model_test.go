package e5

import (
	"context"
	"encoding/binary"
	"math"
	"strings"
	"testing"

	"github.com/engram-memory/engram/internal/tensorfile"
)

// TestDequantize checks the Q4_0 decoder against the format's definition
// read value by value: value i of a block is nibble i%16 of byte i%16 (low
// for i < 16, high after) less 8, times the block's scale.
func TestDequantize(t *testing.T) {
	var q []byte
	for b := range 3 {
		q = append(q, 0, 0)
		binary.LittleEndian.PutUint16(q[len(q)-2:], []uint16{0x3c00, 0xb555, 0x0001}[b]) // 1, -0.33…, a subnormal
		for j := range 16 {
			q = append(q, byte(j*17+b*5))
		}
	}
	got := make([]float32, 3*blockLen)
	dequantize(got, string(q))
	for i := range got {
		blk := q[i/blockLen*blockSize:]
		d := float64(tensorfile.HalfToFloat(binary.LittleEndian.Uint16(blk)))
		nib := int(blk[2+i%16]) >> (4 * (i % blockLen / 16)) & 15
		if want := float32(float64(nib-8) * d); got[i] != want {
			t.Errorf("value %d: %g, want %g", i, got[i], want)
		}
	}
}

// tiny writes a model file in the E5S1 layout with the given shape and
// deterministic weights, for the parser's and encoder's tests.
func tiny() []byte {
	le := binary.LittleEndian
	var b []byte
	i32 := func(v int) { b = le.AppendUint32(b, uint32(int32(v))) }
	h, ff, vocab, maxPos := 32, 64, 6, 8
	b = append(b, magic...)
	i32(1)
	for _, v := range []int{h, 1, 2, ff, vocab, maxPos, 1} {
		i32(v)
	}
	b = le.AppendUint32(b, math.Float32bits(1e-5))
	i32(blockLen)
	pieces := []string{"<s>", "<pad>", "</s>", "<unk>", "▁", "▁a"}
	i32(len(pieces))
	for _, v := range []int{0, 2, 1, 3} {
		i32(v)
	}
	b = le.AppendUint64(b, uint64(len(strings.Join(pieces, ""))))
	off := 0
	for _, p := range pieces {
		i32(off)
		off += len(p)
	}
	i32(off)
	for i := range pieces {
		b = le.AppendUint32(b, math.Float32bits(-float32(i)))
	}
	b = append(b, strings.Join(pieces, "")...)
	i32(1) // normaliser: tab → space
	i32(4 + 1 + 4)
	b = append(le.AppendUint32(b, '\t'), 1)
	b = le.AppendUint32(b, ' ')
	type ent struct {
		name  string
		dtype byte
		n     int
	}
	ents := []ent{{"emb.word", dtQ4, vocab * h}, {"emb.pos", dtF32, maxPos * h}, {"emb.type", dtF32, h},
		{"emb.ln.w", dtF32, h}, {"emb.ln.b", dtF32, h}}
	for _, s := range []struct {
		name string
		n    int
	}{{"q", h * h}, {"k", h * h}, {"v", h * h}, {"ao", h * h}, {"fi", ff * h}, {"fo", h * ff}} {
		bias := h
		if s.name == "fi" {
			bias = ff
		}
		ents = append(ents, ent{"l0." + s.name + ".w", dtQ4, s.n}, ent{"l0." + s.name + ".b", dtF32, bias})
	}
	for _, s := range []string{"aln.w", "aln.b", "oln.w", "oln.b"} {
		ents = append(ents, ent{"l0." + s, dtF32, h})
	}
	dirLen := 4
	for _, e := range ents {
		dirLen += 2 + len(e.name) + 1 + 4 + 16
	}
	data := len(b) + dirLen
	i32(len(ents))
	var blob []byte
	seed := uint32(1)
	next := func() uint32 { seed = seed*1664525 + 1013904223; return seed >> 8 }
	for _, e := range ents {
		var t []byte
		if e.dtype == dtF32 {
			for range e.n {
				v := float32(next()%2001)/1000 - 1
				if strings.HasSuffix(e.name, "ln.w") {
					v = 1 + v/4
				}
				t = le.AppendUint32(t, math.Float32bits(v))
			}
		} else {
			for range e.n / blockLen {
				t = le.AppendUint16(t, 0x2c00) // 1/16
				for range 16 {
					t = append(t, byte(next()))
				}
			}
		}
		b = le.AppendUint16(b, uint16(len(e.name)))
		b = append(b, e.name...)
		b = append(b, e.dtype)
		b = le.AppendUint32(b, uint32(e.n))
		b = le.AppendUint64(b, uint64(data+len(blob)))
		b = le.AppendUint64(b, uint64(len(t)))
		blob = append(blob, t...)
	}
	return append(b, blob...)
}

func TestTinyModel(t *testing.T) {
	e, err := NewFromData(string(tiny()), Options{})
	if err != nil {
		t.Fatal(err)
	}
	if got := e.Tokenize("a\ta", false); len(got) < 3 || got[0] != 0 || got[len(got)-1] != 2 {
		t.Errorf("Tokenize = %v", got)
	}
	vs, err := e.EmbedQuery(context.Background(), []string{"a a", ""})
	if err != nil {
		t.Fatal(err)
	}
	for _, v := range vs {
		if len(v) != 32 || math.Abs(float64(dot(v, v))-1) > 1e-5 {
			t.Errorf("vector of length %d, norm² %g", len(v), dot(v, v))
		}
	}
}

func dot(a, b []float32) float32 {
	var s float32
	for i := range a {
		s += a[i] * b[i]
	}
	return s
}

// TestParseTruncated: a model file cut anywhere is one error, not a panic.
func TestParseTruncated(t *testing.T) {
	full := tiny()
	for n := 0; n < len(full); n += 1 + n/16 {
		if _, err := NewFromData(string(full[:n]), Options{}); err == nil {
			// Cut inside the last tensor's data is caught by its bounds check;
			// nothing shorter than the whole file parses.
			t.Errorf("file cut at %d of %d bytes parsed", n, len(full))
		}
	}
}

// FuzzParse: any bytes give a model or an error, never a panic; a model
// that parses embeds without one.
func FuzzParse(f *testing.F) {
	full := tiny()
	f.Add(full)
	f.Add(full[:100])
	f.Fuzz(func(t *testing.T, b []byte) {
		e, err := NewFromData(string(b), Options{})
		if err != nil {
			return
		}
		if _, err := e.Embed(context.Background(), []string{"a", "\t"}); err != nil {
			return
		}
	})
}

// FuzzTokenize: on the real model, no panic, every id a word-embedding row,
// <s> first and </s> last, at most one id per normalised character (the
// normaliser writes at most 18 for one, and a character takes 2 bytes or more
// past ASCII).
func FuzzTokenize(f *testing.F) {
	e, err := Default()
	if err != nil {
		f.Fatal(err)
	}
	for _, s := range []string{"", "如何在 MySQL 中创建只读用户？", "\xff\xfe\x00", "ﷺ", "  a  ", "<s></s>"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		ids := e.Tokenize(s, true)
		if len(ids) < 3 || len(ids) > 3+len(QueryPrefix)+9*len(s) || ids[0] != e.f.bos || ids[len(ids)-1] != e.f.eos {
			t.Fatalf("%d ids for %d bytes: %v", len(ids), len(s), ids)
		}
		for _, id := range ids {
			if id < 0 || int(id) >= e.f.cfg.Vocab {
				t.Fatalf("id %d out of range", id)
			}
		}
	})
}
