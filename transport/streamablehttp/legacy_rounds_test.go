package streamablehttp

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mrtrkit/mrtrkit/internal/wire"
)

// The initialize era on the wire: the rounds of a call over the POST's
// event stream, and the capability gate on them.

// A three-round tools/call over HTTP: every question comes on the POST's
// own event stream as a real request, the client answers each with a POST,
// and the final response carries nothing of the modern wire.
func TestLegacyRoundsOverTheStream(t *testing.T) {
	f := newLegacyFixture(t, nil, nil)
	c := f.client(t, "carol")
	c.initialize(`{"sampling":{},"elicitation":{"form":{},"url":{}},"roots":{}}`, "2025-11-25")

	o := c.exchange(lgCall("t1", "trio", `{}`), lgStandard)
	assert.Equal(t, http.StatusOK, o.status)
	assert.Equal(t, "text/event-stream", o.contentType)
	assert.Equal(t, `"t1"`, string(o.final.ID))
	r := o.tool(t)
	assert.False(t, r.IsError)
	assert.Equal(t, "r1 v-name drafted file:///home/u accept", r.Content[0].Text)
	assert.Equal(t, []int64{1, 2, 3, 4}, o.legIDs(t))
	var methods []string
	for _, q := range o.requests {
		methods = append(methods, q.Method)
	}
	assert.Equal(t, []string{wire.MethodElicit, wire.MethodCreateMessage, wire.MethodListRoots, wire.MethodElicit}, methods)
	assert.Contains(t, string(o.requests[3].Params), `"elicitationId":"`)
	assert.Empty(t, o.notes)

	// Each retry carried exactly that round's answers ("name" is a static
	// ask: carried again, it would show on a later round).
	seen := f.of("trio")
	require.Len(t, seen, 4)
	for i, want := range [][]string{{}, {"name"}, {"draft", "roots"}, {"go"}} {
		assert.ElementsMatch(t, want, seen[i].keys, "round %d", i)
		assert.Equal(t, i, seen[i].round)
		assert.Equal(t, "carol", seen[i].who)
	}

	// prompts/get and resources/read go through rounds the same way, and
	// the session's count goes on.
	o = c.exchange(`{"jsonrpc":"2.0","id":2,"method":"prompts/get","params":{"name":"pwiz"}}`, lgStandard)
	require.Nil(t, o.final.Error)
	assert.JSONEq(t, `{"messages":[{"role":"user","content":{"type":"text","text":"about v-topic"}}]}`, string(o.final.Result))
	assert.Equal(t, []int64{5}, o.legIDs(t))
	o = c.exchange(`{"jsonrpc":"2.0","id":3,"method":"resources/read","params":{"uri":"file:///wiz.txt"}}`, lgStandard)
	require.Nil(t, o.final.Error)
	assert.JSONEq(t, `{"contents":[{"uri":"file:///wiz.txt","mimeType":"text/plain","text":"root file:///home/u"}]}`, string(o.final.Result))
	assert.Equal(t, []int64{6}, o.legIDs(t))

	// A call that asks nothing is answered with plain JSON.
	o = c.exchange(lgCall(4, "echo", `{"a":1}`), nil)
	assert.Equal(t, "application/json", o.contentType)
	assert.Equal(t, `echo {"a":1}`, o.tool(t).Content[0].Text)
}

// For every number of rounds up to the server's limit, state-only rounds
// included, nothing of the modern wire reaches the client; past the limit
// the call is stopped with an isError result. And the modern era, at the
// same endpoint, never issues a session.
func TestLegacyNoLeakAtAnyRound(t *testing.T) {
	f := newLegacyFixture(t, nil, nil)
	c := f.client(t, "")
	c.initialize(`{"elicitation":{}}`, "2025-11-25")
	next := int64(0)
	for n := 1; n <= lgRounds; n++ {
		for _, stateOnly := range []string{`[]`, fmt.Sprintf(`[%d]`, n-1)} {
			args := fmt.Sprintf(`{"n":%d,"stateOnly":%s}`, n, stateOnly)
			o := c.exchange(lgCall(n, "deep", args), lgStandard)
			assert.Equal(t, fmt.Sprintf("rounds=%d", n), o.tool(t).Content[0].Text, args)
			for _, raw := range o.raw {
				lgNoModern(t, raw)
				assert.NotContains(t, string(raw), "input_required")
			}
			want := n
			if stateOnly != `[]` {
				want--
			}
			require.Len(t, o.requests, want, args)
			for _, id := range o.legIDs(t) {
				next++
				assert.Equal(t, next, id, "leg ids count from 1 per session")
			}
		}
	}
	o := c.exchange(lgCall("over", "deep", fmt.Sprintf(`{"n":%d}`, lgRounds+1)), lgStandard)
	r := o.tool(t)
	assert.True(t, r.IsError)
	assert.Contains(t, r.Content[0].Text, fmt.Sprintf("more than %d rounds", lgRounds))
	lgNoModern(t, o.finalRaw)

	// A modern request, even one carrying a legacy session id, is served
	// by the modern era: a modern result, no Mcp-Session-Id.
	modern := toolCall(1, "echo", `{}`, [2]string{hdrSessionID, c.sid})
	req, err := modern.request(context.Background(), strings.TrimSuffix(f.url, defaultPath))
	require.NoError(t, err)
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	assert.Equal(t, http.StatusOK, resp.StatusCode, "%s", body)
	assert.Contains(t, string(body), `"resultType":"complete"`)
	assert.Empty(t, resp.Header.Values(hdrSessionID))
}

// A question the session's client did not declare at initialize is not
// asked: tools/call gets an isError result; url-mode questions carry an
// elicitationId.
func TestLegacyCapabilityGate(t *testing.T) {
	f := newLegacyFixture(t, nil, nil)
	c := f.client(t, "")
	c.initialize(`{"elicitation":{}}`, "2025-06-18")
	o := c.exchange(lgCall(1, "sampler", `{}`), lgStandard)
	assert.Equal(t, "application/json", o.contentType)
	r := o.tool(t)
	assert.True(t, r.IsError)
	assert.Contains(t, r.Content[0].Text, "did not declare it at initialize")
	assert.Empty(t, o.requests)

	o = c.exchange(`{"jsonrpc":"2.0","id":2,"method":"resources/read","params":{"uri":"file:///wiz.txt"}}`, lgStandard)
	require.NotNil(t, o.final.Error, "%s", o.finalRaw)
	assert.Equal(t, -32603, o.final.Error.Code)

	u := f.client(t, "")
	u.initialize(`{"elicitation":{"url":{}}}`, "2025-11-25")
	o = u.exchange(lgCall(1, "url", `{}`), lgStandard)
	assert.Equal(t, "url accept", o.tool(t).Content[0].Text)
	require.Len(t, o.requests, 1)
	var p map[string]string
	require.NoError(t, json.Unmarshal(o.requests[0].Params, &p))
	assert.Regexp(t, `^[0-9a-f]{24}$`, p["elicitationId"])
	assert.Equal(t, "url", p["mode"])
	assert.Equal(t, "https://example.com/sign-in", p["url"])
	assert.Equal(t, "Sign in", p["message"])
}
