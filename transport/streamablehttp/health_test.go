package streamablehttp

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mrtrkit/mrtrkit/internal/testkit"
	"github.com/mrtrkit/mrtrkit/mrtr"
	"github.com/mrtrkit/mrtrkit/state"
)

func probe(t *testing.T, h http.Handler) (int, map[string]string) {
	t.Helper()
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/readyz", nil))
	assert.Equal(t, "application/json", rec.Header().Get("Content-Type"))
	assert.Equal(t, "no-store", rec.Header().Get("Cache-Control"))
	var body map[string]string
	require.NoError(t, json.Unmarshal(rec.Body.Bytes(), &body), "%s", rec.Body)
	return rec.Code, body
}

func TestLiveness(t *testing.T) {
	code, body := probe(t, Liveness())
	assert.Equal(t, http.StatusOK, code)
	assert.Equal(t, "ok", body["status"])
}

// Readiness fails while the server runs on the random start-up key, and
// once it is closed or the probe drains.
func TestReadiness(t *testing.T) {
	t.Setenv(state.EnvKeys, "")
	ephemeral, err := mrtr.NewServer(testkit.Desc("r", "1"), mrtr.WithLogger(quiet))
	require.NoError(t, err)
	code, body := probe(t, Readiness(ephemeral))
	assert.Equal(t, http.StatusServiceUnavailable, code)
	assert.Equal(t, map[string]string{"status": "unavailable", "reason": "no requestState keys configured"}, body)
	code, _ = probe(t, Readiness(ephemeral, AllowEphemeralKeys()))
	assert.Equal(t, http.StatusOK, code, "the operator accepted the random key")

	keyed := testkit.Server(t, testkit.Desc("r", "1"), mrtr.WithCodec(testkit.Codec(t)))
	p := Readiness(keyed)
	code, body = probe(t, p)
	assert.Equal(t, http.StatusOK, code)
	assert.Equal(t, "ready", body["status"])
	p.Drain()
	code, body = probe(t, p)
	assert.Equal(t, http.StatusServiceUnavailable, code)
	assert.Equal(t, "draining", body["reason"])
	assert.ErrorIs(t, p.Check(), ErrDraining)

	p = Readiness(keyed)
	require.NoError(t, keyed.Close())
	code, body = probe(t, p)
	assert.Equal(t, http.StatusServiceUnavailable, code)
	assert.Equal(t, "closed", body["reason"])
	assert.ErrorIs(t, Readiness(keyed, AllowEphemeralKeys()).Check(), mrtr.ErrClosed)
}

// NewHTTPServer sets the connection limits and leaves the whole-request
// timeouts, which would cut event streams, at zero.
func TestNewHTTPServer(t *testing.T) {
	h := Liveness()
	s := NewHTTPServer("127.0.0.1:0", h)
	assert.Equal(t, "127.0.0.1:0", s.Addr)
	assert.Equal(t, defaultReadHeaderTimeout, s.ReadHeaderTimeout)
	assert.Equal(t, defaultIdleTimeout, s.IdleTimeout)
	assert.Equal(t, defaultMaxHeaderBytes, s.MaxHeaderBytes)
	assert.Zero(t, s.ReadTimeout)
	assert.Zero(t, s.WriteTimeout)
}
