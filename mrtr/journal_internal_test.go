package mrtr

import (
	"encoding/hex"
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
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

// Recorded elicitation answers are read back as they were: the fast path
// agrees with encodeAnswer for every action, with and without content.
func TestRecordedElicitRoundTrip(t *testing.T) {
	for _, a := range []*ElicitResult{
		{Action: Accepted, Content: map[string]any{"name": "Ada", "n": 2.0, "ok": true}, raw: []byte(`{"name":"Ada","n":2,"ok":true}`)},
		{Action: Declined},
		{Action: Cancelled},
		{Action: Accepted},
	} {
		b, err := encodeAnswer(a)
		require.NoError(t, err)
		got, ok := readRecordedElicit(b, false)
		require.True(t, ok, "%s", b)
		require.Equal(t, a.Action, got.Action)
		require.Equal(t, a.Content, got.Content)
		require.Equal(t, string(a.raw), string(got.raw))
		slow, err := decodeRecorded(kindElicitForm, b, false)
		require.NoError(t, err)
		require.Equal(t, got, slow)

		// For an asker that reads ContentJSON only: the same content,
		// without the map.
		lean, ok := readRecordedElicit(b, true)
		require.True(t, ok, "%s", b)
		require.Equal(t, a.Action, lean.Action)
		require.Nil(t, lean.Content)
		require.Equal(t, string(a.ContentJSON()), string(lean.ContentJSON()))
	}
	_, ok := readRecordedElicit([]byte(`{"action":"maybe"}`), false)
	require.False(t, ok)

	// Any other form of an answer (members in another order, spaces) is
	// read as the client's answers are, and an unknown action refused.
	other, err := decodeRecorded(kindElicitForm, []byte(`{ "content": {"name":"Ada"}, "action": "accept" }`), false)
	require.NoError(t, err)
	require.Equal(t, Accepted, other.(*ElicitResult).Action)
	require.Equal(t, map[string]any{"name": "Ada"}, other.(*ElicitResult).Content)
	_, err = decodeRecorded(kindElicitForm, []byte(`{"action": "maybe"}`), false)
	require.Error(t, err)
}

// readFlatContent decodes what encoding/json decodes, or declines, aliasing its input or not.
func FuzzFlatContent(f *testing.F) {
	for _, s := range []string{`{"name":"Ada","n":2.5,"ok":true,"no":false}`, `{"a":"\u00e9\n","b":-1e-7}`, `{"x":["a","b"]}`, `{}`, `{"n":null}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		var want map[string]any
		if json.Unmarshal(b, &want) != nil || len(b) == 0 || b[0] != '{' {
			return
		}
		for _, alias := range []bool{false, true} {
			got, ok := readFlatContent(b, alias)
			if ok {
				require.Equal(t, want, got, "%s", b)
			}
		}
	})
}

// decodeJournal is decodeJournalInto into a new journal.
func decodeJournal(b []byte) (*journal, error) {
	j := &journal{}
	if err := decodeJournalInto(j, b, nil); err != nil {
		return nil, err
	}
	return j, nil
}

// A question's digest is part of every journal in flight: a change to its
// encoding would refuse, as diverged, the calls a deploy finds half done.
// These digests were computed when the encoding was last written.
func TestQuestionDigestIsStable(t *testing.T) {
	temp := 0.5
	for want, q := range map[string]InputRequest{
		"e2b9be8bfdb0e5b227258f0d3bc6f0f1": &ElicitRequest{Message: "What is your name?", RequestedSchema: &ElicitSchema{Type: "object", Properties: map[string]json.RawMessage{"name": json.RawMessage(`{"type":"string"}`)}, Required: []string{"name"}}},
		"3cddc04e24eb4e6597b4adac0f67eaf6": &ElicitRequest{Message: "m", RequestedSchema: &ElicitSchema{Type: "object", Properties: map[string]json.RawMessage{"b": json.RawMessage(`{}`), "a": json.RawMessage(`{"type":"number"}`)}}},
		"871b63d15aa4747c4a091fd2e9a4cc51": &SamplingRequest{Messages: []SamplingMessage{UserText("for Ada")}, MaxTokens: 50},
		"8b1521daa6bccbf9d7569624326df5c4": &SamplingRequest{Messages: []SamplingMessage{UserText("x")}, MaxTokens: 300, Temperature: &temp, StopSequences: []string{"a"}, Metadata: Object{"m": json.RawMessage("2")}, SystemPrompt: "s"},
		"e52d9c508c502347344d8c07ad91cbd6": &RootsRequest{},
	} {
		d := questionDigest(q, nil)
		require.Equal(t, want, hex.EncodeToString(d[:]), "%#v", q)
	}
	// A question identified by a fingerprint of its asker's (BindTo, as
	// typed.Form asks).
	for want, q := range map[string]InputRequest{
		"19ddaa8c4972ac3105fa28b1bb962788": &ElicitRequest{Message: "m"},
		"6ff60ea3310351791b2f4ece9746941b": &SamplingRequest{},
	} {
		d := questionDigest(q, []byte("fingerprint"))
		require.Equal(t, want, hex.EncodeToString(d[:]), "%#v", q)
	}
}

// A compiled ask (askhook.Compile, as typed.Form asks) identifies its
// question by the digest BindTo gives, computed once: the digest every
// form question under that fingerprint has, whatever its message,
// schema or mode; only form questions take it. Among other options it
// applies what it was compiled from, in its place.
func TestCompiledAskDigest(t *testing.T) {
	fp := []byte("fingerprint")
	c := compileAsk(BindTo(fp), askOptionFunc(func(c *askConfig) { c.contentJSON = true })).(*compiledAsk)
	require.NotNil(t, c.bound)
	form := &ElicitRequest{Message: "m"}
	d := askDigest(form, &c.cfg, c.bound)
	assert.Equal(t, "19ddaa8c4972ac3105fa28b1bb962788", hex.EncodeToString(d[:]), "as questionDigest(q, fp) pins it")
	for _, q := range []InputRequest{
		&ElicitRequest{Mode: "form", Message: "other", RequestedSchema: &ElicitSchema{Type: "object", Properties: map[string]json.RawMessage{"a": json.RawMessage(`{}`)}}},
		&ElicitRequest{Mode: "url", Message: "m", URL: "https://example.com/"},
		&SamplingRequest{},
	} {
		assert.Equal(t, questionDigest(q, fp), askDigest(q, &c.cfg, c.bound), "%#v", q)
	}

	// Among other options: the options it was compiled from, in its
	// place (the digest computed ahead stays with the compiled ask).
	var dst askConfig
	CheckAnswer(nil, nil, 7).applyAsk(&dst)
	c.applyAsk(&dst)
	assert.Equal(t, 7, dst.max, "an option before it is kept")
	assert.True(t, dst.contentJSON)
	assert.Equal(t, questionDigest(form, fp), askDigest(form, &dst, nil))
	BindTo([]byte("other")).applyAsk(&dst)
	assert.Equal(t, questionDigest(form, []byte("other")), askDigest(form, &dst, nil))

	plain := compileAsk(askOptionFunc(func(c *askConfig) { c.contentJSON = true })).(*compiledAsk)
	assert.Nil(t, plain.bound)
	assert.Equal(t, questionDigest(form, nil), askDigest(form, &plain.cfg, plain.bound))
}
