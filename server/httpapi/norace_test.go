//go:build !race

package httpapi

// raceEnabled shortens the load test under the race detector.
const raceEnabled = false
