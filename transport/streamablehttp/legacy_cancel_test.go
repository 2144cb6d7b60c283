package streamablehttp

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mrtrkit/mrtrkit/internal/wire"
)

// The initialize era on the wire: cancellation of a bridged call.

// notifications/cancelled for the outer request cancels the call: its
// open questions are withdrawn on its stream, which then ends without a
// response. A client that goes away cancels the call too.
func TestLegacyCancellation(t *testing.T) {
	f := newLegacyFixture(t, nil, nil)
	c := f.client(t, "")
	c.initialize(`{"elicitation":{},"sampling":{}}`, "2025-11-25")

	s := c.open(http.MethodPost, lgCall("outer", "pair", `{}`))
	for _, want := range []string{`1`, `2`} {
		m, _, ok := s.msg(5 * time.Second)
		require.True(t, ok)
		assert.Equal(t, want, string(m.ID))
	}
	resp, body := c.post(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"outer","reason":"changed my mind"}}`)
	assert.Equal(t, http.StatusAccepted, resp.StatusCode)
	assert.Empty(t, body)
	var withdrawn []string
	for {
		m, raw, ok := s.msg(5 * time.Second)
		if !ok {
			break
		}
		require.Equal(t, "notifications/cancelled", m.Method, "after cancellation the stream carries %s", raw)
		var p struct {
			RequestID json.RawMessage `json:"requestId"`
		}
		require.NoError(t, json.Unmarshal(m.Params, &p))
		withdrawn = append(withdrawn, string(p.RequestID))
	}
	assert.ElementsMatch(t, []string{"1", "2"}, withdrawn)
	assert.Len(t, f.of("pair"), 1, "no retry")
	c.answer(lgResult(json.RawMessage(`1`), `{"action":"decline"}`))

	// Cancelling a call that is running (not waiting for answers): its
	// context ends, and it gets no response.
	held := make(chan *http.Response, 1)
	go func() {
		resp, err := c.hc.Do(c.request(context.Background(), http.MethodPost, lgCall(7, "hold", `{}`)))
		if err == nil {
			held <- resp
		}
	}()
	<-f.holding
	resp, _ = c.post(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":7}}`)
	assert.Equal(t, http.StatusAccepted, resp.StatusCode)
	assert.ErrorContains(t, <-f.held, "cancelled by the client")
	select {
	case resp := <-held:
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		assert.Equal(t, http.StatusOK, resp.StatusCode)
		assert.Empty(t, body, "a cancelled request gets no response")
	case <-time.After(5 * time.Second):
		t.Fatal("the cancelled request did not end")
	}

	// The client goes away while a question is open.
	s = c.open(http.MethodPost, lgCall(8, "sampler", `{}`))
	m, _, ok := s.msg(5 * time.Second)
	require.True(t, ok)
	require.Equal(t, wire.MethodCreateMessage, m.Method)
	s.cancel()
	lgNoLeftovers(t)
	c.answer(lgStandard(m)) // late: 202
	assert.Len(t, f.of("sampler"), 1, "no retry")

	// The client goes away while the handler runs: its context ends.
	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		resp, err := c.hc.Do(c.request(ctx, http.MethodPost, lgCall(9, "hold", `{}`)))
		if err == nil {
			resp.Body.Close()
		}
	}()
	<-f.holding
	cancel()
	assert.ErrorIs(t, <-f.held, context.Canceled)
	lgNoLeftovers(t)

	// The session serves on.
	o := c.exchange(lgCall(10, "sampler", `{}`), lgStandard)
	assert.Equal(t, "sampled drafted", o.tool(t).Content[0].Text)

	// DELETE while a call waits for answers: its questions are withdrawn
	// and it gets no response.
	s = c.open(http.MethodPost, lgCall(11, "pair", `{}`))
	for range 2 {
		_, _, ok := s.msg(5 * time.Second)
		require.True(t, ok)
	}
	resp, _ = c.do(http.MethodDelete, "")
	require.Equal(t, http.StatusNoContent, resp.StatusCode)
	withdrawn = nil
	for {
		m, raw, ok := s.msg(5 * time.Second)
		if !ok {
			break
		}
		require.Equal(t, "notifications/cancelled", m.Method, "after DELETE the stream carries %s", raw)
		withdrawn = append(withdrawn, string(m.Params))
	}
	assert.Len(t, withdrawn, 2)
	lgNoLeftovers(t)
}
