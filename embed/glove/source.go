package glove

import (
	_ "embed" // the built-in vectors
	"fmt"
	"sync"

	"github.com/engram-memory/engram/embed/glove/vecfile"
)

// glove100 is the built-in vector file, written by tools/gloveconv (see its
// README and the repository's NOTICE for the data's origin and licence). As a
// string it stays in the binary's read-only data; decoding references it in place.
//
//go:embed glove100.bin
var glove100 string

var builtin = &source{data: glove100}

// source is a vector file decoded once, shared by every embedder over it.
type source struct {
	data string

	once   sync.Once
	parsed bool // file and hdr were given, not decoded
	hdr    vecfile.Header
	file   *vecfile.File
	index  map[string]int32
	err    error
}

func (s *source) header() (vecfile.Header, error) {
	if s.parsed {
		return s.hdr, nil
	}
	h, err := vecfile.ParseHeader(s.data)
	if err != nil {
		return h, fmt.Errorf("glove: vector file header: %w", err)
	}
	return h, nil
}

// load decodes the file and indexes its words, once.
func (s *source) load() (*vecfile.File, map[string]int32, error) {
	s.once.Do(func() {
		if !s.parsed {
			f, err := vecfile.Parse(s.data)
			if err != nil {
				s.err = fmt.Errorf("glove: vector file: %w", err)
				return
			}
			s.file = f
		}
		s.index = make(map[string]int32, len(s.file.Words))
		for i, w := range s.file.Words {
			s.index[w] = int32(i)
		}
	})
	return s.file, s.index, s.err
}
