package main

import (
	"bufio"
	"bytes"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	jose "github.com/go-jose/go-jose/v4"
	"github.com/go-jose/go-jose/v4/jwt"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// binary is the command, built once by TestMain.
var binary string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "production")
	if err != nil {
		panic(err)
	}
	binary = filepath.Join(dir, "production")
	build := exec.Command("go", "build", "-o", binary, ".")
	build.Stderr = os.Stderr
	if err := build.Run(); err != nil {
		_ = os.RemoveAll(dir)
		panic("building the command: " + err.Error())
	}
	code := m.Run()
	_ = os.RemoveAll(dir)
	os.Exit(code)
}

// public is the endpoint's URL the tests configure: any port of
// 127.0.0.1 is allowed.
const public = "http://127.0.0.1/mcp"

// proc is a running command.
type proc struct {
	cmd  *exec.Cmd
	base string // http://127.0.0.1:port
	mu   sync.Mutex
	logs bytes.Buffer
	done chan error
}

// start runs the command with exactly env (and a free port), and waits
// until it serves.
func start(t *testing.T, env ...string) *proc {
	t.Helper()
	p := &proc{cmd: exec.Command(binary), done: make(chan error, 1)}
	p.cmd.Env = append([]string{"MCP_ADDR=127.0.0.1:0", "MCP_PUBLIC_URL=" + public, "MCP_DRAIN_DELAY=50ms"}, env...)
	stderr, err := p.cmd.StderrPipe()
	require.NoError(t, err)
	require.NoError(t, p.cmd.Start())
	t.Cleanup(func() { _ = p.cmd.Process.Kill() })
	addr := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			p.mu.Lock()
			p.logs.Write(append(sc.Bytes(), '\n'))
			p.mu.Unlock()
			var rec struct{ Msg, Addr string }
			if json.Unmarshal(sc.Bytes(), &rec) == nil && rec.Msg == "serving" {
				addr <- rec.Addr
			}
		}
		p.done <- p.cmd.Wait()
	}()
	select {
	case a := <-addr:
		p.base = "http://" + a
	case err := <-p.done:
		t.Fatalf("the command exited before serving (%v):\n%s", err, p.log())
	case <-time.After(20 * time.Second):
		t.Fatalf("the command did not serve in time:\n%s", p.log())
	}
	return p
}

func (p *proc) log() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.logs.String()
}

// stop sends SIGTERM and checks that the command drains and exits 0.
func (p *proc) stop(t *testing.T) {
	t.Helper()
	require.NoError(t, p.cmd.Process.Signal(syscall.SIGTERM))
	select {
	case err := <-p.done:
		require.NoError(t, err, "exit status; log:\n%s", p.log())
	case <-time.After(30 * time.Second):
		t.Fatalf("the command did not exit after SIGTERM:\n%s", p.log())
	}
	assert.Contains(t, p.log(), `"msg":"shutting down"`)
}

// post sends one JSON-RPC message and returns the status, the headers and
// the JSON-RPC message of the answer (the last event of a stream).
func (p *proc) post(t *testing.T, body string, headers ...string) (*http.Response, map[string]any) {
	t.Helper()
	resp, b := p.do(t, http.MethodPost, "/mcp", strings.NewReader(body),
		append([]string{"Content-Type", "application/json", "Accept", "application/json, text/event-stream"}, headers...)...)
	if strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		i := bytes.LastIndex(b, []byte("data: "))
		require.GreaterOrEqual(t, i, 0, "%s", b)
		b = bytes.TrimSpace(bytes.SplitN(b[i+len("data: "):], []byte("\n"), 2)[0])
	}
	if len(b) == 0 {
		return resp, nil
	}
	var m map[string]any
	require.NoError(t, json.Unmarshal(b, &m), "%s", b)
	return resp, m
}

const meta = `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}`

// modern calls method of MCP 2026-07-28 and returns its result.
func (p *proc) modern(t *testing.T, method, name, params string, headers ...string) map[string]any {
	t.Helper()
	if params != "" {
		params += ","
	}
	h := append([]string{"MCP-Protocol-Version", "2026-07-28", "Mcp-Method", method}, headers...)
	if name != "" {
		h = append(h, "Mcp-Name", name)
	}
	resp, m := p.post(t, `{"jsonrpc":"2.0","id":1,"method":"`+method+`","params":{`+params+meta+`}}`, h...)
	require.Equal(t, http.StatusOK, resp.StatusCode, "%v", m)
	require.Nil(t, m["error"], "%v", m)
	return m["result"].(map[string]any)
}

// legacyAdd initializes a 2025-11-25 session and calls add in it.
func (p *proc) legacyAdd(t *testing.T, headers ...string) string {
	t.Helper()
	resp, m := p.post(t, `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"old","version":"1"}}}`, headers...)
	require.Equal(t, http.StatusOK, resp.StatusCode, "%v", m)
	assert.Equal(t, "2025-11-25", m["result"].(map[string]any)["protocolVersion"])
	sid := resp.Header.Get("Mcp-Session-Id")
	require.NotEmpty(t, sid)
	h := append([]string{"Mcp-Session-Id", sid, "MCP-Protocol-Version", "2025-11-25"}, headers...)
	resp, _ = p.post(t, `{"jsonrpc":"2.0","method":"notifications/initialized"}`, h...)
	require.Equal(t, http.StatusAccepted, resp.StatusCode)
	resp, m = p.post(t, `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"add","arguments":{"a":40,"b":2}}}`, h...)
	require.Equal(t, http.StatusOK, resp.StatusCode, "%v", m)
	content := m["result"].(map[string]any)["content"].([]any)
	return content[0].(map[string]any)["text"].(string)
}

func (p *proc) get(t *testing.T, path string, headers ...string) (*http.Response, []byte) {
	t.Helper()
	return p.do(t, http.MethodGet, path, nil, headers...)
}

// do sends a request for path with body (nil for none) and headers (name,
// value, name, value...) and returns the response and its whole body.
func (p *proc) do(t *testing.T, method, path string, body io.Reader, headers ...string) (*http.Response, []byte) {
	t.Helper()
	req, err := http.NewRequest(method, p.base+path, body)
	require.NoError(t, err)
	for i := 0; i+1 < len(headers); i += 2 {
		req.Header.Set(headers[i], headers[i+1])
	}
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	return resp, b
}

func newKey(t *testing.T) string {
	t.Helper()
	b := make([]byte, 32)
	_, err := rand.Read(b)
	require.NoError(t, err)
	return base64.StdEncoding.EncodeToString(b)
}

// With keys in MRTRKIT_STATE_KEYS: probes, server/discover and a tool in
// both eras (the 2025 bridge is streamablehttp.New's own), the Host
// guard, and a clean exit on SIGTERM.
func TestServesBothErasWithKeysFromTheEnvironment(t *testing.T) {
	p := start(t, "MRTRKIT_STATE_KEYS=k1:"+newKey(t))

	resp, _ := p.get(t, "/livez")
	assert.Equal(t, http.StatusOK, resp.StatusCode)
	resp, _ = p.get(t, "/readyz")
	assert.Equal(t, http.StatusOK, resp.StatusCode, "keys are configured")

	d := p.modern(t, "server/discover", "", "")
	versions, _ := json.Marshal(d["supportedVersions"])
	assert.Contains(t, string(versions), "2026-07-28")
	assert.Contains(t, string(versions), "2025-11-25")

	r := p.modern(t, "tools/call", "add", `"name":"add","arguments":{"a":2,"b":3}`)
	assert.Equal(t, map[string]any{"sum": 5.0}, r["structuredContent"])

	assert.JSONEq(t, `{"sum":42}`, p.legacyAdd(t))

	req, _ := http.NewRequest(http.MethodPost, p.base+"/mcp", strings.NewReader(`{}`))
	req.Host = "evil.example"
	hr, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	hr.Body.Close()
	assert.Equal(t, http.StatusForbidden, hr.StatusCode)

	p.stop(t)
}

// With a key file (the guide's format, comments included), OAuth and
// CORS: a call without a token is refused with a challenge naming the
// metadata document, which is served; a valid token is accepted in both
// eras; a preflight of an allowed origin is answered.
func TestServesWithKeyFileOAuthAndCORS(t *testing.T) {
	keyFile := filepath.Join(t.TempDir(), "state-keys")
	require.NoError(t, os.WriteFile(keyFile, []byte("# requestState keys\nk2:"+newKey(t)+"   # seals\nk1:"+newKey(t)+"   # still opens\n"), 0o600))

	priv, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	require.NoError(t, err)
	jwks, err := json.Marshal(jose.JSONWebKeySet{Keys: []jose.JSONWebKey{{Key: priv.Public(), KeyID: "kid1", Algorithm: string(jose.ES256), Use: "sig"}}})
	require.NoError(t, err)
	issuerSrv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write(jwks)
	}))
	t.Cleanup(issuerSrv.Close)
	const issuer = "https://auth.example.com"

	p := start(t, "MRTRKIT_STATE_KEYS_FILE="+keyFile, "OAUTH_ISSUER="+issuer, "OAUTH_JWKS_URL="+issuerSrv.URL,
		"MCP_ALLOWED_ORIGINS=https://app.example.com")

	resp, m := p.post(t, `{"jsonrpc":"2.0","id":1,"method":"server/discover","params":{`+meta+`}}`,
		"MCP-Protocol-Version", "2026-07-28", "Mcp-Method", "server/discover")
	assert.Equal(t, http.StatusUnauthorized, resp.StatusCode, "%v", m)
	const metaURL = "http://127.0.0.1/.well-known/oauth-protected-resource/mcp"
	assert.Contains(t, resp.Header.Get("WWW-Authenticate"), `resource_metadata="`+metaURL+`"`)
	resp, body := p.get(t, "/.well-known/oauth-protected-resource/mcp")
	require.Equal(t, http.StatusOK, resp.StatusCode)
	assert.JSONEq(t, `{"resource":"`+public+`","authorization_servers":["`+issuer+`"],"bearer_methods_supported":["header"]}`, string(body))

	signer, err := jose.NewSigner(jose.SigningKey{Algorithm: jose.ES256, Key: jose.JSONWebKey{Key: priv, KeyID: "kid1"}},
		(&jose.SignerOptions{}).WithType("at+jwt"))
	require.NoError(t, err)
	now := time.Now()
	token, err := jwt.Signed(signer).Claims(map[string]any{
		"iss": issuer, "aud": public, "sub": "alice", "iat": now.Unix(), "exp": now.Add(time.Hour).Unix(),
	}).Serialize()
	require.NoError(t, err)
	bearer := []string{"Authorization", "Bearer " + token}

	r := p.modern(t, "tools/call", "add", `"name":"add","arguments":{"a":1.5,"b":1}`, bearer...)
	assert.Equal(t, map[string]any{"sum": 2.5}, r["structuredContent"])
	assert.JSONEq(t, `{"sum":42}`, p.legacyAdd(t, bearer...))

	req, err := http.NewRequest(http.MethodOptions, p.base+"/mcp", nil)
	require.NoError(t, err)
	req.Header.Set("Origin", "https://app.example.com")
	req.Header.Set("Access-Control-Request-Method", "POST")
	req.Header.Set("Access-Control-Request-Headers", "authorization,content-type")
	pre, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	pre.Body.Close()
	assert.Equal(t, http.StatusNoContent, pre.StatusCode)
	assert.Equal(t, "https://app.example.com", pre.Header.Get("Access-Control-Allow-Origin"))

	p.stop(t)
}

// Without keys the command refuses to start, saying why.
func TestRefusesToStartWithoutKeys(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, binary)
	cmd.Env = []string{"MCP_ADDR=127.0.0.1:0"}
	out, err := cmd.CombinedOutput()
	var exit *exec.ExitError
	require.ErrorAs(t, err, &exit, "%s", out)
	assert.Equal(t, 1, exit.ExitCode())
	assert.Contains(t, string(out), "MRTRKIT_STATE_KEYS")
}
