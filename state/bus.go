package state

import (
	"crypto/hmac"
	"crypto/rand"
	"encoding/binary"
	"errors"
	"time"
)

// BusPurpose is the purpose the keys of a BusSealer are derived under
// (HKDF-SHA256 with the purpose in the info string, as WithPurpose
// does): a bus message's key never seals or opens a token, and no token
// key authenticates a bus message.
const BusPurpose = "mrtrkit-bus"

// Bus message framing.
const (
	busVersion  = 'B' // first byte of every sealed bus message
	busNonceLen = 16  // random message id: 128 bits
	busDomain   = "mrtrkit bus message\x00"
)

// ErrBusMessage is returned by BusSealer.Open for a message that is not
// one a key of the ring sealed for that channel: forged, altered, sealed
// for another channel, or sealed with a key no longer in the ring.
var ErrBusMessage = errors.New("state: bus message not authentic")

// BusSealer authenticates the messages the replicas of a deployment
// exchange on a shared bus (package share: share.Sealed uses one), with
// keys derived from the key ring every replica holds. Each message carries
// the id of the key that sealed it, the time it was sealed and a random
// 128-bit message id, and an HMAC-SHA256 tag over those, the channel it
// was published on and the payload. The first key of the ring seals and
// every key opens, so that keys rotate as for tokens: put the new key
// first and keep the old one until the messages it sealed are stale (a
// few seconds). Give Codec to the KeyRingFile that reloads the Server's
// codec so that the sealer follows the ring file.
//
// The payload is authenticated, not encrypted. A BusSealer is safe for
// concurrent use.
type BusSealer struct {
	codec *RingCodec
}

// NewBusSealer returns a BusSealer keyed from ring under BusPurpose.
func NewBusSealer(ring *KeyRing) (*BusSealer, error) {
	c, err := NewHMAC(ring, WithPurpose(BusPurpose))
	if err != nil {
		return nil, err
	}
	return &BusSealer{codec: c}, nil
}

// Codec returns the codec holding the sealer's keys, so that a
// KeyRingFile keeps it in step with the key ring file (or Replace swaps
// its ring). Its tokens are of no other use.
func (b *BusSealer) Codec() *RingCodec { return b.codec }

// busTag computes the tag of a message: header (version, key id, time,
// nonce) and payload, for channel.
func busTag(k *codecKey, channel string, header, payload []byte) [hmacSize]byte {
	m := k.mac()
	defer k.macs.Put(m)
	var n [8]byte
	m.h.Write([]byte(busDomain))
	binary.BigEndian.PutUint64(n[:], uint64(len(channel)))
	m.h.Write(n[:])
	m.h.Write([]byte(channel))
	m.h.Write(header)
	m.h.Write(payload)
	var tag [hmacSize]byte
	copy(tag[:], m.h.Sum(m.sum[:0]))
	return tag
}

// Seal returns payload sealed for channel at time now.
func (b *BusSealer) Seal(channel string, payload []byte, now time.Time) ([]byte, error) {
	c := b.codec.cur.Load()
	k := c.sealer
	id := k.header[3:] // version, alg, id length, id
	msg := make([]byte, 0, 2+len(id)+8+busNonceLen+len(payload)+hmacSize)
	msg = append(msg, busVersion, byte(len(id)))
	msg = append(msg, id...)
	msg = binary.BigEndian.AppendUint64(msg, uint64(now.UnixMilli()))
	var nonce [busNonceLen]byte
	if _, err := rand.Read(nonce[:]); err != nil {
		return nil, err
	}
	msg = append(msg, nonce[:]...)
	header := len(msg)
	msg = append(msg, payload...)
	tag := busTag(k, channel, msg[:header], payload)
	return append(msg, tag[:]...), nil
}

// Open checks a message received on channel and returns its payload (a
// part of msg), the time it was sealed and its random message id.
// ErrBusMessage means it is not authentic.
func (b *BusSealer) Open(channel string, msg []byte) (payload []byte, sent time.Time, id string, err error) {
	if len(msg) < 2 || msg[0] != busVersion {
		return nil, time.Time{}, "", ErrBusMessage
	}
	idLen := int(msg[1])
	header := 2 + idLen + 8 + busNonceLen
	if idLen == 0 || len(msg) < header+hmacSize {
		return nil, time.Time{}, "", ErrBusMessage
	}
	c := b.codec.cur.Load()
	k := c.keys[string(msg[2:2+idLen])]
	if k == nil {
		return nil, time.Time{}, "", ErrBusMessage
	}
	payload = msg[header : len(msg)-hmacSize]
	tag := busTag(k, channel, msg[:header], payload)
	if !hmac.Equal(tag[:], msg[len(msg)-hmacSize:]) {
		return nil, time.Time{}, "", ErrBusMessage
	}
	ms := int64(binary.BigEndian.Uint64(msg[2+idLen:]))
	return payload, time.UnixMilli(ms), string(msg[header-busNonceLen : header]), nil
}
