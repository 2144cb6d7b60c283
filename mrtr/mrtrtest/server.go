package mrtrtest

import (
	"bytes"
	"log/slog"
	"sync"
	"testing"

	"github.com/mrtrkit/mrtrkit/discover"
	"github.com/mrtrkit/mrtrkit/mrtr"
	"github.com/mrtrkit/mrtrkit/state"
)

// NewServer returns a Server for a test: named name at version "test",
// serving the protocol versions mrtr.New serves, with a requestState key
// made for it (no warning about missing keys) and a logger that writes
// warnings and errors to t's log, shown when the test fails or runs with
// -v. opts are applied after these and may replace them. It fails the
// test when the Server cannot be built.
func NewServer(t testing.TB, name string, opts ...mrtr.Option) *mrtr.Server {
	t.Helper()
	return NewServerDesc(t, discover.Description{
		Server:         discover.Implementation{Name: name, Version: "test"},
		LegacyVersions: []string{"2025-11-25", "2025-06-18"},
	}, opts...)
}

// NewServerDesc is NewServer for a full description.
func NewServerDesc(t testing.TB, desc discover.Description, opts ...mrtr.Option) *mrtr.Server {
	t.Helper()
	ring, err := state.GenerateKeyRing()
	if err != nil {
		t.Fatalf("mrtrtest: %v", err)
	}
	codec, err := state.NewAEAD(ring)
	if err != nil {
		t.Fatalf("mrtrtest: %v", err)
	}
	base := []mrtr.Option{mrtr.WithCodec(codec), mrtr.WithLogger(TestLogger(t))}
	srv, err := mrtr.NewServer(desc, append(base, opts...)...)
	if err != nil {
		t.Fatalf("mrtrtest: %v", err)
	}
	return srv
}

// TestLogger returns a logger that writes records at warning level and
// above to t's log until the test ends, and nothing after (a server's
// goroutines may log past the end of a test).
func TestLogger(t testing.TB) *slog.Logger {
	w := &testWriter{t: t}
	t.Cleanup(w.close)
	return slog.New(slog.NewTextHandler(w, &slog.HandlerOptions{Level: slog.LevelWarn}))
}

type testWriter struct {
	mu   sync.Mutex
	t    testing.TB
	done bool
}

func (w *testWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if !w.done {
		w.t.Log(string(bytes.TrimRight(p, "\n")))
	}
	return len(p), nil
}

func (w *testWriter) close() {
	w.mu.Lock()
	w.done = true
	w.mu.Unlock()
}
