package testkit

import (
	"io"
	"log/slog"

	"github.com/mrtrkit/mrtrkit/internal/testkit/logbuf"
)

// LogBuffer collects log output written from concurrent handlers (package
// logbuf's Buffer, named here for the tests that already import testkit).
// Its zero value is empty and ready to use.
type LogBuffer = logbuf.Buffer

// Logger returns a logger writing records at level and above to w in the
// slog text format.
func Logger(w io.Writer, level slog.Level) *slog.Logger {
	return slog.New(slog.NewTextHandler(w, &slog.HandlerOptions{Level: level}))
}
