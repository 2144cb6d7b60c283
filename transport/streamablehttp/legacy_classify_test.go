package streamablehttp

import (
	"context"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The initialize era on the wire: which era a request at the shared
// endpoint belongs to.

// A request is the modern era's when it claims a version in _meta, or
// when it names a modern version in its header; the initialize era's
// otherwise. Without WithLegacy the endpoint answers POST only.
func TestLegacyClassification(t *testing.T) {
	f := newLegacyFixture(t, nil, nil)
	c := f.client(t, "")
	c.initialize(`{}`, "2025-11-25")
	base := strings.TrimSuffix(f.url, defaultPath)
	send := func(cl call) (*http.Response, []byte) {
		t.Helper()
		req, err := cl.request(context.Background(), base)
		require.NoError(t, err)
		resp, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp, b
	}

	// A _meta claim is modern, whatever else: even with a session id and a
	// legacy version header (the server then refuses the mismatch).
	resp, body := send(toolCall(1, "echo", `{}`).withHeader(hdrSessionID, c.sid))
	assert.Equal(t, http.StatusOK, resp.StatusCode)
	assert.Contains(t, string(body), `"resultType":"complete"`)
	resp, body = send(toolCall(1, "echo", `{}`).withHeader(hdrSessionID, c.sid).withHeader("MCP-Protocol-Version", "2025-11-25"))
	assert.Equal(t, http.StatusBadRequest, resp.StatusCode, "%s", body)
	assert.Equal(t, -32020, decodeRPC(t, body).Error.Code, "a modern request with a mismatched header")

	// No claim under a modern header: modern, refused for its missing _meta.
	noClaim := `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"echo","arguments":{}}}`
	resp, body = send(toolCall(2, "echo", `{}`).withBody(noClaim).withHeader(hdrSessionID, c.sid))
	assert.Equal(t, http.StatusBadRequest, resp.StatusCode, "%s", body)
	assert.Equal(t, -32602, decodeRPC(t, body).Error.Code)
	assert.Empty(t, resp.Header.Values(hdrSessionID))

	// No claim, no header: the initialize era's.
	resp, body = c.post(noClaim, [2]string{"MCP-Protocol-Version", ""})
	assert.Equal(t, http.StatusOK, resp.StatusCode)
	assert.Equal(t, "echo {}", lgOutcome{final: decodeRPC(t, body), finalRaw: body}.tool(t).Content[0].Text)
	resp, body = c.post(noClaim, [2]string{"MCP-Protocol-Version", ""}, [2]string{hdrSessionID, ""})
	assert.Equal(t, http.StatusBadRequest, resp.StatusCode)
	assert.Contains(t, string(body), "Mcp-Session-Id header is required")
	// No claim under an unknown version: 400.
	resp, body = c.post(noClaim, [2]string{"MCP-Protocol-Version", "1999-01-01"})
	assert.Equal(t, http.StatusBadRequest, resp.StatusCode)
	assert.Contains(t, string(body), "unsupported MCP-Protocol-Version")

	// Without WithLegacy: GET and DELETE are not allowed, initialize is
	// told the versions served, a POSTed response is refused.
	plain := newFixture(t)
	for _, m := range []string{http.MethodGet, http.MethodDelete} {
		resp, _ := plain.do(t, call{method: m, headers: [][2]string{{"Accept", "text/event-stream"}, {hdrSessionID, c.sid}}})
		assert.Equal(t, http.StatusMethodNotAllowed, resp.StatusCode, m)
		assert.Equal(t, "POST", resp.Header.Get("Allow"))
	}
	jsonHeaders := [][2]string{{"Content-Type", "application/json"}, {"Accept", "application/json, text/event-stream"}}
	resp, body = plain.do(t, call{headers: jsonHeaders, body: `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{}}}`})
	assert.Equal(t, -32022, decodeRPC(t, body).Error.Code, "%s", body)
	assert.Empty(t, resp.Header.Values(hdrSessionID))
	resp, _ = plain.do(t, call{headers: jsonHeaders, body: `{"jsonrpc":"2.0","id":1,"result":{}}`})
	assert.Equal(t, http.StatusBadRequest, resp.StatusCode)

	// With it, every method is allowed.
	resp, _ = c.do(http.MethodPut, "")
	assert.Equal(t, http.StatusMethodNotAllowed, resp.StatusCode)
	assert.Equal(t, "GET, POST, DELETE", resp.Header.Get("Allow"))
}
