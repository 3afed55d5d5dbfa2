package e5

import (
	"testing"

	"github.com/engram-memory/engram/internal/golden"
	"github.com/engram-memory/engram/internal/spm"
)

// TestPieceTable checks multilingual-e5-small-q4.spt, the piece lookup table
// the built-in model's process uses in place, against the one built from
// the model file's pieces; go test -update rewrites it.
func TestPieceTable(t *testing.T) {
	f, err := parse(model, "")
	if err != nil {
		t.Fatal(err)
	}
	golden.CheckBytes(t, "multilingual-e5-small-q4.spt", []byte(spm.Table(f.vocab.Pieces, f.vocab.Unknown)))
}

// TestPieceTableTokenizes: the built-in model's tokenizer, over the table
// made ahead, gives every text of the reference set the ids the one built
// from the pieces gives.
func TestPieceTableTokenizes(t *testing.T) {
	built, err := parse(model, "")
	if err != nil {
		t.Fatal(err)
	}
	ahead, err := parse(model, pieceTable)
	if err != nil {
		t.Fatal(err)
	}
	texts := []string{"", " ", "which colour scheme does the user like", "如何在 MySQL 中创建只读用户？",
		"界面外观他偏好亮的还是黑的？", "日本語のテキスト、カタカナ", "한국어 문장입니다", "tasks_claim SEAMLESS_DATA_DIR=/var/lib",
		"Ünïcödé àccents — and “quotes”", "\x00\xff\xfe bytes", "emoji 🙂 and ZWJ 👩‍💻"}
	for _, text := range texts {
		a, b := built.tok.Encode(nil, text), ahead.tok.Encode(nil, text)
		if len(a) != len(b) {
			t.Fatalf("%q: %v built, %v ahead", text, a, b)
		}
		for i := range a {
			if a[i] != b[i] {
				t.Fatalf("%q: %v built, %v ahead", text, a, b)
			}
		}
	}
}
