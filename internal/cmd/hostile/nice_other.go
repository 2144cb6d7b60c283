//go:build unix && !linux

package main

import (
	"strconv"
	"syscall"
)

// lowerPriority sets the nice value of this process to n.
func lowerPriority(n int) error {
	return syscall.Setpriority(syscall.PRIO_PROCESS, 0, n)
}

// setPriority sets the nice value of process pid ("self" for this one) to
// n.
func setPriority(pid string, n int) error {
	id := 0
	if pid != "self" {
		var err error
		if id, err = strconv.Atoi(pid); err != nil {
			return err
		}
	}
	return syscall.Setpriority(syscall.PRIO_PROCESS, id, n)
}
