package mrtr

import (
	"testing"

	"github.com/stretchr/testify/require"
)

func sampleJournal() *journal {
	j := &journal{start: 1764650000000}
	copy(j.callID[:], "0123456789abcdef")
	j.entries = []jentry{
		{tag: tagAnswer, kind: kindElicitForm, key: "a", digest: [digestLen]byte{1}, value: []byte(`{"action":"accept","content":{"name":"Ada"}}`)},
		{tag: tagAnswer, flags: flagInline, kind: kindSampling, attempts: 2, key: "b", value: []byte(`{"role":"assistant"}`)},
		{tag: tagPending, flags: flagChanged, kind: kindRoots, key: "c"},
		{tag: tagMemo, key: "m", digest: [digestLen]byte{9}, value: []byte(`42`)},
	}
	return j
}

func TestJournalRoundTrip(t *testing.T) {
	j := sampleJournal()
	b := appendJournal(nil, j)
	got, err := decodeJournal(b)
	require.NoError(t, err)
	require.True(t, equalJournal(j, got))
	require.Equal(t, b, appendJournal(nil, got), "one encoding per journal")

	// Every truncation, and a trailing byte, is refused.
	for n := 0; n < len(b); n++ {
		_, err := decodeJournal(b[:n])
		require.Error(t, err, "truncated to %d bytes", n)
	}
	_, err = decodeJournal(append(append([]byte(nil), b...), 0))
	require.Error(t, err)

	// Entries out of order, or repeated, are refused.
	j.entries[0], j.entries[1] = j.entries[1], j.entries[0]
	_, err = decodeJournal(appendJournal(nil, j))
	require.Error(t, err)
	j = sampleJournal()
	j.entries[1].key = "a"
	_, err = decodeJournal(appendJournal(nil, j))
	require.Error(t, err)
	// A pending entry carries no value, a memo no kind.
	j = sampleJournal()
	j.entries[2].value = []byte("x")
	_, err = decodeJournal(appendJournal(nil, j))
	require.Error(t, err)
	j = sampleJournal()
	j.entries[3].kind = kindRoots
	_, err = decodeJournal(appendJournal(nil, j))
	require.Error(t, err)
}

// FuzzJournal: decoding never panics, and whatever decodes re-encodes to
// the same bytes. A journal is only read from an authenticated state, but
// it is decoded as untrusted input all the same.
func FuzzJournal(f *testing.F) {
	f.Add(appendJournal(nil, sampleJournal()))
	f.Add(appendJournal(nil, &journal{}))
	f.Fuzz(func(t *testing.T, b []byte) {
		j, err := decodeJournal(b)
		if err != nil {
			return
		}
		require.Equal(t, b, appendJournal(nil, j))
	})
}
