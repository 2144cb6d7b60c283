package state

import (
	"bufio"
	"bytes"
	"crypto/rand"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
)

// Key limits enforced by NewKeyRing.
const (
	// minSecretLen is the shortest accepted Key.Secret, in bytes.
	minSecretLen = 32
	// maxKeyIDLen is the longest accepted Key.ID, in characters.
	maxKeyIDLen = 32
)

// maxKeyFileSize bounds what LoadKeyRingFile reads.
const maxKeyFileSize = 1 << 20

// EnvKeys is the environment variable read by KeyRingFromEnv. Its value has
// the ParseKeyRing syntax, for example "k2:BASE64,k1:BASE64".
const EnvKeys = "MRTRKIT_STATE_KEYS"

// Key is one named secret. The ID is written into every token sealed with
// the key so that Open can find it again after a rotation.
type Key struct {
	// ID names the key: 1 to 32 characters of A-Z, a-z, 0-9, '_', '.'
	// and '-'.
	ID string
	// Secret is the key material, at least 32 random bytes. Codecs never
	// use it directly; they derive one subkey per algorithm from it.
	Secret []byte
}

// KeyRing is an ordered, immutable set of keys. The first key seals new
// tokens; every key opens tokens. To rotate, put the new key first and keep
// the old one behind it until tokens sealed with it have expired.
type KeyRing struct {
	keys []Key
}

// validKeyID reports whether id is 1..maxKeyIDLen characters of
// [A-Za-z0-9_.-].
func validKeyID[T ~string | ~[]byte](id T) bool {
	if len(id) == 0 || len(id) > maxKeyIDLen {
		return false
	}
	for i := 0; i < len(id); i++ {
		c := id[i]
		switch {
		case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9',
			c == '_', c == '.', c == '-':
		default:
			return false
		}
	}
	return true
}

// NewKeyRing builds a key ring from keys, in order: the first key seals and
// every key opens. It requires at least one key, valid and distinct IDs, and
// secrets of at least 32 bytes. The secrets are copied, so the
// caller may clear its own slices afterwards.
func NewKeyRing(keys ...Key) (*KeyRing, error) {
	if len(keys) == 0 {
		return nil, errors.New("state: key ring needs at least one key")
	}
	ring := &KeyRing{keys: make([]Key, 0, len(keys))}
	seen := make(map[string]bool, len(keys))
	for i, k := range keys {
		if !validKeyID(k.ID) {
			return nil, fmt.Errorf("state: key %d: key id must be 1 to %d characters of A-Z a-z 0-9 _ . -", i+1, maxKeyIDLen)
		}
		if seen[k.ID] {
			return nil, fmt.Errorf("state: key %d: duplicate key id %q", i+1, k.ID)
		}
		seen[k.ID] = true
		if len(k.Secret) < minSecretLen {
			return nil, fmt.Errorf("state: key %d (id %q): secret is %d bytes, need at least %d", i+1, k.ID, len(k.Secret), minSecretLen)
		}
		ring.keys = append(ring.keys, Key{ID: k.ID, Secret: bytes.Clone(k.Secret)})
	}
	return ring, nil
}

// IDs returns the key IDs in ring order; the first one seals.
func (r *KeyRing) IDs() []string {
	if r == nil {
		return nil
	}
	ids := make([]string, len(r.keys))
	for i, k := range r.keys {
		ids[i] = k.ID
	}
	return ids
}

// ParseKeyRing parses a key ring written as comma-separated "id:secret"
// entries, first entry sealing, for example "k2:BASE64,k1:BASE64". The
// secret is base64 in the standard or URL-safe alphabet, with or without
// padding. Whitespace around entries, ids and secrets is ignored, and so are
// empty entries. Errors name the entry by position and, when it is valid, by
// id, but never include secret text.
func ParseKeyRing(s string) (*KeyRing, error) {
	var keys []Key
	for i, entry := range strings.Split(s, ",") {
		k, ok, err := parseKeyEntry(entry, "entry "+strconv.Itoa(i+1))
		if err != nil {
			clearKeys(keys)
			return nil, err
		}
		if ok {
			keys = append(keys, k)
		}
	}
	if len(keys) == 0 {
		return nil, errors.New("state: key ring: no keys given")
	}
	return newParsedKeyRing(keys)
}

// LoadKeyRingFile reads a key ring from a file. The syntax is that of
// ParseKeyRing, except that entries may be separated by newlines as well as
// commas, blank lines are ignored, and '#' starts a comment that runs to
// the end of the line, either at the start of a line or after a blank
// (a space or a tab), as in "k2:BASE64   # the new key: seals". A '#'
// that follows a secret with no blank before it is part of the entry, and
// so an error. Errors name the file, the line and the entry id, never the
// secret.
func LoadKeyRingFile(path string) (*KeyRing, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("state: key ring file: %w", err)
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, maxKeyFileSize+1))
	if err != nil {
		return nil, fmt.Errorf("state: key ring file %s: %w", path, err)
	}
	if len(data) > maxKeyFileSize {
		return nil, fmt.Errorf("state: key ring file %s: larger than %d bytes", path, maxKeyFileSize)
	}
	return parseKeyRingText(data, path)
}

// parseKeyRingText parses key ring file contents; name prefixes errors.
func parseKeyRingText(data []byte, name string) (*KeyRing, error) {
	var keys []Key
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 0, 4096), maxKeyFileSize+1)
	for line := 1; sc.Scan(); line++ {
		text := strings.TrimSpace(stripComment(sc.Text()))
		if text == "" {
			continue
		}
		for j, entry := range strings.Split(text, ",") {
			where := fmt.Sprintf("%s: line %d entry %d", name, line, j+1)
			k, ok, err := parseKeyEntry(entry, where)
			if err != nil {
				clearKeys(keys)
				return nil, err
			}
			if ok {
				keys = append(keys, k)
			}
		}
	}
	if err := sc.Err(); err != nil {
		clearKeys(keys)
		return nil, fmt.Errorf("state: key ring file %s: %w", name, err)
	}
	if len(keys) == 0 {
		return nil, fmt.Errorf("state: key ring file %s: no keys given", name)
	}
	return newParsedKeyRing(keys)
}

// stripComment returns line without its comment: from a '#' that starts
// the line or follows a space or a tab, to the end.
func stripComment(line string) string {
	for i := 0; i < len(line); i++ {
		if line[i] == '#' && (i == 0 || line[i-1] == ' ' || line[i-1] == '\t') {
			return line[:i]
		}
	}
	return line
}

// KeyRingFromEnv parses the EnvKeys environment variable with ParseKeyRing.
// It returns (nil, false, nil) when the variable is unset or blank, and
// (nil, true, err) when it is set but invalid.
func KeyRingFromEnv() (*KeyRing, bool, error) {
	v := strings.TrimSpace(os.Getenv(EnvKeys))
	if v == "" {
		return nil, false, nil
	}
	ring, err := ParseKeyRing(v)
	if err != nil {
		return nil, true, fmt.Errorf("%s: %w", EnvKeys, err)
	}
	return ring, true, nil
}

// GenerateKeyRing returns a ring holding one fresh random 32-byte key with
// id "ephemeral". It suits development and single-process servers only:
// replicas that do not share keys cannot open each other's tokens, and
// every token becomes unreadable when the process restarts.
func GenerateKeyRing() (*KeyRing, error) {
	secret := make([]byte, minSecretLen)
	if _, err := rand.Read(secret); err != nil {
		return nil, fmt.Errorf("state: generate key: %w", err)
	}
	return &KeyRing{keys: []Key{{ID: "ephemeral", Secret: secret}}}, nil
}

// newParsedKeyRing builds a ring from parsed keys and clears the parsed
// secrets, which NewKeyRing has copied.
func newParsedKeyRing(keys []Key) (*KeyRing, error) {
	ring, err := NewKeyRing(keys...)
	clearKeys(keys)
	if err != nil {
		return nil, err
	}
	return ring, nil
}

// clearKeys zeroes the secrets of keys.
func clearKeys(keys []Key) {
	for _, k := range keys {
		clear(k.Secret)
	}
}

// parseKeyEntry parses one "id:secret" entry. It reports ok=false for a
// blank entry. where locates the entry in error messages.
func parseKeyEntry(entry, where string) (Key, bool, error) {
	entry = strings.TrimSpace(entry)
	if entry == "" {
		return Key{}, false, nil
	}
	id, secret, found := strings.Cut(entry, ":")
	if !found {
		return Key{}, false, fmt.Errorf("state: key ring %s: expected id:secret", where)
	}
	id = strings.TrimSpace(id)
	if !validKeyID(id) {
		return Key{}, false, fmt.Errorf("state: key ring %s: key id must be 1 to %d characters of A-Z a-z 0-9 _ . -", where, maxKeyIDLen)
	}
	raw, ok := decodeSecret(strings.TrimSpace(secret))
	if !ok {
		return Key{}, false, fmt.Errorf("state: key ring %s (id %q): secret is not valid base64", where, id)
	}
	if len(raw) < minSecretLen {
		n := len(raw)
		clear(raw)
		return Key{}, false, fmt.Errorf("state: key ring %s (id %q): secret is %d bytes, need at least %d", where, id, n, minSecretLen)
	}
	return Key{ID: id, Secret: raw}, true, nil
}

// decodeSecret decodes base64 in the standard or URL-safe alphabet, padded
// or not. It reports only success, so that no decoder error text (which
// could quote input) reaches an error message.
func decodeSecret(s string) ([]byte, bool) {
	if s == "" {
		return nil, false
	}
	// Padding, when present, must complete the last 4-character group;
	// it is then dropped and the unpadded decoder does the rest.
	if unpadded := strings.TrimRight(s, "="); len(unpadded) != len(s) {
		if len(s)%4 != 0 || len(s)-len(unpadded) > 2 {
			return nil, false
		}
		s = unpadded
	}
	enc := base64.RawStdEncoding
	if strings.ContainsAny(s, "-_") {
		enc = base64.RawURLEncoding
	}
	if strings.ContainsAny(s, "\r\n") {
		return nil, false
	}
	raw, err := enc.DecodeString(s)
	if err != nil {
		return nil, false
	}
	return raw, true
}
