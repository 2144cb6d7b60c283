package main

import (
	"bytes"
	"os"
	"strconv"
	"time"
)

// userHZ is the unit of /proc/stat: clock ticks of 1/100 s on every Linux
// architecture Go supports.
const userHZ = 100

// machineBusy returns the CPU time all processes of the machine have spent
// running, from the "cpu" line of /proc/stat (user, nice, system, irq and
// softirq; idle, iowait and steal are not busy). ok is false where
// /proc/stat cannot be read.
func machineBusy() (busy time.Duration, ok bool) {
	b, err := os.ReadFile("/proc/stat")
	if err != nil {
		return 0, false
	}
	line, _, _ := bytes.Cut(b, []byte("\n"))
	f := bytes.Fields(line)
	if len(f) < 8 || string(f[0]) != "cpu" {
		return 0, false
	}
	var ticks int64
	// user nice system idle iowait irq softirq ...
	for _, i := range []int{1, 2, 3, 6, 7} {
		n, err := strconv.ParseInt(string(f[i]), 10, 64)
		if err != nil {
			return 0, false
		}
		ticks += n
	}
	return time.Duration(ticks) * time.Second / userHZ, true
}
