//go:build unix

package main

import (
	"os"
	"syscall"
)

// openFlags opens without blocking: opening a FIFO for reading would
// otherwise wait for a writer, holding the call and an OS thread forever.
// O_NONBLOCK does not change reads of regular files.
const openFlags = os.O_RDONLY | syscall.O_NONBLOCK
