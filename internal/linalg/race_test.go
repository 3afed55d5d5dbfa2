//go:build race

package linalg

// raceEnabled trims the exhaustive sweeps, which hold no goroutines, to keep
// `go test -race` quick; the parallel and concurrent tests run in full.
const raceEnabled = true
