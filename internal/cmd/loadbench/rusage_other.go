//go:build !(linux || darwin || freebsd || netbsd || openbsd || dragonfly)

package main

import (
	"errors"
	"time"
)

// cpuTimes is CPU time spent by a process in user and kernel mode.
type cpuTimes struct {
	user, sys time.Duration
}

// processCPU is not available here: loadbench reads CPU time with
// getrusage(2).
func processCPU() (cpuTimes, error) {
	return cpuTimes{}, errors.New("loadbench measures CPU time with getrusage, which this system lacks")
}
