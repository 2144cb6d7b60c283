package streamablehttp

import (
	"net/http"
	"testing"

	"github.com/stretchr/testify/assert"
)

// A 202 carries no body and says so: Content-Length: 0, not a chunked
// body whose end comes in a later write. The handler's deadline flush
// (timedWriter.settle) sends the headers before the handler returns, so
// net/http cannot size the body itself and falls back to chunked framing;
// a proxy (or client) that has the headers must then still read the
// terminating chunk from the connection, and loses the answer when that
// connection breaks in between (as a Go ReverseProxy's upstream
// connection does when its Transport tears it down, golang/go#40747).
func TestAcceptedIsFramedWithContentLength(t *testing.T) {
	t.Run("2026-07-28 notification", func(t *testing.T) {
		f := newFixture(t)
		c := toolCall(1, "echo", `{}`).withBody(`{"jsonrpc":"2.0","method":"notifications/initialized","params":{"_meta":`+metaJSON+`}}`).
			withHeader("Mcp-Method", "notifications/initialized").withHeader("Mcp-Name", "")
		resp, body := f.do(t, c)
		assert.Equal(t, http.StatusAccepted, resp.StatusCode, "%s", body)
		assert.Empty(t, body)
		assert.Equal(t, int64(0), resp.ContentLength, "Content-Length of a 202")
		assert.Empty(t, resp.TransferEncoding, "Transfer-Encoding of a 202")
	})
	t.Run("2025-11-25 notification and answer", func(t *testing.T) {
		f := newLegacyFixture(t, nil, nil)
		c := f.client(t, "")
		c.initialize(`{"elicitation":{},"sampling":{}}`, "2025-11-25")
		for _, body := range []string{
			`{"jsonrpc":"2.0","method":"notifications/initialized"}`,
			`{"jsonrpc":"2.0","id":99,"result":{"action":"decline"}}`,
		} {
			resp, out := c.post(body)
			assert.Equal(t, http.StatusAccepted, resp.StatusCode, "%s", out)
			assert.Empty(t, out)
			assert.Equal(t, int64(0), resp.ContentLength, "Content-Length of the 202 to %s", body)
			assert.Empty(t, resp.TransferEncoding, "Transfer-Encoding of the 202 to %s", body)
		}
	})
}
