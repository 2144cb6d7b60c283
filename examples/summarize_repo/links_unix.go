//go:build unix

package main

import (
	"io/fs"
	"syscall"
)

// linkCount is how many hard links (names) the file has; 1 when the
// system does not say.
func linkCount(info fs.FileInfo) uint64 {
	if st, ok := info.Sys().(*syscall.Stat_t); ok {
		return uint64(st.Nlink)
	}
	return 1
}
