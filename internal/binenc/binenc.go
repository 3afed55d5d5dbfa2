// Package binenc is a small little-endian binary codec for index snapshots: a
// Writer and a Reader over buffered streams with sticky errors, so callers write
// or read a whole structure and check one error at the end. Both keep a running
// CRC-32C (Castagnoli) of every byte that passes through, which Finish writes as
// a trailer and Verify checks.
package binenc

import (
	"errors"
	"hash/crc32"
)

// ErrCorrupt is the error of a Reader that met input it cannot decode: a length
// longer than the remaining input, a bad trailer, or trailing data.
var ErrCorrupt = errors.New("binenc: corrupt input")

// castagnoli is the CRC-32C table (hardware accelerated on amd64 and arm64):
// made on first use, not in every process's package init (it takes a few
// hundred microseconds), by crc32 once for all its callers.
func castagnoli() *crc32.Table { return crc32.MakeTable(crc32.Castagnoli) }

// TrailerSize is the number of bytes Finish appends: the CRC-32C of the rest.
const TrailerSize = 4
