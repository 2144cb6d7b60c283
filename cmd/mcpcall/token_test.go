package main

import (
	"context"
	"crypto/tls"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strconv"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// loopbackTransport sends every request, whatever host its URL names, to
// the test server at addr on loopback: the tests name hosts that are not
// this machine without any traffic leaving it.
func loopbackTransport(addr string, tlsConfig *tls.Config) http.RoundTripper {
	return &http.Transport{
		DialContext: func(ctx context.Context, network, _ string) (net.Conn, error) {
			var d net.Dialer
			return d.DialContext(ctx, network, addr)
		},
		TLSClientConfig: tlsConfig,
	}
}

// authRecorder is an MCP endpoint that records the Authorization header
// of every request and answers server/discover.
type authRecorder struct {
	mu   sync.Mutex
	auth []string
}

func (a *authRecorder) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	a.mu.Lock()
	a.auth = append(a.auth, r.Header.Get("Authorization"))
	a.mu.Unlock()
	w.Header().Set("Content-Type", "application/json")
	w.Write([]byte(`{"jsonrpc":"2.0","id":1,"result":{"resultType":"complete","supportedVersions":["` + ProtocolVersion + `"],"capabilities":{}}}`))
}

func (a *authRecorder) take() []string {
	a.mu.Lock()
	defer a.mu.Unlock()
	out := a.auth
	a.auth = nil
	return out
}

func TestTokenRefusedOverPlainHTTPOffLoopback(t *testing.T) {
	const token = "secret-token-for-server-A"
	rec := &authRecorder{}
	plain := httptest.NewServer(rec)
	defer plain.Close()
	secure := httptest.NewTLSServer(rec)
	defer secure.Close()
	port := plain.Listener.Addr().(*net.TCPAddr).Port
	toPlain := loopbackTransport(plain.Listener.Addr().String(), nil)

	// The review's reproduction: $MCPCALL_TOKEN and plain http to a host
	// that is not this machine. Refused before anything is sent; the
	// token is not printed. -token is refused the same way.
	for _, c := range []struct {
		env  map[string]string
		args []string
	}{
		{map[string]string{EnvToken: token}, nil},
		{nil, []string{"-token", token}},
		{map[string]string{EnvToken: token, EnvURL: "http://mcp.example.test:" + strconv.Itoa(port) + "/mcp"}, nil},
	} {
		args := append([]string{"discover"}, c.args...)
		if c.env[EnvURL] == "" {
			args = append(args, "-url", "http://mcp.example.test:"+strconv.Itoa(port)+"/mcp")
		}
		r := cli{env: c.env, transport: toPlain}.run(t, args...)
		assert.Equal(t, 2, r.code, r.stderr)
		assert.Contains(t, r.stderr, "plain http to a host that is not this machine: the token would cross the network in clear")
		assert.NotContains(t, r.stdout+r.stderr, token)
		assert.Empty(t, rec.take(), "nothing reaches the server")
	}
	for _, host := range []string{"10.0.0.7", "127.0.0.1.nip.io", "localhost.evil.example", "[2001:db8::1]", "0.0.0.0"} {
		r := cli{env: map[string]string{EnvToken: token}, transport: toPlain}.run(t, "-url", "http://"+host+":"+strconv.Itoa(port)+"/mcp", "discover")
		assert.Equal(t, 2, r.code, host)
		assert.Empty(t, rec.take(), host)
	}

	// Plain http to this machine, and https anywhere, carry the token.
	for _, host := range []string{"127.0.0.1", "127.0.0.2", "localhost", "LocalHost", "[::1]"} {
		r := cli{env: map[string]string{EnvToken: token}, transport: toPlain}.run(t, "-url", "http://"+host+":"+strconv.Itoa(port)+"/mcp", "discover")
		require.Equal(t, 0, r.code, "%s: %s", host, r.stderr)
		assert.Equal(t, []string{"Bearer " + token}, rec.take(), host)
	}
	pool := secure.Client().Transport.(*http.Transport).TLSClientConfig.RootCAs
	toSecure := loopbackTransport(secure.Listener.Addr().String(), &tls.Config{RootCAs: pool})
	r := cli{env: map[string]string{EnvToken: token}, transport: toSecure}.run(t, "-url", "https://example.com/mcp", "discover")
	require.Equal(t, 0, r.code, r.stderr)
	assert.Equal(t, []string{"Bearer " + token}, rec.take())

	// Without a token, plain http to another host is the user's business.
	r = cli{transport: toPlain}.run(t, "-url", "http://mcp.example.test:"+strconv.Itoa(port)+"/mcp", "discover")
	require.Equal(t, 0, r.code, r.stderr)
	assert.Equal(t, []string{""}, rec.take())
}

func TestTokenURLAllowed(t *testing.T) {
	for raw, ok := range map[string]bool{
		"https://mcp.example.com/mcp":    true,
		"HTTPS://mcp.example.com/mcp":    true,
		"http://127.0.0.1:8080/mcp":      true,
		"http://127.255.255.254/mcp":     true,
		"http://[::1]:8080/mcp":          true,
		"http://[::ffff:127.0.0.1]/mcp":  true,
		"http://localhost/mcp":           true,
		"http://localhost./mcp":          true,
		"http://mcp.example.com/mcp":     false,
		"http://192.168.1.10:8080/mcp":   false,
		"http://[fe80::1]/mcp":           false,
		"http://127.1/mcp":               false,
		"http://localhost.example/mcp":   false,
		"http://127.0.0.1.example/mcp":   false,
		"http://0x7f000001/mcp":          false,
		"http://[::ffff:10.0.0.1]/mcp":   false,
		"http://my-localhost/mcp":        false,
		"http://169.254.169.254/latest/": false,
	} {
		u, err := url.Parse(raw)
		require.NoError(t, err)
		err = tokenURLAllowed(u)
		if ok {
			assert.NoError(t, err, raw)
		} else {
			assert.Error(t, err, raw)
		}
	}
}
