//go:build !unix

package main

import "os"

// openFlags: outside Unix there are no FIFOs to open by path here.
const openFlags = os.O_RDONLY
