//go:build unix

package state

import (
	"context"
	"log/slog"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/mrtrkit/mrtrkit/internal/testkit/logbuf"
)

func TestKeyRingFileWatchSIGHUP(t *testing.T) {
	// This test's own handler keeps a SIGHUP from ending the process
	// before Watch has registered its own.
	guard := make(chan os.Signal, 16)
	signal.Notify(guard, syscall.SIGHUP)
	defer signal.Stop(guard)

	path := filepath.Join(t.TempDir(), "keys")
	require.NoError(t, os.WriteFile(path, []byte(ringText("k2", "k1")), 0o600))
	r, err := NewAEAD(testRing(t, "k1"))
	require.NoError(t, err)
	kf := NewKeyRingFile(path, slog.New(slog.NewTextHandler(&logbuf.Buffer{}, nil)), r)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go kf.Watch(ctx, 0) // signals only
	require.Eventually(t, func() bool {
		syscall.Kill(os.Getpid(), syscall.SIGHUP)
		time.Sleep(5 * time.Millisecond)
		return r.KeyIDs()[0] == "k2"
	}, 5*time.Second, 20*time.Millisecond)
}
