package main

import (
	"os"
	"strconv"
	"syscall"
)

// lowerPriority sets the nice value of every thread of this process to n
// (Linux keeps one per thread; threads made later inherit their maker's).
// Children started before keep theirs.
func lowerPriority(n int) error { return setPriority("self", n) }

// setPriority sets the nice value of every thread of process pid ("self"
// for this one) to n.
func setPriority(pid string, n int) error {
	ents, err := os.ReadDir("/proc/" + pid + "/task")
	if err != nil {
		return err
	}
	var first error
	for _, e := range ents {
		tid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		if err := syscall.Setpriority(syscall.PRIO_PROCESS, tid, n); err != nil && first == nil {
			first = err
		}
	}
	return first
}
