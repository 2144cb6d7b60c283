//go:build linux || darwin || freebsd || netbsd || openbsd || dragonfly

package main

import (
	"syscall"
	"time"
)

// cpuTimes is CPU time spent by a process in user and kernel mode.
type cpuTimes struct {
	user, sys time.Duration
}

// processCPU returns the CPU time of the calling process, all threads
// included. On Linux the sum of the two is exact (the kernel scales its
// sampled user/system split to the precise runtime it accounts).
func processCPU() (cpuTimes, error) {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return cpuTimes{}, err
	}
	return cpuTimes{user: time.Duration(ru.Utime.Nano()), sys: time.Duration(ru.Stime.Nano())}, nil
}
