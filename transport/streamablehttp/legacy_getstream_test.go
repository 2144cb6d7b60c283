package streamablehttp

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mrtrkit/mrtrkit/mrtr"
)

// The initialize era on the wire: the session's GET stream.

// The GET stream opens at once, carries list changes and the updates of
// subscribed resources in the era's shape, and gives way to a newer one.
func TestLegacyGetStream(t *testing.T) {
	f := newLegacyFixture(t, nil, nil)
	c := f.client(t, "")
	c.initialize(`{}`, "2025-11-25")

	s := c.open(http.MethodGet, "")
	assert.Equal(t, http.StatusOK, s.resp.StatusCode)
	assert.Equal(t, "text/event-stream", s.resp.Header.Get("Content-Type"))
	assert.Empty(t, s.resp.Header.Values(hdrSessionID))
	e, ok := s.next(2 * time.Second)
	require.True(t, ok)
	assert.NotEmpty(t, e.comment, "the stream opens with a comment, before any event")

	// A list change.
	got := lgAwait(t, s, func(i int) {
		require.NoError(t, f.srv.AddTool(mrtr.Tool{Name: fmt.Sprint("added", i), InputSchema: json.RawMessage(`{"type":"object"}`)}, mrtr.HandlerFunc(func(context.Context, *mrtr.Request) (mrtr.Result, error) {
			return lgText("x"), nil
		})))
	})
	assert.Equal(t, `{"jsonrpc":"2.0","method":"notifications/tools/list_changed"}`, got)

	// A subscribed resource's update.
	resp, body := c.post(`{"jsonrpc":"2.0","id":1,"method":"resources/subscribe","params":{"uri":"file:///plain.txt"}}`)
	require.Equal(t, http.StatusOK, resp.StatusCode)
	assert.Equal(t, `{"jsonrpc":"2.0","id":1,"result":{}}`, string(body))
	got = lgAwait(t, s, func(int) { f.srv.NotifyResourceUpdated("file:///plain.txt") })
	assert.Equal(t, `{"jsonrpc":"2.0","method":"notifications/resources/updated","params":{"uri":"file:///plain.txt"}}`, got)

	// A second GET replaces the first, which ends.
	s2 := c.open(http.MethodGet, "")
	e, ok = s2.next(2 * time.Second)
	require.True(t, ok)
	assert.NotEmpty(t, e.comment)
	lgUntilEnd(t, s)
	got = lgAwait(t, s2, func(int) { f.srv.NotifyResourceUpdated("file:///plain.txt") })
	assert.Contains(t, got, "notifications/resources/updated")

	// DELETE ends the stream.
	resp, _ = c.do(http.MethodDelete, "")
	assert.Equal(t, http.StatusNoContent, resp.StatusCode)
	lgUntilEnd(t, s2)
	lgNoLeftovers(t)
}
