package mrtr

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"hash"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mrtrkit/mrtrkit/state"
)

// MinPrincipalDigestKey is the shortest key SetPrincipalDigestKey takes.
const MinPrincipalDigestKey = 32

// principalDigestBytes is how many bytes of the MAC a digest keeps (16
// hex characters).
const principalDigestBytes = 8

// principalPrefix separates the digest's input from other uses of a key.
const principalPrefix = "mrtrkit principal\x00"

// digestKey is a principal-digest key with its pool of HMAC states.
type digestKey struct {
	macs sync.Pool // of hash.Hash, keyed
}

func newDigestKey(key []byte) *digestKey {
	key = append([]byte(nil), key...)
	d := &digestKey{}
	d.macs.New = func() any { return hmac.New(sha256.New, key) }
	return d
}

// principalKey is the process's principal-digest key; nil until first
// use or SetPrincipalDigestKey.
var principalKey atomic.Pointer[digestKey]

// randomDigestKey returns a fresh key of MinPrincipalDigestKey random
// bytes.
func randomDigestKey() *digestKey {
	var key [MinPrincipalDigestKey]byte
	_, _ = rand.Read(key[:]) // crypto/rand.Read never fails
	return newDigestKey(key[:])
}

// currentDigestKey returns the key in force, making a random one on first
// use.
func currentDigestKey() *digestKey {
	if k := principalKey.Load(); k != nil {
		return k
	}
	principalKey.CompareAndSwap(nil, randomDigestKey())
	return principalKey.Load()
}

// PrincipalDigest returns a pseudonym of a principal for logs and
// telemetry that must tell callers apart without naming them: the first 8
// bytes, in hex, of HMAC-SHA-256 under the process's principal-digest key.
// The anonymous principal is "anonymous". AuditLog and the otel package's
// mrtr.principal.digest attribute use it.
//
// The key is random, made when the process first needs it, unless
// SetPrincipalDigestKey set one: without the key, a digest cannot be
// matched against a list of guessed subjects (emails, user ids), as an
// unkeyed hash could. The same principal has the same digest for the
// life of the process, and different digests in two processes with
// random keys; replicas whose logs must agree set one key
// (DerivePrincipalDigestKey derives it from the requestState key ring).
//
// A digest is a pseudonym, not anonymisation: whoever holds the key, or
// can call PrincipalDigest in the process, can test a guess, and a
// digest still links every request of one caller.
func PrincipalDigest(principal string) string {
	if principal == "" {
		return "anonymous"
	}
	k := currentDigestKey()
	h := k.macs.Get().(hash.Hash)
	h.Reset()
	h.Write([]byte(principalPrefix))
	h.Write([]byte(principal))
	var sum [sha256.Size]byte
	out := h.Sum(sum[:0])
	k.macs.Put(h)
	return hex.EncodeToString(out[:principalDigestBytes])
}

// SetPrincipalDigestKey sets the key of PrincipalDigest for the whole
// process, for digests that agree across replicas and restarts: at
// least MinPrincipalDigestKey bytes of secret (DerivePrincipalDigestKey
// makes one from the key ring). The key is copied. nil makes a new random
// key, as at start-up. Set it at start-up, before serving: digests made
// before and after the change differ.
func SetPrincipalDigestKey(key []byte) error {
	if key == nil {
		principalKey.Store(randomDigestKey())
		return nil
	}
	if len(key) < MinPrincipalDigestKey {
		return errors.New("mrtr: a principal digest key must be at least 32 bytes")
	}
	principalKey.Store(newDigestKey(key))
	return nil
}

// digestKeyPurpose keys the derivation of DerivePrincipalDigestKey apart
// from every other use of the ring.
const digestKeyPurpose = "principal-digest"

// DerivePrincipalDigestKey derives a key for SetPrincipalDigestKey from
// the first (sealing) key of ring, so that replicas sharing a key ring
// (MRTRKIT_STATE_KEYS) agree on every principal's digest without another
// secret to distribute. The derivation runs the ring's HMAC codec under a
// purpose of its own, so the key tells nothing of the ring's secrets and
// opens no requestState. Rotating the ring's first key changes every
// digest; so may an upgrade that changes the state token format.
func DerivePrincipalDigestKey(ring *state.KeyRing) ([]byte, error) {
	codec, err := state.NewHMAC(ring, state.WithPurpose(digestKeyPurpose),
		state.WithClock(func() time.Time { return time.Unix(0, 0) }))
	if err != nil {
		return nil, err
	}
	// With a fixed clock, an HMAC token has no random part: the same
	// ring gives the same token, whose MAC only the ring's secret can
	// make.
	tok, err := codec.Seal(state.Claims{Audience: "mrtrkit principal digest key", Round: 1})
	if err != nil {
		return nil, err
	}
	sum := sha256.Sum256([]byte("mrtrkit principal digest key\x00" + tok))
	return sum[:], nil
}
