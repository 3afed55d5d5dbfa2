package backend

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
)

// OpenFunc opens (creating if need be) the store a location names, such as
// weaviate://localhost:8080?class=Memory.
type OpenFunc func(ctx context.Context, location string) (Backend, error)

var (
	driversMu sync.RWMutex
	drivers   = map[string]OpenFunc{}
)

// Register makes a backend openable by the URL scheme of its locations
// ("weaviate" for weaviate://…), as database/sql's drivers register by name:
// a backend package calls it from init, so a program that imports the package
// (even as _) can open such a store. Registering a scheme twice, an invalid
// scheme or a nil OpenFunc panics: it is a program's mistake, made at start.
func Register(scheme string, open OpenFunc) {
	if !validScheme(scheme) {
		panic(fmt.Sprintf("backend: Register of invalid scheme %q", scheme))
	}
	if open == nil {
		panic("backend: Register of a nil OpenFunc for " + scheme)
	}
	driversMu.Lock()
	defer driversMu.Unlock()
	if _, dup := drivers[scheme]; dup {
		panic("backend: Register called twice for " + scheme)
	}
	drivers[scheme] = open
}

// Schemes lists the registered schemes, sorted.
func Schemes() []string {
	driversMu.RLock()
	defer driversMu.RUnlock()
	out := make([]string, 0, len(drivers))
	for s := range drivers {
		out = append(out, s)
	}
	slices.Sort(out)
	return out
}

// Scheme returns the URL scheme of a location, lower-cased ("weaviate" for
// weaviate://host), or "" for a location that is not scheme://… (a file
// path, including C:\… and relative paths with colons in them).
func Scheme(location string) string {
	s, _, ok := strings.Cut(strings.TrimSpace(location), "://")
	if !ok || !validScheme(strings.ToLower(s)) {
		return ""
	}
	return strings.ToLower(s)
}

// validScheme is RFC 3986's scheme syntax, lower case.
func validScheme(s string) bool {
	if s == "" || s[0] < 'a' || s[0] > 'z' {
		return false
	}
	for _, c := range s[1:] {
		if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '+' || c == '-' || c == '.') {
			return false
		}
	}
	return true
}

// Open opens the store a location names with the backend registered for its
// scheme. A scheme no imported package registered is an error that names the
// registered ones.
func Open(ctx context.Context, location string) (Backend, error) {
	scheme := Scheme(location)
	if scheme == "" {
		return nil, fmt.Errorf("open %q: not a URL (scheme://…)", location)
	}
	driversMu.RLock()
	open := drivers[scheme]
	driversMu.RUnlock()
	if open == nil {
		have := strings.Join(Schemes(), ", ")
		if have == "" {
			have = "none"
		}
		return nil, fmt.Errorf("open %s://…: no backend registered for scheme %q (registered: %s); import the backend's package, e.g. _ \"github.com/engram-memory/engram/backend/%s\"", scheme, scheme, have, scheme)
	}
	return open(ctx, location)
}
