package state

import (
	"context"
	"encoding/base64"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// sealedBy returns the id of the key that sealed token.
func sealedBy(t *testing.T, token string) string {
	t.Helper()
	frame, err := base64.RawURLEncoding.DecodeString(token)
	require.NoError(t, err)
	return string(frame[frameFixed : frameFixed+int(frame[2])])
}

// ringText writes ids as a key ring file body, first sealing.
func ringText(ids ...string) string {
	var b strings.Builder
	b.WriteString("# test ring\n")
	for _, id := range ids {
		b.WriteString(id + ":" + base64.StdEncoding.EncodeToString(testSecret(id[len(id)-1])) + "\n")
	}
	return b.String()
}

// reloadClaims are claims any test codec seals.
func reloadClaims() Claims {
	return Claims{Principal: "p", Audience: "a", Method: "tools/call", Target: "t", Round: 1}
}

func TestReloadableReplace(t *testing.T) {
	for _, tc := range []struct {
		name string
		make func(*KeyRing, ...Option) (*Reloadable, error)
	}{{"aead", NewReloadableAEAD}, {"hmac", NewReloadableHMAC}} {
		t.Run(tc.name, func(t *testing.T) {
			r, err := tc.make(testRing(t, "k1"))
			require.NoError(t, err)
			old, err := r.Seal(reloadClaims())
			require.NoError(t, err)
			assert.Equal(t, "k1", sealedBy(t, old))

			// Rotate: k2 seals, k1 still opens.
			require.NoError(t, r.Replace(testRing(t, "k2", "k1")))
			assert.Equal(t, []string{"k2", "k1"}, r.KeyIDs())
			_, err = r.Open(old)
			require.NoError(t, err, "a token of a key still listed opens")
			fresh, err := r.Seal(reloadClaims())
			require.NoError(t, err)
			assert.Equal(t, "k2", sealedBy(t, fresh))

			// Retire k1: its tokens stop opening, k2's still do.
			require.NoError(t, r.Replace(testRing(t, "k2")))
			_, err = r.Open(old)
			reason, _ := ReasonOf(err)
			assert.Equal(t, ReasonUnknownKey, reason)
			_, err = r.Open(fresh)
			require.NoError(t, err)

			// A bad ring changes nothing.
			require.Error(t, r.Replace(nil))
			assert.Equal(t, []string{"k2"}, r.KeyIDs())
		})
	}
}

func TestReloadableOptionsKept(t *testing.T) {
	clock := newTestClock(t0)
	r, err := NewReloadableAEAD(testRing(t, "k1"), WithClock(clock.Now), WithTTL(time.Minute), WithPurpose("session"))
	require.NoError(t, err)
	require.NoError(t, r.Replace(testRing(t, "k2")))
	tok, err := r.Seal(reloadClaims())
	require.NoError(t, err)
	c, err := r.Open(tok)
	require.NoError(t, err)
	assert.Equal(t, time.Minute, c.ExpiresAt.Sub(c.IssuedAt))
	plain, err := NewAEAD(testRing(t, "k2"), WithClock(clock.Now))
	require.NoError(t, err)
	_, err = plain.Open(tok)
	require.Error(t, err, "the purpose survives a Replace")
}

// TestReloadableMidStream seals and opens from many goroutines while the
// ring rotates underneath: every token opens, whichever ring sealed it,
// as long as its key is listed.
func TestReloadableMidStream(t *testing.T) {
	r, err := NewReloadableAEAD(testRing(t, "k1"))
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	for range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for ctx.Err() == nil {
				tok, err := r.Seal(reloadClaims())
				if err == nil {
					_, err = r.Open(tok)
				}
				if err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	for i := range 50 {
		if i%2 == 0 {
			require.NoError(t, r.Replace(testRing(t, "k2", "k1")))
		} else {
			require.NoError(t, r.Replace(testRing(t, "k1", "k2")))
		}
		time.Sleep(time.Millisecond)
	}
	cancel()
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
}

type logSink struct {
	mu sync.Mutex
	b  strings.Builder
}

func (l *logSink) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *logSink) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

func TestKeyRingFileReload(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "keys")
	require.NoError(t, os.WriteFile(path, []byte(ringText("k1")), 0o600))
	ring, err := LoadKeyRingFile(path)
	require.NoError(t, err)
	aead, err := NewReloadableAEAD(ring)
	require.NoError(t, err)
	session, err := NewReloadableHMAC(ring, WithPurpose("session"))
	require.NoError(t, err)
	logs := &logSink{}
	kf := NewKeyRingFile(path, slog.New(slog.NewTextHandler(logs, nil)), aead, session)

	old, _ := aead.Seal(reloadClaims())
	require.NoError(t, os.WriteFile(path, []byte(ringText("k2", "k1")), 0o600))
	changed, err := kf.Reload()
	require.NoError(t, err)
	assert.True(t, changed)
	changed, err = kf.Reload()
	require.NoError(t, err)
	assert.False(t, changed, "unchanged contents are not applied again")
	for _, c := range []*Reloadable{aead, session} {
		assert.Equal(t, []string{"k2", "k1"}, c.KeyIDs())
		tok, err := c.Seal(reloadClaims())
		require.NoError(t, err)
		assert.Equal(t, "k2", sealedBy(t, tok))
	}
	_, err = aead.Open(old)
	require.NoError(t, err)

	// A bad file keeps the ring and says why, without the secret.
	bad := "k3:" + base64.StdEncoding.EncodeToString([]byte("too short")) + "\n"
	require.NoError(t, os.WriteFile(path, []byte(bad), 0o600))
	_, err = kf.Reload()
	require.Error(t, err)
	assert.Equal(t, []string{"k2", "k1"}, aead.KeyIDs())
	assert.Contains(t, logs.String(), "key ring not reloaded")
	assert.NotContains(t, logs.String(), base64.StdEncoding.EncodeToString([]byte("too short")))
	require.NoError(t, os.Remove(path))
	_, err = kf.Reload()
	require.Error(t, err)
	assert.Equal(t, []string{"k2", "k1"}, aead.KeyIDs())
}

func TestKeyRingFileWatchPolls(t *testing.T) {
	path := filepath.Join(t.TempDir(), "keys")
	require.NoError(t, os.WriteFile(path, []byte(ringText("k1")), 0o600))
	r, err := NewReloadableAEAD(testRing(t, "k1"))
	require.NoError(t, err)
	kf := NewKeyRingFile(path, slog.New(slog.NewTextHandler(&logSink{}, nil)), r)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- kf.Watch(ctx, 10*time.Millisecond) }()
	require.NoError(t, os.WriteFile(path, []byte(ringText("k2", "k1")), 0o600))
	require.Eventually(t, func() bool { return r.KeyIDs()[0] == "k2" }, 5*time.Second, 5*time.Millisecond)
	cancel()
	assert.ErrorIs(t, <-done, context.Canceled)
}
