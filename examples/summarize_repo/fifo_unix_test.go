//go:build unix

package main

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// within runs f and fails the test if it has not returned after a few
// seconds (a blocked open never returns; the goroutine is left behind).
func within(t *testing.T, what string, f func()) {
	t.Helper()
	done := make(chan struct{})
	go func() {
		defer close(done)
		f()
	}()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		require.FailNow(t, fmt.Sprintf("%s did not return: blocked on a FIFO", what))
	}
}

// fifoTree is testTree with a FIFO at the top, one in a subdirectory, and
// links to both.
func fifoTree(t *testing.T) string {
	t.Helper()
	root := testTree(t)
	for _, p := range []string{"pipe", "sub/pipe"} {
		if err := syscall.Mkfifo(filepath.Join(root, filepath.FromSlash(p)), 0o644); err != nil {
			unavailable(t, "mkfifo: %v", err)
		}
	}
	for name, target := range map[string]string{"pipe-link": "pipe", "sub/pipe-link": "pipe"} {
		if err := os.Symlink(target, filepath.Join(root, filepath.FromSlash(name))); err != nil {
			unavailable(t, "symlink: %v", err)
		}
	}
	return root
}

// A FIFO, or a link to one, is neither listed nor read, and looking at it
// does not block.
func TestFIFOIsNotOpened(t *testing.T) {
	r := openTestRepo(t, fifoTree(t), Limits{})
	within(t, "List", func() {
		l, err := r.List()
		if err != nil {
			assert.Fail(t, fmt.Sprint(err))
			return
		}
		for _, p := range []string{"pipe", "pipe-link", "sub/pipe", "sub/pipe-link"} {
			assert.Falsef(t, slices.Contains(l.Paths, p), "listing holds %s: %q", p, l.Paths)
		}
		assert.Falsef(t, !slices.Contains(l.Paths, "README.md") || !slices.Contains(l.Paths, "sub/a.txt"), "listing lost the text files: %q", l.Paths)
	})
	for _, p := range []string{"pipe", "pipe-link", "sub/pipe", "sub/pipe-link"} {
		within(t, "Read("+p+")", func() {
			if _, err := r.Read(p, 100); !errors.Is(err, ErrNotEligible) {
				assert.Fail(t, fmt.Sprintf("Read(%q) = %v, want ErrNotEligible", p, err))
			}
		})
	}
}

// What check and the walk open with does not wait for a FIFO's writer, so
// a FIFO swapped in after the file was looked at cannot block either.
func TestOpenFlagsDoNotBlockOnFIFO(t *testing.T) {
	r := openTestRepo(t, fifoTree(t), Limits{})
	within(t, "OpenFile", func() {
		f, err := r.root.OpenFile("pipe", openFlags, 0)
		if err != nil {
			assert.Fail(t, fmt.Sprint(err))
			return
		}
		f.Close()
	})
	// A directory swapped for a FIFO during a walk.
	within(t, "readDir", func() {
		n := 0
		if _, err := r.readDir("pipe", &n); err == nil {
			assert.Fail(t, "readDir of a FIFO succeeded")
		}
	})
}
