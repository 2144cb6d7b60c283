package state

import (
	"context"
	"crypto/sha256"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"sync"
	"syscall"
	"time"
)

// KeyRingFile keeps codecs (from NewAEAD or NewHMAC) in step with a key
// ring file (the LoadKeyRingFile syntax). Reload reads the file again;
// Watch reloads on SIGHUP and, when asked, whenever the file's contents
// change. A file that cannot be read or parsed leaves every codec with the
// ring it had, and the error is logged.
//
// Files are watched by polling their contents, which works the same on
// every platform and with the atomic symbolic-link swaps of mounted
// secret volumes; a poll costs one read of a small file.
type KeyRingFile struct {
	path   string
	log    *slog.Logger
	codecs []*RingCodec

	mu   sync.Mutex
	last [sha256.Size]byte // digest of the contents last applied
	have bool
}

// NewKeyRingFile returns a KeyRingFile that reloads codecs from path and
// logs to log (slog.Default() when nil). It does not read the file:
// build the codecs from LoadKeyRingFile first, then call Watch.
func NewKeyRingFile(path string, log *slog.Logger, codecs ...*RingCodec) *KeyRingFile {
	if log == nil {
		log = slog.Default()
	}
	return &KeyRingFile{path: path, log: log, codecs: append([]*RingCodec(nil), codecs...)}
}

// Reload reads the file and gives its ring to every codec. It reports
// whether the ring changed: contents identical to those last applied are
// not applied again. On error nothing changes, and the error, which never
// quotes a secret, is logged and returned.
func (f *KeyRingFile) Reload() (bool, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	changed, err := f.reloadLocked()
	if err != nil {
		f.log.Error("state: key ring not reloaded; the keys in use are kept", "file", f.path, "err", err)
	}
	return changed, err
}

func (f *KeyRingFile) reloadLocked() (bool, error) {
	data, err := readKeyFile(f.path)
	if err != nil {
		return false, err
	}
	defer clear(data)
	sum := sha256.Sum256(data)
	if f.have && sum == f.last {
		return false, nil
	}
	ring, err := parseKeyRingText(data, f.path)
	if err != nil {
		return false, err
	}
	// Every codec is built before any is swapped, so that a ring one
	// codec refuses leaves them all as they were.
	built := make([]*codec, len(f.codecs))
	for i, c := range f.codecs {
		if built[i], err = newCodec(ring, c.alg, c.opts); err != nil {
			return false, err
		}
	}
	for i, c := range f.codecs {
		c.cur.Store(built[i])
	}
	ids := ring.IDs()
	clearKeys(ring.keys)
	f.last, f.have = sum, true
	f.log.Info("state: key ring reloaded", "file", f.path, "keys", ids)
	return true, nil
}

// readKeyFile reads a key ring file of at most maxKeyFileSize bytes.
func readKeyFile(path string) ([]byte, error) {
	fh, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("state: key ring file: %w", err)
	}
	defer fh.Close()
	data, err := io.ReadAll(io.LimitReader(fh, maxKeyFileSize+1))
	if err != nil {
		return nil, fmt.Errorf("state: key ring file %s: %w", path, err)
	}
	if len(data) > maxKeyFileSize {
		clear(data)
		return nil, fmt.Errorf("state: key ring file %s: larger than %d bytes", path, maxKeyFileSize)
	}
	return data, nil
}

// Watch reloads the file on every SIGHUP and, when every is positive,
// whenever a poll every that often finds its contents changed, until ctx
// is done; it returns ctx.Err(). The first Reload of a KeyRingFile
// applies the file whatever it holds, so a file that changed between the
// codecs' construction and Watch is picked up by the first poll.
func (f *KeyRingFile) Watch(ctx context.Context, every time.Duration) error {
	hup := make(chan os.Signal, 1)
	signal.Notify(hup, syscall.SIGHUP)
	defer signal.Stop(hup)
	var tick <-chan time.Time
	if every > 0 {
		t := time.NewTicker(every)
		defer t.Stop()
		tick = t.C
	}
	for {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-hup:
			f.Reload()
		case <-tick:
			f.Reload()
		}
	}
}
