package httpapi

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"

	"github.com/engram-memory/engram/internal/jsonerr"
)

// KeysFile is the JSON form of API keys, in a keys file or ENGRAM_API_KEYS:
// {"keys": [{"key": "…", "scope": {"team": "t1"}}]}.
type KeysFile struct {
	Keys []Key `json:"keys"`
}

// ParseKeys decodes a keys document strictly: unknown fields, a field given
// twice in one object and trailing data are refused. Each key's scope is checked by New.
func ParseKeys(data []byte) ([]Key, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	var f KeysFile
	if err := dec.Decode(&f); err != nil {
		return nil, fmt.Errorf("keys: %s", jsonError(err).Message)
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, errors.New("keys: more than one JSON value")
	}
	// encoding/json keeps the last of two "key" fields silently: a key file
	// must say one thing.
	if err := jsonerr.Duplicate(data); err != nil {
		return nil, fmt.Errorf("keys: %w", err)
	}
	if len(f.Keys) == 0 {
		return nil, errors.New(`keys: no keys (want {"keys": [{"key": "…", "scope": {"team": "t1"}}]})`)
	}
	return f.Keys, nil
}
