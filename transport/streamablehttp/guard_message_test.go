package streamablehttp

import (
	"bufio"
	"net"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The Host refusal names the Host received, quoted and clipped, and the
// option that allows it; with an allow-list configured it does not claim
// the loopback default. Nothing of the allow-list is disclosed.
func TestHostRefusalNamesHostAndOption(t *testing.T) {
	f := newFixture(t)
	resp, body := f.do(t, withHost(toolCall(1, "echo", `{"text":"x"}`), "mcp.example.com:8443"))
	require.Equal(t, http.StatusForbidden, resp.StatusCode)
	assert.Equal(t, `Forbidden: host "mcp.example.com:8443" not allowed (only localhost, 127.0.0.1 and [::1] are allowed by default; `+
		`list the names clients use to reach the server with streamablehttp.WithAllowedHosts)`, decodeRPC(t, body).Error.Message)

	listed := newFixture(t, WithAllowedHosts("secret-internal.example"))
	_, body = listed.do(t, withHost(toolCall(1, "echo", `{"text":"x"}`), "mcp.example.com"))
	msg := decodeRPC(t, body).Error.Message
	assert.Equal(t, `Forbidden: host "mcp.example.com" not allowed (list the names clients use to reach the server with streamablehttp.WithAllowedHosts)`, msg)
	assert.NotContains(t, msg, "secret-internal")

	// A long Host is clipped to 64 bytes (sent raw: the client would not
	// send such a Host header as is).
	long := strings.Repeat("a", 200) + ".example"
	status, raw := rawPost(t, strings.TrimPrefix(f.url, "http://"), long)
	assert.Equal(t, http.StatusForbidden, status)
	assert.Contains(t, raw, `host \"`+strings.Repeat("a", 64)+`...\" not allowed`)
	assert.NotContains(t, raw, strings.Repeat("a", 65))
}

// Control characters and invalid UTF-8 in the Host, which net/http's
// server refuses before any handler but which a Handler called in process
// may see, are escaped: the message stays on one line.
func TestHostRefusalEscapesControlCharacters(t *testing.T) {
	h, err := New(newTestServer(t, &fixture{}), WithLogger(quiet))
	require.NoError(t, err)
	r := httptest.NewRequest(http.MethodPost, "/mcp", strings.NewReader(`{}`))
	r.Host = "evil\r\nX-Injected: 1\x00\xff"
	w := httptest.NewRecorder()
	h.ServeHTTP(w, r)
	require.Equal(t, http.StatusForbidden, w.Code)
	msg := decodeRPC(t, w.Body.Bytes()).Error.Message
	assert.Contains(t, msg, `host "evil\r\nX-Injected: 1\x00\xff" not allowed`)
	assert.NotContains(t, msg, "\n")
	assert.NotContains(t, msg, "\x00")
}

// The Origin refusal names the origin and WithAllowedOrigins.
func TestOriginRefusalNamesOriginAndOption(t *testing.T) {
	f := newFixture(t, WithAllowedOrigins("https://app.example.com"))
	_, body := f.do(t, toolCall(1, "echo", `{"text":"x"}`).withHeader("Origin", "https://evil.example.com"))
	assert.Equal(t, `Forbidden: origin "https://evil.example.com" not allowed (list the origins of browser clients with streamablehttp.WithAllowedOrigins)`,
		decodeRPC(t, body).Error.Message)
}

// rawPost sends a POST to /mcp at addr with the given Host header over a
// plain TCP connection and returns the status and the whole response.
func rawPost(t *testing.T, addr, host string) (int, string) {
	t.Helper()
	conn, err := net.DialTimeout("tcp", addr, 5*time.Second)
	require.NoError(t, err)
	defer conn.Close()
	require.NoError(t, conn.SetDeadline(time.Now().Add(5*time.Second)))
	body := `{"jsonrpc":"2.0","id":1,"method":"ping"}`
	_, err = conn.Write([]byte("POST /mcp HTTP/1.1\r\nHost: " + host + "\r\nContent-Type: application/json\r\n" +
		"Accept: application/json, text/event-stream\r\nConnection: close\r\nContent-Length: " + strconv.Itoa(len(body)) + "\r\n\r\n" + body))
	require.NoError(t, err)
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	require.NoError(t, err)
	defer resp.Body.Close()
	var sb strings.Builder
	_, _ = bufio.NewReader(resp.Body).WriteTo(&sb)
	return resp.StatusCode, sb.String()
}

func withHost(c call, host string) call {
	c.host = host
	return c
}
