package state

import (
	"encoding/base64"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Distinct 32-byte secrets in the encodings ParseKeyRing accepts.
var (
	secretA = []byte("0123456789abcdef0123456789abcdef")
	secretB = append([]byte{0xfb, 0xff, 0xfe}, []byte("-url-safe-characters-needed-for-")...)
)

func TestParseKeyRing(t *testing.T) {
	for _, enc := range []*base64.Encoding{base64.StdEncoding, base64.RawStdEncoding, base64.URLEncoding, base64.RawURLEncoding} {
		s := " k2 : " + enc.EncodeToString(secretB) + " ,\n\tk1:" + enc.EncodeToString(secretA) + " , "
		ring, err := ParseKeyRing(s)
		require.NoError(t, err, s)
		assert.Equal(t, []string{"k2", "k1"}, ring.IDs())
		assert.Equal(t, secretB, ring.keys[0].Secret)
		assert.Equal(t, secretA, ring.keys[1].Secret)
	}
}

func TestParseKeyRingErrors(t *testing.T) {
	short := base64.StdEncoding.EncodeToString([]byte("sixteen byte key"))
	good := base64.StdEncoding.EncodeToString(secretA)
	// The bad secrets here are long enough that leaking them would show.
	badB64 := "QUJDREVGR0hJSktMTU5PUFFSU1RVVldYWVo*MTIzNDU2Nzg5MA"
	mixed := base64.StdEncoding.EncodeToString(secretB)[:20] + "-_" + "QUJDREVGR0hJSktMTU5PUFFSU1RV"
	cases := []struct {
		name, in, contains string
		secrets            []string
	}{
		{"empty", "", "no keys", nil},
		{"blank", " ,  , ", "no keys", nil},
		{"short key", "k1:" + short, `entry 1 (id "k1"): secret is 16 bytes, need at least 32`, []string{short}},
		{"duplicate id", "k1:" + good + ",k1:" + good, `duplicate key id "k1"`, []string{good}},
		{"malformed base64", "k1:" + good + ",k2:" + badB64, `entry 2 (id "k2"): secret is not valid base64`, []string{badB64}},
		{"mixed alphabets", "k2:" + mixed, "not valid base64", []string{mixed}},
		{"bad padding", "k1:" + good + "=", "not valid base64", []string{good}},
		{"too much padding", "k1:" + strings.TrimRight(good, "=") + "===", "not valid base64", []string{strings.TrimRight(good, "=")}},
		{"empty secret", "k1:", "not valid base64", nil},
		{"missing colon", good, "entry 1: expected id:secret", []string{good}},
		{"bad id char", "k 1:" + good, "entry 1: key id must be", []string{good}},
		{"bad id slash", "a/b:" + good, "entry 1: key id must be", []string{good}},
		{"empty id", ":" + good, "entry 1: key id must be", []string{good}},
		{"long id", strings.Repeat("k", 33) + ":" + good, "key id must be", []string{good}},
		{"newline inside secret", "k1:" + good[:20] + "\n" + good[20:], "not valid base64", []string{good[:20], good[20:]}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			ring, err := ParseKeyRing(tc.in)
			require.Error(t, err)
			assert.Nil(t, ring)
			assert.Contains(t, err.Error(), tc.contains)
			for _, s := range tc.secrets {
				assert.NotContains(t, err.Error(), s, "error leaks the secret")
			}
		})
	}
}

func TestParseKeyRingLongestID(t *testing.T) {
	id := "A-z_0.9" + strings.Repeat("x", 25)
	require.Len(t, id, 32)
	ring, err := ParseKeyRing(id + ":" + base64.StdEncoding.EncodeToString(secretA))
	require.NoError(t, err)
	assert.Equal(t, []string{id}, ring.IDs())
}

func TestNewKeyRing(t *testing.T) {
	secret := append([]byte(nil), secretA...)
	ring, err := NewKeyRing(Key{ID: "a", Secret: secret}, Key{ID: "b", Secret: secretB})
	require.NoError(t, err)
	clear(secret)
	assert.Equal(t, secretA, ring.keys[0].Secret, "secret copied")
	assert.Equal(t, []string{"a", "b"}, ring.IDs())

	_, err = NewKeyRing()
	require.Error(t, err)
	_, err = NewKeyRing(Key{ID: "a", Secret: secretA[:31]})
	require.ErrorContains(t, err, "31 bytes")
	_, err = NewKeyRing(Key{ID: "a", Secret: secretA}, Key{ID: "a", Secret: secretB})
	require.ErrorContains(t, err, "duplicate")
	_, err = NewKeyRing(Key{ID: "é", Secret: secretA})
	require.Error(t, err)
	_, err = NewKeyRing(Key{ID: "", Secret: secretA})
	require.Error(t, err)

	var nilRing *KeyRing
	assert.Nil(t, nilRing.IDs())
}

func TestLoadKeyRingFile(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "keys")
	content := "# rotated 2026-07-01\n\n" +
		"  k3:" + base64.RawURLEncoding.EncodeToString(secretB) + "\n" +
		"   # old keys below\n" +
		"k2:" + base64.StdEncoding.EncodeToString(secretA) + " , k1:" + base64.RawStdEncoding.EncodeToString(secretB) + "\r\n" +
		"\n"
	require.NoError(t, os.WriteFile(path, []byte(content), 0o600))
	ring, err := LoadKeyRingFile(path)
	require.NoError(t, err)
	assert.Equal(t, []string{"k3", "k2", "k1"}, ring.IDs())

	bad := "# comment\nk1:" + base64.StdEncoding.EncodeToString(secretA) + "\nk2:" + base64.StdEncoding.EncodeToString(secretA[:20]) + "\n"
	require.NoError(t, os.WriteFile(path, []byte(bad), 0o600))
	_, err = LoadKeyRingFile(path)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "line 3")
	assert.Contains(t, err.Error(), `"k2"`)
	assert.NotContains(t, err.Error(), base64.StdEncoding.EncodeToString(secretA[:20]))

	require.NoError(t, os.WriteFile(path, []byte("# nothing here\n\n"), 0o600))
	_, err = LoadKeyRingFile(path)
	require.ErrorContains(t, err, "no keys")

	_, err = LoadKeyRingFile(filepath.Join(dir, "missing"))
	require.Error(t, err)
}

func TestKeyRingFromEnv(t *testing.T) {
	t.Setenv(EnvKeys, "")
	ring, ok, err := KeyRingFromEnv()
	require.NoError(t, err)
	assert.False(t, ok)
	assert.Nil(t, ring)

	t.Setenv(EnvKeys, "   ")
	_, ok, err = KeyRingFromEnv()
	require.NoError(t, err)
	assert.False(t, ok)

	t.Setenv(EnvKeys, "k2:"+base64.StdEncoding.EncodeToString(secretB)+",k1:"+base64.StdEncoding.EncodeToString(secretA))
	ring, ok, err = KeyRingFromEnv()
	require.NoError(t, err)
	assert.True(t, ok)
	assert.Equal(t, []string{"k2", "k1"}, ring.IDs())

	short := base64.StdEncoding.EncodeToString([]byte("a short secret!!"))
	t.Setenv(EnvKeys, "k1:"+short)
	ring, ok, err = KeyRingFromEnv()
	require.Error(t, err)
	assert.True(t, ok)
	assert.Nil(t, ring)
	assert.Contains(t, err.Error(), EnvKeys)
	assert.NotContains(t, err.Error(), short)

	os.Unsetenv(EnvKeys)
	ring, ok, err = KeyRingFromEnv()
	require.NoError(t, err)
	assert.False(t, ok)
	assert.Nil(t, ring)
}

func TestGenerateKeyRing(t *testing.T) {
	a, err := GenerateKeyRing()
	require.NoError(t, err)
	b, err := GenerateKeyRing()
	require.NoError(t, err)
	assert.Equal(t, []string{"ephemeral"}, a.IDs())
	assert.Len(t, a.keys[0].Secret, 32)
	assert.NotEqual(t, a.keys[0].Secret, b.keys[0].Secret)

	ca, err := NewAEAD(a)
	require.NoError(t, err)
	cb, err := NewAEAD(b)
	require.NoError(t, err)
	token, err := ca.Seal(Claims{Round: 1})
	require.NoError(t, err)
	_, err = openVerify(ca, token, Binding{})
	require.NoError(t, err)
	_, err = cb.Open(token)
	requireReason(t, err, ReasonIntegrity)
}

// The key file of docs/deployment.md ("Keys from a mounted secret"), read
// from the guide itself, loads as shown: comments on lines of their own
// and after keys, blank lines.
func TestLoadKeyRingFileOfTheGuide(t *testing.T) {
	guide, err := os.ReadFile(filepath.Join("..", "docs", "deployment.md"))
	require.NoError(t, err)
	_, after, found := strings.Cut(string(guide), "### Keys from a mounted secret")
	require.True(t, found, "the guide's section on key files")
	_, block, found := strings.Cut(after, "```\n")
	require.True(t, found, "the key file block")
	block, _, found = strings.Cut(block, "```")
	require.True(t, found)
	require.Contains(t, block, "# the new key: seals", "the example has trailing comments")

	path := filepath.Join(t.TempDir(), "state-keys")
	require.NoError(t, os.WriteFile(path, []byte(block), 0o600))
	ring, err := LoadKeyRingFile(path)
	require.NoError(t, err, "the guide's key file:\n%s", block)
	assert.Equal(t, []string{"k2", "k1"}, ring.IDs())
}

// Comments run from a '#' at the start of a line or after a blank to the
// end of the line; a '#' stuck to a secret is an error naming the line,
// never the secret.
func TestKeyRingFileComments(t *testing.T) {
	a, b := base64.StdEncoding.EncodeToString(secretA), base64.RawURLEncoding.EncodeToString(secretB)
	path := filepath.Join(t.TempDir(), "keys")
	load := func(content string) (*KeyRing, error) {
		t.Helper()
		require.NoError(t, os.WriteFile(path, []byte(content), 0o600))
		return LoadKeyRingFile(path)
	}
	ring, err := load("#top\n\t# indented\nk2:" + a + "\t# tab before\nk1:" + b + " #no space after\n  # k0:" + a + "\n")
	require.NoError(t, err)
	assert.Equal(t, []string{"k2", "k1"}, ring.IDs())
	ring, err = load("k2:" + a + " , k1:" + b + "   # both on one line")
	require.NoError(t, err)
	assert.Equal(t, []string{"k2", "k1"}, ring.IDs())

	_, err = load("k2:" + a + "\nk1:" + b + "# stuck\n")
	require.Error(t, err)
	assert.Contains(t, err.Error(), "line 2")
	assert.Contains(t, err.Error(), `"k1"`)
	assert.Contains(t, err.Error(), "not valid base64")
	assert.NotContains(t, err.Error(), b)

	_, err = load("# only comments # here\n   # and here\n")
	require.ErrorContains(t, err, "no keys")
}
