package streamablehttp

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mrtrkit/mrtrkit/mrtr/legacy"
)

// The initialize era on the wire: a session from initialize to DELETE,
// the refusals of requests without a session or with a wrong one, and
// its expiry.

func TestLegacySessionLifecycle(t *testing.T) {
	f := newLegacyFixture(t, nil, nil)
	c := f.client(t, "")
	res := c.initialize(`{"roots":{}}`, "2025-06-18")
	var init struct {
		ProtocolVersion string                     `json:"protocolVersion"`
		Capabilities    map[string]json.RawMessage `json:"capabilities"`
		ServerInfo      map[string]any             `json:"serverInfo"`
		Instructions    string                     `json:"instructions"`
	}
	require.NoError(t, json.Unmarshal(res, &init))
	assert.Equal(t, "2025-06-18", init.ProtocolVersion)
	assert.Equal(t, map[string]any{"name": "both-eras", "version": "2"}, init.ServerInfo)
	assert.Equal(t, "Both eras.", init.Instructions)
	assert.NotContains(t, init.Capabilities, "extensions")
	assert.Contains(t, init.Capabilities, "tools")

	// An unknown version gets the newest served.
	c2 := f.client(t, "")
	res = c2.initialize(`{}`, "2024-11-05")
	assert.Contains(t, string(res), `"protocolVersion":"2025-11-25"`)
	assert.NotEqual(t, c.sid, c2.sid)

	// Empty results are exactly {}.
	for i, m := range []string{
		`"method":"ping"`,
		`"method":"logging/setLevel","params":{"level":"info"}`,
		`"method":"resources/subscribe","params":{"uri":"file:///plain.txt"}`,
		`"method":"resources/unsubscribe","params":{"uri":"file:///plain.txt"}`,
	} {
		resp, body := c.post(fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,%s}`, i+1, m))
		assert.Equal(t, http.StatusOK, resp.StatusCode)
		assert.Equal(t, "application/json", resp.Header.Get("Content-Type"))
		assert.Equal(t, fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"result":{}}`, i+1), string(body), m)
		assert.Empty(t, resp.Header.Values(hdrSessionID))
	}
	// Errors travel in-band, with 200.
	for _, m := range []string{`"method":"server/discover","params":{}`, `"method":"subscriptions/listen","params":{"notifications":{}}`, `"method":"nope"`} {
		resp, body := c.post(`{"jsonrpc":"2.0","id":"x",` + m + `}`)
		assert.Equal(t, http.StatusOK, resp.StatusCode, m)
		e := decodeRPC(t, body)
		require.NotNil(t, e.Error, m)
		assert.Equal(t, -32601, e.Error.Code, m)
		assert.Equal(t, `"x"`, string(e.ID))
	}
	resp, body := c.post(`{"jsonrpc":"2.0","id":9,"method":"tools/list"}`)
	assert.Equal(t, http.StatusOK, resp.StatusCode)
	lgNoModern(t, body)
	assert.Contains(t, string(body), `"name":"trio"`)
	resp, body = c.post(`{"jsonrpc":"2.0","id":10,"method":"resources/read","params":{"uri":"file:///nope"}}`)
	assert.Equal(t, http.StatusOK, resp.StatusCode)
	assert.Equal(t, -32002, decodeRPC(t, body).Error.Code)

	// DELETE ends the session; then it is unknown, to every method.
	resp, body = c.do(http.MethodDelete, "")
	assert.Equal(t, http.StatusNoContent, resp.StatusCode, "%s", body)
	assert.Empty(t, body)
	resp, body = c.post(`{"jsonrpc":"2.0","id":11,"method":"ping"}`)
	assert.Equal(t, http.StatusNotFound, resp.StatusCode)
	e := decodeRPC(t, body)
	require.NotNil(t, e.Error)
	assert.Equal(t, `11`, string(e.ID))
	assert.Contains(t, e.Error.Message, "Session not found")
	resp, _ = c.post(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	assert.Equal(t, http.StatusNotFound, resp.StatusCode)
	resp, _ = c.do(http.MethodDelete, "")
	assert.Equal(t, http.StatusNotFound, resp.StatusCode)
	resp, _ = c.do(http.MethodGet, "")
	assert.Equal(t, http.StatusNotFound, resp.StatusCode)
	resp, _ = c.post(lgCall(12, "echo", `{}`))
	assert.Equal(t, http.StatusNotFound, resp.StatusCode)
	// An answer is still accepted.
	c.answer(`{"jsonrpc":"2.0","id":1,"result":{}}`)

	// The other session is untouched.
	resp, body = c2.post(`{"jsonrpc":"2.0","id":1,"method":"ping"}`)
	assert.Equal(t, http.StatusOK, resp.StatusCode, "%s", body)
}

// 404 for a session this server does not know for the caller; 400 for a
// request without one, or an initialize with one; 400 for a version
// header that is not the session's.
func TestLegacySessionRefusals(t *testing.T) {
	f := newLegacyFixture(t, nil, nil)
	alice := f.client(t, "alice")
	alice.initialize(`{}`, "2025-06-18")
	sid := alice.sid

	ping := `{"jsonrpc":"2.0","id":5,"method":"ping"}`
	status := func(c *lgClient, body string, headers ...[2]string) (int, rpc) {
		t.Helper()
		resp, b := c.post(body, headers...)
		m := rpc{}
		if len(b) > 0 {
			m = decodeRPC(t, b)
			assert.Equal(t, "application/json", resp.Header.Get("Content-Type"))
		}
		return resp.StatusCode, m
	}
	code, _ := status(alice, ping)
	assert.Equal(t, http.StatusOK, code)

	bob := f.client(t, "bob")
	bob.sid = sid
	code, m := status(bob, ping)
	assert.Equal(t, http.StatusNotFound, code, "another principal's session")
	require.NotNil(t, m.Error)
	assert.Equal(t, `5`, string(m.ID))
	anon := f.client(t, "")
	anon.sid = sid
	code, _ = status(anon, ping)
	assert.Equal(t, http.StatusNotFound, code, "an anonymous caller")

	tampered := []byte(sid)
	tampered[len(tampered)/2] ^= 1
	for name, id := range map[string]string{"tampered": string(tampered), "unknown": "d2hhdGV2ZXI", "long": strings.Repeat("x", 5000)} {
		code, _ := status(alice, ping, [2]string{hdrSessionID, id})
		assert.Equal(t, http.StatusNotFound, code, name)
	}

	// Missing: 400, for requests and notifications alike.
	code, m = status(alice, ping, [2]string{hdrSessionID, ""})
	assert.Equal(t, http.StatusBadRequest, code)
	assert.Contains(t, m.Error.Message, "Mcp-Session-Id")
	code, _ = status(alice, `{"jsonrpc":"2.0","method":"notifications/initialized"}`, [2]string{hdrSessionID, ""})
	assert.Equal(t, http.StatusBadRequest, code)

	// Two session headers: 400.
	req := alice.request(context.Background(), http.MethodPost, ping)
	req.Header.Add(hdrSessionID, sid)
	resp, err := alice.hc.Do(req)
	require.NoError(t, err)
	resp.Body.Close()
	assert.Equal(t, http.StatusBadRequest, resp.StatusCode)

	// initialize with a session id: 400, and no new session.
	code, m = status(alice, `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{}}}`, [2]string{"MCP-Protocol-Version", ""})
	assert.Equal(t, http.StatusBadRequest, code)
	assert.Contains(t, m.Error.Message, "initialize")
	// initialize with bad params: in-band -32602, no session.
	fresh := f.client(t, "alice")
	resp, b := fresh.post(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{}}`)
	assert.Equal(t, http.StatusOK, resp.StatusCode)
	assert.Equal(t, -32602, decodeRPC(t, b).Error.Code)
	assert.Empty(t, resp.Header.Values(hdrSessionID))

	// The version header: absent or the session's is fine, another legacy
	// version or an unknown one is not.
	code, _ = status(alice, ping, [2]string{"MCP-Protocol-Version", ""})
	assert.Equal(t, http.StatusOK, code)
	code, m = status(alice, ping, [2]string{"MCP-Protocol-Version", "2025-11-25"})
	assert.Equal(t, http.StatusBadRequest, code)
	assert.Contains(t, m.Error.Message, "session's version")
	code, m = status(alice, ping, [2]string{"MCP-Protocol-Version", "2024-11-05"})
	assert.Equal(t, http.StatusBadRequest, code)
	assert.Contains(t, m.Error.Message, "unsupported MCP-Protocol-Version")
	code, _ = status(alice, ping, [2]string{"MCP-Protocol-Version", "2024-11-05"}, [2]string{hdrSessionID, "unknown"})
	assert.Equal(t, http.StatusBadRequest, code, "an unknown version is refused before the session is looked up")

	// GET and DELETE follow the same rules.
	for _, method := range []string{http.MethodGet, http.MethodDelete} {
		resp, _ := bob.do(method, "")
		assert.Equal(t, http.StatusNotFound, resp.StatusCode, method)
		resp, _ = alice.do(method, "", [2]string{hdrSessionID, ""})
		assert.Equal(t, http.StatusBadRequest, resp.StatusCode, method)
	}
	resp, _ = alice.do(http.MethodGet, "", [2]string{"Accept", "application/json"})
	assert.Equal(t, http.StatusNotAcceptable, resp.StatusCode)

	// bob's DELETE did not end alice's session.
	code, _ = status(alice, ping)
	assert.Equal(t, http.StatusOK, code)
}

// BUG (see mrtr/legacy TestSessionExpiresAtItsLifetime): a session outlives
// WithSessionLifetime by the session codec's 30 s clock skew, so this
// session, with a lifetime of 1 s, is still served 2.5 s after initialize.
func TestLegacySessionExpires(t *testing.T) {
	t.Parallel()
	f := newLegacyFixture(t, nil, []legacy.Option{legacy.WithSessionLifetime(time.Second)})
	c := f.client(t, "")
	c.initialize(`{}`, "2025-11-25")
	resp, _ := c.post(`{"jsonrpc":"2.0","id":1,"method":"ping"}`)
	require.Equal(t, http.StatusOK, resp.StatusCode)
	deadline := time.Now().Add(2500 * time.Millisecond)
	for time.Now().Before(deadline) {
		resp, _ = c.post(`{"jsonrpc":"2.0","id":1,"method":"ping"}`)
		if resp.StatusCode == http.StatusNotFound {
			return
		}
		time.Sleep(100 * time.Millisecond)
	}
	t.Errorf("a session with a lifetime of 1s still answers %d after 2.5s", resp.StatusCode)
}

// BUG: the initialize era requires a 400 for a request whose
// MCP-Protocol-Version is invalid or unsupported ("If the server receives
// a request with an invalid or unsupported MCP-Protocol-Version, it MUST
// respond with 400 Bad Request"). POST checks the header; GET and DELETE
// (era_2025.go, legacyEra.stream and legacyEra.delete) do not look at it:
// a GET opens the session's stream, and a DELETE ends the session, under
// any version.
func TestLegacyVersionHeaderOnGetAndDelete(t *testing.T) {
	f := newLegacyFixture(t, nil, nil)
	c := f.client(t, "")
	c.initialize(`{}`, "2025-06-18")
	for _, v := range []string{"1999-01-01", "2025-11-25", "2026-07-28"} {
		s := c.open(http.MethodGet, "", [2]string{"MCP-Protocol-Version", v})
		assert.Equal(t, http.StatusBadRequest, s.resp.StatusCode, "GET under MCP-Protocol-Version %s", v)
		s.cancel()
		resp, _ := c.do(http.MethodDelete, "", [2]string{"MCP-Protocol-Version", v})
		assert.Equal(t, http.StatusBadRequest, resp.StatusCode, "DELETE under MCP-Protocol-Version %s", v)
		if resp.StatusCode == http.StatusNoContent {
			c.sid, c.version = "", "" // deleted: start again
			c.initialize(`{}`, "2025-06-18")
		}
	}
}

// BUG (see mrtr/legacy TestClientInfoNeverSpoilsTheSessionID): a client
// whose clientInfo holds characters encoding/json escapes gets a session
// id the endpoint never accepts again: 404 on every request.
func TestLegacyClientInfoKeepsTheSessionUsable(t *testing.T) {
	f := newLegacyFixture(t, nil, nil)
	c := f.client(t, "")
	resp, body := c.post(`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"` + strings.Repeat("<", 900) + `","version":"1"}}}`)
	require.Equal(t, http.StatusOK, resp.StatusCode, "%s", body)
	c.sid = resp.Header.Get(hdrSessionID)
	require.NotEmpty(t, c.sid)
	resp, body = c.post(`{"jsonrpc":"2.0","id":1,"method":"ping"}`)
	assert.Equal(t, http.StatusOK, resp.StatusCode, "a fresh session (id of %d characters) answers %s", len(c.sid), body)
}
