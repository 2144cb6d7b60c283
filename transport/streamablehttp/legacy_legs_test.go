package streamablehttp

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mrtrkit/mrtrkit/internal/wire"
	"github.com/mrtrkit/mrtrkit/mrtr/legacy"
)

// The initialize era on the wire: legs that fail (timeouts, refusals,
// late or unasked answers) and calls that run out of time.

// A question that times out, one the client refuses, a late answer, a
// duplicate one, and answers nobody can place: each POSTed answer gets
// 202, and the call ends as the era expects.
func TestLegacyLegFailures(t *testing.T) {
	f := newLegacyFixture(t, nil, []legacy.Option{legacy.WithLegTimeout(150 * time.Millisecond)})
	c := f.client(t, "dave")
	c.initialize(`{"sampling":{},"elicitation":{}}`, "2025-11-25")

	// Timeout: b is answered, a is not.
	var late []rpc
	o := c.exchange(lgCall(1, "pair", `{}`), func(m rpc) string {
		if strings.Contains(string(m.Params), `"B?"`) {
			return lgStandard(m)
		}
		late = append(late, m)
		return ""
	})
	r := o.tool(t)
	assert.True(t, r.IsError)
	assert.Equal(t, `The client did not answer the elicitation/create request "a" within 150ms`, r.Content[0].Text)
	cancelled := o.notesOf("notifications/cancelled")
	require.Len(t, cancelled, 1)
	assert.JSONEq(t, `{"requestId":1,"reason":"timed out"}`, string(cancelled[0].Params))

	// The late answer: 202, and nothing else happens.
	require.Len(t, late, 1)
	c.answer(lgStandard(late[0]))
	assert.Len(t, f.of("pair"), 1, "no retry")

	// Refused: the other question is withdrawn.
	o = c.exchange(lgCall(2, "pair", `{}`), func(m rpc) string {
		if strings.Contains(string(m.Params), `"A?"`) {
			return `{"jsonrpc":"2.0","id":` + string(m.ID) + `,"error":{"code":-1,"message":"User declined to answer"}}`
		}
		return ""
	})
	r = o.tool(t)
	assert.True(t, r.IsError)
	assert.Equal(t, `The client refused the elicitation/create request "a": "User declined to answer"`, r.Content[0].Text)
	assert.Equal(t, []int64{3, 4}, o.legIDs(t))
	require.Len(t, o.notesOf("notifications/cancelled"), 1)
	assert.JSONEq(t, `{"requestId":4,"reason":"another request of the round failed"}`, string(o.notesOf("notifications/cancelled")[0].Params))

	// Duplicates and strays: all 202; the call completes once.
	stranger := f.client(t, "eve")
	o = c.exchange(lgCall(3, "sampler", `{}`), func(m rpc) string {
		a := lgStandard(m)
		stranger.sid = c.sid
		stranger.answer(a)                                 // another principal: dropped
		c.answer(a, [2]string{hdrSessionID, "unknown"})    // an unknown session
		c.answer(a, [2]string{hdrSessionID, ""})           // no session
		c.answer(a, [2]string{"MCP-Protocol-Version", ""}) // the right one
		return a                                           // and again
	})
	assert.Equal(t, "sampled drafted", o.tool(t).Content[0].Text)
	assert.Len(t, f.of("sampler"), 2)

	// Malformed answers are the transport's business: 400 with -32600.
	resp, body := c.post(`{"jsonrpc":"2.0","id":1,"result":7}`)
	assert.Equal(t, http.StatusBadRequest, resp.StatusCode, "%s", body)

	// The session is still fine.
	o = c.exchange(lgCall(4, "sampler", `{}`), lgStandard)
	assert.Equal(t, "sampled drafted", o.tool(t).Content[0].Text)
	assert.Equal(t, []int64{6}, o.legIDs(t))
	lgNoLeftovers(t)
}

// BUG (see mrtr/legacy TestCallTimeoutAnswers): a call that runs past
// WithCallTimeout gets no response; its stream just ends.
func TestLegacyCallTimeout(t *testing.T) {
	f := newLegacyFixture(t, nil, []legacy.Option{legacy.WithCallTimeout(200 * time.Millisecond)})
	c := f.client(t, "")
	c.initialize(`{"sampling":{}}`, "2025-11-25")
	s := c.open(http.MethodPost, lgCall(1, "sampler", `{}`))
	m, _, ok := s.msg(5 * time.Second)
	require.True(t, ok)
	require.Equal(t, wire.MethodCreateMessage, m.Method)
	var final []byte
	for {
		m, raw, ok := s.msg(5 * time.Second)
		if !ok {
			break
		}
		if m.Method == "" {
			final = raw
		}
	}
	assert.NotEmpty(t, final, "the call's stream ended without a response")
}
