// Package logbuf holds a buffer that collects log output, or a process's
// stderr, from concurrent writers while a test reads it. It imports
// nothing of mrtrkit, so that the tests of every package, state's
// included, and the harness commands can use it (testkit itself imports
// mrtr, which imports state).
package logbuf

import (
	"bytes"
	"io"
	"sync"
)

// Buffer collects what concurrent writers write. Its zero value is empty
// and ready to use.
type Buffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

var _ io.Writer = (*Buffer)(nil)

// Write appends p to the buffer.
func (l *Buffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

// String returns everything written since the last Reset.
func (l *Buffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// Reset empties the buffer.
func (l *Buffer) Reset() {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.b.Reset()
}
