package streamablehttp

import (
	"log/slog"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mrtrkit/mrtrkit/discover"
	"github.com/mrtrkit/mrtrkit/internal/testkit"
	"github.com/mrtrkit/mrtrkit/mrtr"
)

// defaultFixture serves a server whose description lists the legacy
// versions (newLegacyServer) through New(srv, opts...), with no
// WithLegacy.
func defaultFixture(t *testing.T, srvOpts []mrtr.Option, opts ...Option) (*lgFixture, *Handler) {
	t.Helper()
	f := &lgFixture{holding: make(chan struct{}, 8), held: make(chan error, 8)}
	f.srv = newLegacyServer(t, f, srvOpts...)
	h, err := New(f.srv, opts...)
	require.NoError(t, err)
	ts := httptest.NewServer(h)
	t.Cleanup(ts.Close)
	f.url = ts.URL + defaultPath
	return f, h
}

// New serves the legacy versions the description lists by itself: a
// 2025-11-25 client initializes, calls a tool and goes through the rounds
// of a multi-round tool, with no WithLegacy given.
func TestNewServesLegacyVersionsByDefault(t *testing.T) {
	f, h := defaultFixture(t, nil, WithLogger(quiet))
	require.NotNil(t, h.Legacy(), "New made the engine")
	assert.Same(t, f.srv, h.Legacy().Server())

	for _, version := range []string{"2025-11-25", "2025-06-18"} {
		c := f.client(t, "")
		c.initialize(`{"sampling":{},"elicitation":{"form":{},"url":{}},"roots":{}}`, version)
		assert.Equal(t, version, c.version)

		o := c.exchange(lgCall(1, "echo", `{"a":1}`), nil)
		assert.Equal(t, http.StatusOK, o.status)
		assert.Equal(t, `echo {"a":1}`, o.tool(t).Content[0].Text)
		lgNoModern(t, o.finalRaw)

		o = c.exchange(lgCall("t1", "trio", `{}`), lgStandard)
		assert.Equal(t, "r1 v-name drafted file:///home/u accept", o.tool(t).Content[0].Text)
	}

	// GET and DELETE are the era's: allowed.
	c := f.client(t, "")
	c.initialize(`{}`, "2025-11-25")
	resp, _ := c.do(http.MethodPut, "")
	assert.Equal(t, http.StatusMethodNotAllowed, resp.StatusCode)
	assert.Equal(t, "GET, POST, DELETE", resp.Header.Get("Allow"))
	resp, _ = c.do(http.MethodDelete, "")
	assert.Equal(t, http.StatusNoContent, resp.StatusCode)
}

// WithoutLegacy serves 2026-07-28 only: on a description without
// LegacyVersions, initialize is told the versions served and GET gets
// 405, as before; on one that lists them, New fails, naming them and what
// to do, rather than advertise versions the endpoint refuses.
func TestWithoutLegacy(t *testing.T) {
	plain := testkit.Server(t, testkit.Desc("modern-only", "1"), mrtr.WithCodec(testkit.Codec(t)), mrtr.WithLogger(quiet))
	h, err := New(plain, WithoutLegacy(), WithLogger(quiet))
	require.NoError(t, err)
	assert.Nil(t, h.Legacy())
	ts := httptest.NewServer(h)
	t.Cleanup(ts.Close)
	f := &fixture{url: ts.URL}
	jsonHeaders := [][2]string{{"Content-Type", "application/json"}, {"Accept", "application/json, text/event-stream"}}
	resp, body := f.do(t, call{headers: jsonHeaders, body: `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{}}}`})
	assert.Equal(t, -32022, decodeRPC(t, body).Error.Code, "%s", body)
	assert.Contains(t, string(body), "2026-07-28")
	assert.Empty(t, resp.Header.Values(hdrSessionID))
	resp, _ = f.do(t, call{method: http.MethodGet, headers: [][2]string{{"Accept", "text/event-stream"}}})
	assert.Equal(t, http.StatusMethodNotAllowed, resp.StatusCode)
	assert.Equal(t, "POST", resp.Header.Get("Allow"))

	both := newLegacyServer(t, &lgFixture{})
	_, err = New(both, WithoutLegacy(), WithLogger(quiet))
	require.Error(t, err)
	assert.Contains(t, err.Error(), "LegacyVersions 2025-11-25, 2025-06-18")
	assert.Contains(t, err.Error(), "WithoutLegacy")
	assert.Contains(t, err.Error(), "mrtr.NewServer")

	_, err = New(both, WithoutLegacy(), WithLegacy(h.Legacy()))
	require.Error(t, err)
}

// A description listing a legacy version the bridge does not serve is an
// error at New, with or without WithLegacy, naming the version.
func TestNewRefusesUnservableLegacyVersion(t *testing.T) {
	desc := testkit.Desc("old", "1")
	desc.LegacyVersions = []string{"2025-11-25", "2024-11-05"}
	srv := testkit.Server(t, desc, mrtr.WithCodec(testkit.Codec(t)), mrtr.WithLogger(quiet))
	_, err := New(srv, WithLogger(quiet))
	require.Error(t, err)
	assert.Contains(t, err.Error(), `"2024-11-05"`)
	assert.Contains(t, err.Error(), "2025-11-25 and 2025-06-18")
	assert.NotContains(t, err.Error(), `"2025-11-25"`)
}

// Without WithLogger, the Handler and the engine it makes log through the
// Server's logger.
func TestHandlerLogsThroughTheServersLogger(t *testing.T) {
	logs := &testkit.LogBuffer{}
	srv := testkit.Server(t, discover.Description{Server: discover.Implementation{Name: "logged", Version: "1"}},
		mrtr.WithCodec(testkit.Codec(t)), mrtr.WithLogger(testkit.Logger(logs, slog.LevelDebug)))
	h, err := New(srv)
	require.NoError(t, err)
	ts := httptest.NewServer(h)
	t.Cleanup(ts.Close)
	f := &fixture{url: ts.URL}
	resp, _ := f.do(t, call{host: "evil.example", headers: [][2]string{{"Content-Type", "application/json"}}, body: `{}`})
	require.Equal(t, http.StatusForbidden, resp.StatusCode)
	assert.Contains(t, logs.String(), "streamablehttp: request refused")
	assert.Contains(t, logs.String(), "evil.example")
}
