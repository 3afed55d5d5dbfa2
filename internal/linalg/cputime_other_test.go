//go:build !linux

package linalg

import "time"

func threadCPU() time.Duration { return 0 }

func processCPU() time.Duration { return 0 }
