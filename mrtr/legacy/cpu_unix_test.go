//go:build unix

package legacy

import (
	"syscall"
	"time"
)

// processCPU returns the CPU time the process has used, all threads (the
// garbage collector's included): a measure of work that a busy machine
// disturbs far less than the wall clock.
func processCPU() time.Duration {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
