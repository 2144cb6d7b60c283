// Package state is a building block beneath mrtr, for deployments that
// manage their keys (most servers only set MRTRKIT_STATE_KEYS): it turns
// the server-side state of an unfinished MCP request into a tamper-proof
// token that the client hands back on its retry.
//
// # Why
//
// In MCP 2026-07-28 a server that needs input from the client (sampling,
// elicitation or roots) answers the request with input_required and an
// opaque requestState string. The client sends the same request again with
// its answers and that string. Because the string passes through the client
// it is attacker-controlled, so this package seals it (authenticated
// encryption by default) and binds it to who asked, which server issued it,
// which request it belongs to and how long it may be used.
//
// # Usage
//
// Build a KeyRing (from EnvKeys, a file, or GenerateKeyRing for
// development), make a Codec with NewAEAD, Seal a Claims value when
// answering input_required, and on the retry Open the token, then Verify
// its claims against the Binding of the request being served:
//
//	ring, _, err := state.KeyRingFromEnv()
//	codec, err := state.NewAEAD(ring)
//	digest, err := state.DigestJSON(params.Arguments)
//	token, err := codec.Seal(state.Claims{Principal: sub, Audience: "https://api.example",
//		Method: "tools/call", Target: "deploy", ArgsDigest: digest, Round: 1, Payload: mine})
//	...
//	claims, err := codec.Open(token) // authentic and unexpired
//	digest, err = state.DigestJSON(params.Arguments)
//	err = claims.Verify(state.Binding{Principal: sub, Audience: "https://api.example",
//		Method: "tools/call", Target: "deploy", ArgsDigest: digest})
//
// Open and Verify are two steps so that the argument digest, whose cost
// grows with the arguments, is computed only for an authentic token: a
// caller without a genuine token cannot make the server digest anything.
// The claims mean nothing until Verify has accepted them. Limits on rounds,
// and the meaning of the byte recorded for each asked key, are the
// caller's: this package carries them.
//
// # Token format
//
// A token is the unpadded base64url encoding (RFC 4648 section 5, decoded
// strictly: non-zero trailing bits and line breaks are refused) of a binary
// frame:
//
//	version   1 byte, currently 1
//	alg       1 byte: 1 = XChaCha20-Poly1305 (NewAEAD), 2 = HMAC-SHA256 (NewHMAC)
//	idLen     1 byte, 1..32
//	keyID     idLen bytes of [A-Za-z0-9_.-]
//	alg 1:    nonce (24 random bytes) || ciphertext of the claims || 16-byte tag,
//	          with version..keyID as associated data
//	alg 2:    claims || 32-byte HMAC-SHA256 over version..claims
//
// The key id in the frame only selects a ring key; the primitive is keyed
// with a subkey derived by HKDF-SHA256 from that key's secret, with an info
// string naming the format version, the algorithm and the key id, so one
// secret never keys two algorithms. A codec built WithPurpose adds its
// purpose to the info string, so a token sealed for one purpose (a session
// id, say) never opens as a requestState. The claims are a compact, versioned
// binary encoding (varints and length-prefixed fields) with exactly one
// valid encoding per value; the decoder bounds every length and refuses
// trailing bytes. Times are stored as Unix milliseconds, so IssuedAt and
// ExpiresAt survive a round trip exactly.
//
// HMAC tokens are not encrypted: anyone holding one can decode its claims,
// including the principal and payload. AEAD tokens reveal only their
// length and key id.
//
// # Canonical arguments
//
// ArgsDigest binds a token to the request's arguments. DigestJSON hashes
// the RFC 8785 (JSON Canonicalization Scheme) form produced by
// Canonicalize: object members sorted by UTF-16 code units, no
// insignificant whitespace, minimal string escaping and numbers written in
// the ECMAScript shortest round-trip form, so {"b":1.0, "a":1} and
// {"a":1,"b":1} hash alike. Numbers are IEEE 754 doubles: integers beyond
// 2^53 lose precision (9007199254740993 canonicalizes to 9007199254740992)
// as in any JSON implementation that uses doubles. Duplicate member names
// and invalid UTF-8 are errors, and empty input hashes as null.
//
// # Keys
//
// EnvKeys (MRTRKIT_STATE_KEYS) and ParseKeyRing take comma-separated
// id:secret entries, the first one sealing and all of them opening:
//
//	MRTRKIT_STATE_KEYS="k2:$(openssl rand -base64 32),k1:<older key>"
//
// Secrets are base64 (standard or URL-safe alphabet, padded or not) of at
// least 32 bytes, ids are 1 to 32 characters of [A-Za-z0-9_.-], and
// whitespace around entries is ignored. LoadKeyRingFile (and KeyRingFile,
// which reloads it) also accepts one entry per line, blank lines, and
// comments from '#' to the end of a line, on a line of their own or after
// an entry and a blank:
//
//	# one id:secret a line; the first seals, every one opens
//	k2:RVhBTVBMRSBPTkxZLCBkbyBub3QgdXNlOiBrMiBrZXk=   # the new key: seals
//	k1:RVhBTVBMRSBPTkxZLCBkbyBub3QgdXNlOiBrMSBrZXk=   # the previous key: still opens
//
// To rotate, deploy
// "new,old" everywhere, wait one TTL plus the clock skew, then drop "old".
// Error messages never contain secret material.
//
// Keys rotate without a restart: the *RingCodec that NewAEAD and NewHMAC
// return takes a new ring with Replace while it serves. To rotate from a
// key ring file, build the codec from LoadKeyRingFile and let a
// KeyRingFile reload it on SIGHUP or when the file changes; a file that
// does not parse leaves the keys in use as they are:
//
//	ring, err := state.LoadKeyRingFile(path)
//	codec, err := state.NewAEAD(ring)
//	go state.NewKeyRingFile(path, logger, codec).Watch(ctx, time.Minute)
//
// # Defaults
//
//	TTL                 10 minutes   WithTTL
//	clock skew          30 seconds   WithClockSkew
//	max token size      16 KiB       WithMaxTokenSize (characters of token)
//
// A token is valid up to and including ExpiresAt plus the skew and expired
// one nanosecond later. A token whose IssuedAt lies more than the skew in
// the future is refused as malformed: it is authentic, so it points at
// clocks out of sync rather than at tampering. Open checks the token length
// before decoding anything, so oversized input costs no cryptography.
//
// # Refusals
//
// Open returns an *Error whose Reason is one of ReasonTooLarge,
// ReasonMalformed, ReasonUnknownKey, ReasonIntegrity or ReasonExpired; its
// checks run in this order, the first failure winning: size, base64, frame
// (version, algorithm, key id syntax), key id lookup, integrity, claims
// encoding, expiry, issue time. Verify then returns ReasonPrincipal or
// ReasonRequest (audience, method, target or arguments). Reasons are for logs and metrics; a server should
// answer every refusal with the same client-facing error.
package state
