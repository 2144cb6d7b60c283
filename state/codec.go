package state

import (
	"crypto/cipher"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"fmt"
	"hash"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unsafe"

	"golang.org/x/crypto/chacha20poly1305"
	"golang.org/x/crypto/hkdf"
)

// Codec seals claims into opaque, URL-safe requestState tokens and opens
// them again. Implementations are safe for concurrent use. NewAEAD and
// NewHMAC build this package's implementation, a *RingCodec; mrtr.WithCodec
// accepts any Codec.
//
// A Codec keeps nothing it is given: Seal reads the claims (their Asked
// map included) only until it returns, and Open reads token only until it
// returns and returns nothing that shares memory with it. mrtr relies on
// this to hand Open a token that lies in a request body and Seal a map it
// reuses.
type Codec interface {
	// Seal sets IssuedAt and ExpiresAt from the codec's clock and TTL and
	// returns a URL-safe token carrying c. It refuses a Round outside
	// 1..MaxRound, an Asked map with empty or over-long keys, and claims
	// whose token would exceed the maximum token size (ReasonTooLarge).
	Seal(c Claims) (string, error)
	// Open authenticates token and checks that it has not expired. It does
	// not know the request being served: call Claims.Verify with its
	// Binding before trusting anything the claims say. Open costs at most
	// one base64 decode and one AEAD or HMAC pass over the token, so a
	// server can afford it before any work on the request's arguments. On
	// failure it returns a zero Claims and an *Error whose Reason says
	// which check failed.
	Open(token string) (Claims, error)
}

// Frame layout constants.
const (
	frameVersion = 1 // first byte of every frame

	algAEAD = 1 // XChaCha20-Poly1305
	algHMAC = 2 // HMAC-SHA256

	// frameFixed is version, algorithm and key id length.
	frameFixed = 3
	// hmacSize is the length of an HMAC-SHA256 tag.
	hmacSize = sha256.Size
	// subkeyLen is the length of every derived subkey.
	subkeyLen = 32
)

var (
	tokenEncoding  = base64.RawURLEncoding
	strictEncoding = base64.RawURLEncoding.Strict()
)

func algName(alg byte) string {
	switch alg {
	case algAEAD:
		return "xchacha20-poly1305"
	case algHMAC:
		return "hmac-sha256"
	}
	return "alg(" + strconv.Itoa(int(alg)) + ")"
}

// codecKey is one ring key prepared for a codec: its frame header and the
// primitive keyed with its derived subkey.
type codecKey struct {
	header []byte      // version, algorithm, id length, id
	aead   cipher.AEAD // algAEAD
	macs   sync.Pool   // algHMAC: *macState keyed with the subkey
}

// macState is a reusable keyed HMAC with room for its output.
type macState struct {
	h   hash.Hash
	sum [hmacSize]byte
}

// mac returns a reset HMAC from the pool; return it with k.macs.Put.
func (k *codecKey) mac() *macState {
	m := k.macs.Get().(*macState)
	m.h.Reset()
	return m
}

// codec seals and opens with one key ring, fixed for its life. A RingCodec
// holds one and swaps it for another when its ring is replaced.
type codec struct {
	cfg      config
	alg      byte
	overhead int // bytes a frame adds around the claims, besides the header
	sealer   *codecKey
	keys     map[string]*codecKey
	ids      []string // the ring's key ids, in order; never modified
	// random, when set, replaces crypto/rand as the nonce source. Only
	// tests set it, to make tokens reproducible across fuzz workers.
	random io.Reader
}

// NewAEAD returns the default codec. Tokens are encrypted and authenticated
// with XChaCha20-Poly1305 under a subkey derived from the ring's key, with a
// fresh random 24-byte nonce per token, so clients can neither read nor
// alter the claims. The first key of ring seals and every key opens; the
// ring can be replaced later (RingCodec.Replace, KeyRingFile) without
// building a new codec. The options apply to every ring the codec is
// given.
func NewAEAD(ring *KeyRing, opts ...Option) (*RingCodec, error) {
	return newRingCodec(ring, algAEAD, opts)
}

// NewHMAC returns a codec whose tokens are authenticated with HMAC-SHA256
// but not encrypted: anyone holding a token can decode its claims,
// including the principal and the payload, yet cannot alter them. Prefer
// NewAEAD unless readable tokens are wanted, for example while debugging.
// Keys and options work as for NewAEAD.
func NewHMAC(ring *KeyRing, opts ...Option) (*RingCodec, error) {
	return newRingCodec(ring, algHMAC, opts)
}

// RingCodec is the Codec that NewAEAD and NewHMAC return. It seals with
// the first key of its KeyRing and opens tokens of every key in it, and
// its ring can be replaced while it serves, so that keys rotate without a
// restart. Replace swaps the ring atomically: every Seal and Open that
// starts afterwards uses the new ring. The rotation rule is the usual one:
// put the new key first and keep the old one behind it until the tokens it
// sealed have expired; a token whose key is no longer in the ring stops
// opening (ReasonUnknownKey).
//
// A RingCodec is safe for concurrent use. KeyRingFile keeps one in step
// with a key ring file. The zero value has no keys and takes none: build a
// RingCodec with NewAEAD or NewHMAC.
type RingCodec struct {
	alg  byte
	opts []Option
	cur  atomic.Pointer[codec]
}

func newRingCodec(ring *KeyRing, alg byte, opts []Option) (*RingCodec, error) {
	r := &RingCodec{alg: alg, opts: append([]Option(nil), opts...)}
	if err := r.Replace(ring); err != nil {
		return nil, err
	}
	return r, nil
}

// Replace makes ring the codec's key ring, its first key sealing and every
// key opening, with the options the codec was built with. On error (a nil
// or empty ring) the codec keeps the ring it had.
func (r *RingCodec) Replace(ring *KeyRing) error {
	c, err := newCodec(ring, r.alg, r.opts)
	if err != nil {
		return err
	}
	r.cur.Store(c)
	return nil
}

// KeyIDs returns the IDs of the ring in use, in order; the first seals.
func (r *RingCodec) KeyIDs() []string {
	if c := r.cur.Load(); c != nil {
		return slices.Clone(c.ids)
	}
	return nil
}

// Seal implements Codec with the ring in use.
func (r *RingCodec) Seal(c Claims) (string, error) { return r.cur.Load().Seal(c) }

// AppendSeal implements AppendSealer with the current key ring.
func (r *RingCodec) AppendSeal(dst []byte, c Claims) ([]byte, error) {
	return r.cur.Load().AppendSeal(dst, c)
}

// Open implements Codec with the ring in use.
func (r *RingCodec) Open(token string) (Claims, error) { return r.cur.Load().Open(token) }

// deriveSubkey derives the subkey that algorithm alg uses for the ring key
// id with HKDF-SHA256. The info string names the token format version, the
// algorithm and the key id, so one configured secret never keys two
// algorithms.
func deriveSubkey(secret []byte, alg byte, id, purpose string) ([]byte, error) {
	info := "mrtrkit/state token v" + strconv.Itoa(frameVersion) + " " + algName(alg) + " key " + id
	if purpose != "" {
		// Tokens for another purpose are keyed apart: one never opens as
		// the other.
		info += " purpose " + purpose
	}
	sub := make([]byte, subkeyLen)
	if _, err := io.ReadFull(hkdf.New(sha256.New, secret, nil, []byte(info)), sub); err != nil {
		return nil, err
	}
	return sub, nil
}

func newCodec(ring *KeyRing, alg byte, opts []Option) (*codec, error) {
	if ring == nil || len(ring.keys) == 0 {
		return nil, errors.New("state: codec needs a key ring with at least one key")
	}
	cfg, err := newConfig(opts)
	if err != nil {
		return nil, err
	}
	c := &codec{cfg: cfg, alg: alg, keys: make(map[string]*codecKey, len(ring.keys)), ids: ring.IDs()}
	switch alg {
	case algAEAD:
		c.overhead = chacha20poly1305.NonceSizeX + chacha20poly1305.Overhead
	case algHMAC:
		c.overhead = hmacSize
	default:
		return nil, errors.New("state: RingCodec not built by NewAEAD or NewHMAC")
	}
	for i, k := range ring.keys {
		sub, err := deriveSubkey(k.Secret, alg, k.ID, cfg.purpose)
		if err != nil {
			return nil, fmt.Errorf("state: derive subkey for key %q: %w", k.ID, err)
		}
		ck := &codecKey{header: make([]byte, 0, frameFixed+len(k.ID))}
		ck.header = append(ck.header, frameVersion, alg, byte(len(k.ID)))
		ck.header = append(ck.header, k.ID...)
		switch alg {
		case algAEAD:
			ck.aead, err = chacha20poly1305.NewX(sub)
			clear(sub)
			if err != nil {
				return nil, fmt.Errorf("state: key %q: %w", k.ID, err)
			}
		case algHMAC:
			ck.macs.New = func() any { return &macState{h: hmac.New(sha256.New, sub)} }
		}
		c.keys[k.ID] = ck
		if i == 0 {
			c.sealer = ck
		}
	}
	return c, nil
}

// maxPooledBuffer bounds the buffers bufferPool keeps: one that grew
// beyond it is left to the garbage collector.
const maxPooledBuffer = 64 << 10

// bufferPool holds the buffers Seal builds frames in.
var bufferPool = sync.Pool{New: func() any { b := make([]byte, 0, 4096); return &b }}

func getBuffer(n int) *[]byte {
	bp := bufferPool.Get().(*[]byte)
	if cap(*bp) < n {
		*bp = make([]byte, n)
	}
	*bp = (*bp)[:n]
	return bp
}

func putBuffer(bp *[]byte) {
	if cap(*bp) <= maxPooledBuffer {
		bufferPool.Put(bp)
	}
}

// validate checks the caller-supplied parts of c before sealing.
func (c *codec) validate(cl *Claims) error {
	if cl.Round < 1 || cl.Round > MaxRound {
		return errors.New("state: seal: Round must be between 1 and MaxRound")
	}
	if len(cl.Asked) > maxAsked {
		return fmt.Errorf("state: seal: Asked has %d keys, at most %d allowed", len(cl.Asked), maxAsked)
	}
	for k := range cl.Asked {
		if k == "" || len(k) > MaxAskedKeyLen {
			return fmt.Errorf("state: seal: Asked keys must be 1 to %d bytes long", MaxAskedKeyLen)
		}
	}
	return nil
}

// nonce fills b with random bytes.
func (c *codec) nonce(b []byte) error {
	if c.random != nil {
		_, err := io.ReadFull(c.random, b)
		return err
	}
	_, err := rand.Read(b)
	return err
}

// An AppendSealer is a Codec that can also append a token to a buffer
// instead of returning it as a string, sparing the string's allocation in
// a server that copies the token into the answer it encodes. The codecs
// of this package are AppendSealers.
type AppendSealer interface {
	Codec
	// AppendSeal appends to dst the token Seal would return for c.
	AppendSeal(dst []byte, c Claims) ([]byte, error)
}

// Seal implements Codec.
func (c *codec) Seal(cl Claims) (string, error) {
	b, err := c.AppendSeal(nil, cl)
	if err != nil {
		return "", err
	}
	return unsafe.String(unsafe.SliceData(b), len(b)), nil // b is the string's alone
}

// AppendSeal implements AppendSealer: the frame is built in a pooled
// buffer and its base64 text written straight into dst.
func (c *codec) AppendSeal(dst []byte, cl Claims) ([]byte, error) {
	if err := c.validate(&cl); err != nil {
		return dst, err
	}
	issued := c.cfg.now().UnixMilli()
	ttl := uint64(c.cfg.ttl / time.Millisecond)
	if issued > math.MaxInt64-int64(ttl) {
		return dst, errors.New("state: seal: clock too far in the future")
	}
	var keyBuf [16]string
	keys := sortedAskedKeys(cl.Asked, keyBuf[:0])
	n := claimsLen(&cl, issued, ttl, keys)

	k := c.sealer
	frameLen := len(k.header) + c.overhead + n
	tokenLen := tokenEncoding.EncodedLen(frameLen)
	if tokenLen > c.cfg.maxSize {
		return dst, refuse(ReasonTooLarge, "token would be "+strconv.Itoa(tokenLen)+" characters, the limit is "+strconv.Itoa(c.cfg.maxSize))
	}

	bp := getBuffer(frameLen)
	defer putBuffer(bp)
	frame := append((*bp)[:0], k.header...)
	h := len(frame)
	switch c.alg {
	case algAEAD:
		p := h + chacha20poly1305.NonceSizeX
		frame = frame[:p]
		if err := c.nonce(frame[h:p]); err != nil {
			return dst, fmt.Errorf("state: seal: nonce: %w", err)
		}
		frame = appendClaims(frame, &cl, issued, ttl, keys)
		// Encrypt in place: the ciphertext overwrites the plaintext
		// exactly, and the header is the associated data.
		frame = k.aead.Seal(frame[:p], frame[h:p], frame[p:], frame[:h])
	case algHMAC:
		frame = appendClaims(frame, &cl, issued, ttl, keys)
		m := k.mac()
		m.h.Write(frame)
		frame = m.h.Sum(frame)
		k.macs.Put(m)
	}
	if len(frame) != frameLen {
		return dst, errors.New("state: seal: internal error: frame size mismatch")
	}
	return tokenEncoding.AppendEncode(slices.Grow(dst, tokenLen), frame), nil
}

// Open implements Codec. The checks run in this order, and the first failure
// is returned: size, base64, frame, key id, integrity, claims encoding,
// expiry, issue time. Nothing it returns shares memory with token, and
// nothing keeps token once it returns (mrtr relies on this to pass a
// token that lies in a request body); likewise Seal keeps nothing of the
// claims it is given.
func (c *codec) Open(token string) (Claims, error) {
	if len(token) > c.cfg.maxSize {
		return Claims{}, refuse(ReasonTooLarge, "token is "+strconv.Itoa(len(token))+" characters, the limit is "+strconv.Itoa(c.cfg.maxSize))
	}
	if len(token) == 0 {
		return Claims{}, refuse(ReasonMalformed, "empty token")
	}
	// The base64 decoder skips CR and LF; refuse them so that exactly one
	// string opens for each sealed frame.
	if strings.IndexByte(token, '\n') >= 0 || strings.IndexByte(token, '\r') >= 0 {
		return Claims{}, refuse(ReasonMalformed, "token is not base64url")
	}

	frame, ok := decodeToken(token)
	if !ok {
		return Claims{}, refuse(ReasonMalformed, "token is not base64url")
	}

	if len(frame) < frameFixed {
		return Claims{}, refuse(ReasonMalformed, "truncated frame")
	}
	if frame[0] != frameVersion {
		return Claims{}, refuse(ReasonMalformed, "unknown token version")
	}
	if frame[1] != c.alg {
		return Claims{}, refuse(ReasonMalformed, "token algorithm is not "+algName(c.alg))
	}
	h := frameFixed + int(frame[2])
	if len(frame) < h+c.overhead {
		return Claims{}, refuse(ReasonMalformed, "truncated frame")
	}
	id := frame[frameFixed:h]
	if !validKeyID(id) {
		return Claims{}, refuse(ReasonMalformed, "invalid key id")
	}
	k := c.keys[string(id)]
	if k == nil {
		return Claims{}, refuse(ReasonUnknownKey, fmt.Sprintf("key id %q is not in the key ring", id))
	}

	var plain []byte
	var err error
	switch c.alg {
	case algAEAD:
		nonce := frame[h : h+chacha20poly1305.NonceSizeX]
		sealed := frame[h+chacha20poly1305.NonceSizeX:]
		plain, err = k.aead.Open(sealed[:0], nonce, sealed, frame[:h])
		if err != nil {
			return Claims{}, refuse(ReasonIntegrity, "authentication failed")
		}
	case algHMAC:
		end := len(frame) - hmacSize
		m := k.mac()
		m.h.Write(frame[:end])
		ok := hmac.Equal(m.h.Sum(m.sum[:0]), frame[end:])
		k.macs.Put(m)
		if !ok {
			return Claims{}, refuse(ReasonIntegrity, "authentication failed")
		}
		plain = frame[h:end:end]
	}

	cl, err := decodeClaims(plain)
	if err != nil {
		return Claims{}, refuse(ReasonMalformed, "claims: "+err.Error())
	}
	if err := c.checkTime(&cl); err != nil {
		return Claims{}, err
	}
	return cl, nil
}

// decodeChunk is how many token characters decodeToken stages at a time; a
// multiple of 4, so every chunk but the last holds whole base64 groups.
const decodeChunk = 1024

// decodeToken decodes token with strict unpadded base64url into a new
// buffer, which is the only allocation: the text is staged through a stack
// buffer rather than copied whole into a []byte. The returned Payload of
// Open aliases this buffer.
func decodeToken(token string) ([]byte, bool) {
	frame := make([]byte, tokenEncoding.DecodedLen(len(token)))
	var chunk [decodeChunk]byte
	n := 0
	for len(token) > 0 {
		m := copy(chunk[:], token)
		token = token[m:]
		k, err := strictEncoding.Decode(frame[n:], chunk[:m])
		if err != nil {
			return nil, false
		}
		n += k
	}
	return frame[:n:n], true
}

// checkTime applies the expiry and issue-time checks to authentic claims.
func (c *codec) checkTime(cl *Claims) error {
	now := c.cfg.now()
	// Valid up to and including ExpiresAt+skew, expired one nanosecond
	// later.
	if now.After(cl.ExpiresAt.Add(c.cfg.skew)) {
		return refuse(ReasonExpired, "token expired")
	}
	// An authentic token issued in the future came from a replica whose
	// clock is ahead by more than the skew. Nothing was tampered with, so
	// it is reported as malformed rather than as an integrity failure.
	if cl.IssuedAt.After(now.Add(c.cfg.skew)) {
		return refuse(ReasonMalformed, "token issued in the future beyond the clock skew")
	}
	return nil
}

// Verify checks authentic claims (from Codec.Open) against the request
// being served: principal first (ReasonPrincipal), then audience, method,
// target and argument digest (ReasonRequest). Strings compare byte for
// byte. The error is an *Error.
func (cl *Claims) Verify(want Binding) error {
	if cl.Principal != want.Principal {
		return refuse(ReasonPrincipal, "token was issued to a different principal")
	}
	switch {
	case cl.Audience != want.Audience:
		return refuse(ReasonRequest, "audience differs")
	case cl.Method != want.Method:
		return refuse(ReasonRequest, "method differs")
	case cl.Target != want.Target:
		return refuse(ReasonRequest, "target differs")
	case cl.ArgsDigest != want.ArgsDigest:
		return refuse(ReasonRequest, "arguments differ")
	}
	return nil
}
