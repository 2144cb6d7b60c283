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

	"github.com/mrtrkit/mrtrkit/internal/testkit/logbuf"
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

// TestReplace rotates the ring of a codec from the plain constructors:
// after Replace, tokens of the new first key open and it seals, a key
// still listed keeps opening, and a dropped key's tokens are refused.
func TestReplace(t *testing.T) {
	for _, cc := range codecCases {
		t.Run(cc.name, func(t *testing.T) {
			r, err := cc.make(testRing(t, "k1"))
			require.NoError(t, err)
			assert.Equal(t, []string{"k1"}, r.KeyIDs())
			// What mrtr.WithCodec holds: the interface sees every Replace.
			var served Codec = r
			old, err := r.Seal(reloadClaims())
			require.NoError(t, err)
			assert.Equal(t, "k1", sealedBy(t, old))

			// A replica that rotated first seals with k2, unknown here yet.
			ahead, err := cc.make(testRing(t, "k2", "k1"))
			require.NoError(t, err)
			early, err := ahead.Seal(reloadClaims())
			require.NoError(t, err)
			_, err = served.Open(early)
			requireReason(t, err, ReasonUnknownKey)

			// Rotate: k2 seals, k1 still opens.
			require.NoError(t, r.Replace(testRing(t, "k2", "k1")))
			assert.Equal(t, []string{"k2", "k1"}, r.KeyIDs())
			_, err = served.Open(early)
			require.NoError(t, err, "a token of the new key opens")
			_, err = served.Open(old)
			require.NoError(t, err, "a token of a key still listed opens")
			fresh, err := served.Seal(reloadClaims())
			require.NoError(t, err)
			assert.Equal(t, "k2", sealedBy(t, fresh))

			// Retire k1: its tokens stop opening, k2's still do.
			require.NoError(t, r.Replace(testRing(t, "k2")))
			_, err = served.Open(old)
			requireReason(t, err, ReasonUnknownKey)
			for _, tok := range []string{fresh, early} {
				_, err = served.Open(tok)
				require.NoError(t, err)
			}

			// A bad ring changes nothing.
			require.Error(t, r.Replace(nil))
			require.Error(t, r.Replace(&KeyRing{}))
			assert.Equal(t, []string{"k2"}, r.KeyIDs())
			_, err = served.Open(fresh)
			require.NoError(t, err)
		})
	}
}

// TestKeyIDsIsACopy: changing what KeyIDs returned changes nothing.
func TestKeyIDsIsACopy(t *testing.T) {
	r, err := NewAEAD(testRing(t, "k2", "k1"))
	require.NoError(t, err)
	ids := r.KeyIDs()
	ids[0] = "zz"
	assert.Equal(t, []string{"k2", "k1"}, r.KeyIDs())
}

// TestZeroRingCodec: a RingCodec not built by NewAEAD or NewHMAC takes no
// ring and has no keys.
func TestZeroRingCodec(t *testing.T) {
	var r RingCodec
	require.Error(t, r.Replace(testRing(t, "k1")))
	assert.Nil(t, r.KeyIDs())
}

func TestReplaceKeepsOptions(t *testing.T) {
	clock := newTestClock(t0)
	r, err := NewAEAD(testRing(t, "k1"), WithClock(clock.Now), WithTTL(time.Minute), WithPurpose("session"))
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

// TestReplaceMidStream seals and opens from many goroutines while the
// ring rotates underneath: every token opens, whichever ring sealed it,
// as long as its key is listed.
func TestReplaceMidStream(t *testing.T) {
	r, err := NewAEAD(testRing(t, "k1"))
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

func TestKeyRingFileReload(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "keys")
	require.NoError(t, os.WriteFile(path, []byte(ringText("k1")), 0o600))
	ring, err := LoadKeyRingFile(path)
	require.NoError(t, err)
	aead, err := NewAEAD(ring)
	require.NoError(t, err)
	session, err := NewHMAC(ring, WithPurpose("session"))
	require.NoError(t, err)
	logs := &logbuf.Buffer{}
	kf := NewKeyRingFile(path, slog.New(slog.NewTextHandler(logs, nil)), aead, session)

	old, _ := aead.Seal(reloadClaims())
	require.NoError(t, os.WriteFile(path, []byte(ringText("k2", "k1")), 0o600))
	changed, err := kf.Reload()
	require.NoError(t, err)
	assert.True(t, changed)
	changed, err = kf.Reload()
	require.NoError(t, err)
	assert.False(t, changed, "unchanged contents are not applied again")
	for _, c := range []*RingCodec{aead, session} {
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
	r, err := NewAEAD(testRing(t, "k1"))
	require.NoError(t, err)
	kf := NewKeyRingFile(path, slog.New(slog.NewTextHandler(&logbuf.Buffer{}, nil)), r)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- kf.Watch(ctx, 10*time.Millisecond) }()
	require.NoError(t, os.WriteFile(path, []byte(ringText("k2", "k1")), 0o600))
	require.Eventually(t, func() bool { return r.KeyIDs()[0] == "k2" }, 5*time.Second, 5*time.Millisecond)
	cancel()
	assert.ErrorIs(t, <-done, context.Canceled)
}
