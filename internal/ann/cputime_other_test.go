//go:build !unix

package ann

import "time"

// cpuTime is unknown here: the harness reports zero CPU time.
func cpuTime() time.Duration { return 0 }
