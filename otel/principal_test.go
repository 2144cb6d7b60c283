package otelmrtr_test

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mrtrkit/mrtrkit/mrtr"
)

// L8 of the security review: mrtr.principal.digest is the keyed digest of
// the caller. Its value under a deployment's key is the HMAC under that
// key, and never the unkeyed SHA-256 that a dictionary of guessed
// subjects would find.
func TestPrincipalDigestAttributeIsKeyed(t *testing.T) {
	t.Cleanup(func() { require.NoError(t, mrtr.SetPrincipalDigestKey(nil)) })
	key := bytes.Repeat([]byte{5}, 32)
	require.NoError(t, mrtr.SetPrincipalDigestKey(key))
	mac := hmac.New(sha256.New, key)
	mac.Write([]byte("mrtrkit principal\x00" + principalName))
	keyed := hex.EncodeToString(mac.Sum(nil)[:8])
	unkeyed := sha256.Sum256([]byte("mrtrkit principal\x00" + principalName))

	f := newFixture(t)
	_, err := f.client().Call(context.Background(), mrtr.MethodToolsList, nil)
	require.NoError(t, err)
	got := attrs(f.only().Attributes())["mrtr.principal.digest"].AsString()
	assert.Equal(t, keyed, got)
	assert.NotEqual(t, hex.EncodeToString(unkeyed[:8]), got)
}
