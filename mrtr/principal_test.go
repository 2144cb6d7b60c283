package mrtr_test

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"log/slog"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mrtrkit/mrtrkit/internal/testkit"
	"github.com/mrtrkit/mrtrkit/mrtr"
	"github.com/mrtrkit/mrtrkit/state"
)

// unkeyedDigest is the digest of before L8 of the security review: a
// plain SHA-256 that anyone can compute for a guessed subject.
func unkeyedDigest(principal string) string {
	sum := sha256.Sum256([]byte("mrtrkit principal\x00" + principal))
	return hex.EncodeToString(sum[:8])
}

// keyedDigest is what PrincipalDigest must give under key.
func keyedDigest(key []byte, principal string) string {
	m := hmac.New(sha256.New, key)
	m.Write([]byte("mrtrkit principal\x00" + principal))
	return hex.EncodeToString(m.Sum(nil)[:8])
}

// L8 of the security review: the principal digest is an HMAC under a key,
// random per process by default, so a guessed subject cannot be checked
// against logs or telemetry without the key.
func TestPrincipalDigestIsKeyed(t *testing.T) {
	t.Cleanup(func() { require.NoError(t, mrtr.SetPrincipalDigestKey(nil)) })

	// The review's reproduction: sha256("mrtrkit principal\x00alice")[:8].
	require.Equal(t, "0c994f96aa8fba02", unkeyedDigest("alice"))
	d := mrtr.PrincipalDigest("alice")
	assert.NotEqual(t, "0c994f96aa8fba02", d, "the digest is not the unkeyed hash")
	assert.Len(t, d, 16)
	assert.Equal(t, d, mrtr.PrincipalDigest("alice"), "stable within the process")
	assert.NotEqual(t, d, mrtr.PrincipalDigest("bob"))
	assert.Equal(t, "anonymous", mrtr.PrincipalDigest(""))

	// A new random key (as in another process) gives other digests.
	require.NoError(t, mrtr.SetPrincipalDigestKey(nil))
	assert.NotEqual(t, d, mrtr.PrincipalDigest("alice"))

	// A key the deployment sets: HMAC-SHA-256 under it, the same in
	// every process that sets it.
	key := bytes.Repeat([]byte{9}, 32)
	require.NoError(t, mrtr.SetPrincipalDigestKey(key))
	assert.Equal(t, keyedDigest(key, "alice"), mrtr.PrincipalDigest("alice"))
	key[0] = 1 // the key was copied
	assert.Equal(t, keyedDigest(bytes.Repeat([]byte{9}, 32), "alice"), mrtr.PrincipalDigest("alice"))

	err := mrtr.SetPrincipalDigestKey(make([]byte, 31))
	require.Error(t, err)
	assert.Contains(t, err.Error(), "32 bytes")
}

// Replicas that share a key ring derive one digest key, so their logs
// agree; another first key, or another purpose of the same secret, gives
// another key; older keys behind the first do not matter.
func TestDerivePrincipalDigestKey(t *testing.T) {
	text := "k2:" + base64.StdEncoding.EncodeToString(bytes.Repeat([]byte{2}, 32)) +
		",k1:" + base64.StdEncoding.EncodeToString(bytes.Repeat([]byte{1}, 32))
	derive := func(ring *state.KeyRing) []byte {
		t.Helper()
		k, err := mrtr.DerivePrincipalDigestKey(ring)
		require.NoError(t, err)
		require.Len(t, k, 32)
		return k
	}
	ringA, err := state.ParseKeyRing(text)
	require.NoError(t, err)
	ringB, err := state.ParseKeyRing(text)
	require.NoError(t, err)
	a := derive(ringA)
	assert.Equal(t, a, derive(ringB), "replicas agree")
	assert.Equal(t, a, derive(testkit.Ring(t, testkit.Key("k2", 2))), "only the first key counts")
	assert.NotEqual(t, a, derive(testkit.Ring(t, testkit.Key("k1", 1))), "rotation changes it")
	assert.NotEqual(t, a, derive(testkit.Ring(t, testkit.Key("k3", 2))), "the key id counts")
	assert.NotEqual(t, bytes.Repeat([]byte{2}, 32), a, "not the secret itself")

	_, err = mrtr.DerivePrincipalDigestKey(nil)
	assert.Error(t, err)
}

// The audit log names callers by keyed digest: the unkeyed hash of a
// guessable subject appears nowhere, and two processes (two keys) log
// different digests for one subject, while one derived key makes
// replicas agree.
func TestAuditLogPrincipalIsKeyed(t *testing.T) {
	t.Cleanup(func() { require.NoError(t, mrtr.SetPrincipalDigestKey(nil)) })
	logged := func() string {
		t.Helper()
		var buf bytes.Buffer
		srv := testkit.Server(t, testkit.Desc("audit", "1"), mrtr.WithCodec(testkit.Codec(t)),
			mrtr.WithInterceptors(mrtr.AuditLog(slog.New(slog.NewTextHandler(&buf, nil)))))
		require.NoError(t, srv.AddTool(mrtr.Tool{Name: "hello"}, mrtr.HandlerFunc(func(context.Context, *mrtr.Request) (mrtr.Result, error) {
			return mrtr.TextResult("hi"), nil
		})))
		_, rpcErr := callTool(srv, "alice@example.com", "hello", nil)
		require.Nil(t, rpcErr)
		return buf.String()
	}

	out := logged()
	assert.Contains(t, out, "principal="+mrtr.PrincipalDigest("alice@example.com"))
	assert.NotContains(t, out, unkeyedDigest("alice@example.com"))
	assert.NotContains(t, out, "alice@example.com")

	require.NoError(t, mrtr.SetPrincipalDigestKey(nil)) // another process
	assert.NotContains(t, logged(), "principal="+keyedDigestOf(out))

	key, err := mrtr.DerivePrincipalDigestKey(testkit.Ring(t))
	require.NoError(t, err)
	require.NoError(t, mrtr.SetPrincipalDigestKey(key))
	assert.Contains(t, logged(), "principal="+keyedDigest(key, "alice@example.com"))
}

// keyedDigestOf returns the principal digest in an audit log line.
func keyedDigestOf(line string) string {
	const attr = "principal="
	i := bytes.Index([]byte(line), []byte(attr))
	if i < 0 || len(line) < i+len(attr)+16 {
		return "none"
	}
	return line[i+len(attr) : i+len(attr)+16]
}
