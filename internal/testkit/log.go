package testkit

import (
	"bytes"
	"io"
	"log/slog"
	"sync"
)

// LogBuffer collects log output written from concurrent handlers. Its
// zero value is empty and ready to use.
type LogBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

var _ io.Writer = (*LogBuffer)(nil)

// Write appends p to the buffer.
func (l *LogBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

// String returns everything written since the last Reset.
func (l *LogBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// Reset empties the buffer.
func (l *LogBuffer) Reset() {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.b.Reset()
}

// Logger returns a logger writing records at level and above to w in the
// slog text format.
func Logger(w io.Writer, level slog.Level) *slog.Logger {
	return slog.New(slog.NewTextHandler(w, &slog.HandlerOptions{Level: level}))
}
