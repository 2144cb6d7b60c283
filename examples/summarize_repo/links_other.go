//go:build !unix

package main

import "io/fs"

// linkCount is 1 where os.File.Stat does not report hard links (Windows
// keeps them in another call); hard links there are not refused.
func linkCount(fs.FileInfo) uint64 { return 1 }
