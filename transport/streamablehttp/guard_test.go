package streamablehttp

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mrtrkit/mrtrkit/mrtr"
)

func TestGuardDefaults(t *testing.T) {
	g, err := newGuard(nil, nil)
	require.NoError(t, err)
	tests := []struct {
		host   string
		origin []string
		want   string
	}{
		{host: "localhost"},
		{host: "localhost:8080"},
		{host: "LOCALHOST:8080"},
		{host: "127.0.0.1:1"},
		{host: "[::1]"},
		{host: "[::1]:9000"},
		{host: "evil.example.com", want: "host"},
		{host: "127.0.0.2", want: "host"},
		{host: "localhost.evil.example.com", want: "host"},
		{host: "", want: "host"},
		{host: "[::1", want: "host"},
		{host: "localhost:", want: "host"},
		{host: "localhost:80x", want: "host"},
		{host: "0.0.0.0:80", want: "host"},
		{host: "localhost", origin: []string{"http://localhost:3000"}},
		{host: "localhost", origin: []string{"HTTPS://LOCALHOST"}},
		{host: "localhost", origin: []string{"http://[::1]:3000"}},
		{host: "localhost", origin: []string{"http://127.0.0.1"}},
		{host: "localhost", origin: []string{"null"}, want: "origin"},
		{host: "localhost", origin: []string{""}, want: "origin"},
		{host: "localhost", origin: []string{"http://localhost:3000/"}, want: "origin"},
		{host: "localhost", origin: []string{"http://user@localhost"}, want: "origin"},
		{host: "localhost", origin: []string{"ws://localhost"}, want: "origin"},
		{host: "localhost", origin: []string{"https://evil.example.com"}, want: "origin"},
		{host: "localhost", origin: []string{"http://localhost", "http://localhost"}, want: "origin"},
	}
	for _, tt := range tests {
		t.Run(tt.host+" "+joinOrNone(tt.origin), func(t *testing.T) {
			r := &http.Request{Host: tt.host, Header: http.Header{}}
			if tt.origin != nil {
				r.Header["Origin"] = tt.origin
			}
			assert.Equal(t, tt.want, g.check(r))
		})
	}
}

func joinOrNone(s []string) string {
	if s == nil {
		return "(no origin)"
	}
	out := ""
	for _, v := range s {
		out += "[" + v + "]"
	}
	return out
}

func TestSplitHostPort(t *testing.T) {
	tests := []struct {
		in, host, port string
		ok             bool
	}{
		{"example.com", "example.com", "", true},
		{"example.com:443", "example.com", "443", true},
		{"[::1]", "::1", "", true},
		{"[::1]:80", "::1", "80", true},
		{"[::1]x", "", "", false},
		{"::1", "", "", false},
		{"a:b", "", "", false},
		{"a:", "", "", false},
	}
	for _, tt := range tests {
		host, port, ok := splitHostPort(tt.in)
		assert.Equal(t, tt.ok, ok, tt.in)
		if ok {
			assert.Equal(t, tt.host, host, tt.in)
			assert.Equal(t, tt.port, port, tt.in)
		}
	}
}

func TestBearerToken(t *testing.T) {
	tests := []struct {
		v, token string
		ok       bool
	}{
		{"Bearer abc", "abc", true},
		{"bearer abc", "abc", true},
		{"BEARER abc", "abc", true},
		{"Bearer  abc", "abc", true},
		{"Bearer a-b.c_d~e+f/g==", "a-b.c_d~e+f/g==", true},
		{"Bearer", "", false},
		{"Bearer ", "", false},
		{"Bearer a b", "", false},
		{"Bearer a=b", "", false},
		{"Bearer ===", "", false},
		{"Basic abc", "", false},
		{"Bearerabc", "", false},
		{"Bearer\tabc", "", false},
	}
	for _, tt := range tests {
		token, ok := bearerToken(tt.v)
		assert.Equal(t, tt.ok, ok, tt.v)
		assert.Equal(t, tt.token, token, tt.v)
	}
}

func TestBearerAuthenticatorErrors(t *testing.T) {
	verifyErr := errors.New("token expired")
	auth := BearerAuthenticator(func(_ context.Context, token string) (*mrtr.TokenInfo, error) {
		switch token {
		case "expired":
			return nil, verifyErr
		case "revoked":
			return nil, fmt.Errorf("%w: revoked", ErrUnauthorized)
		case "nobody":
			return &mrtr.TokenInfo{Scopes: []string{"tools"}}, nil
		case "nil":
			return nil, nil
		}
		return &mrtr.TokenInfo{Subject: "carol"}, nil
	}, `Bearer realm="mcp"`)
	req := func(authz ...string) *http.Request {
		r := httptest.NewRequest(http.MethodPost, "/mcp", nil)
		r.Header["Authorization"] = authz
		return r
	}

	info, err := auth(req("Bearer fine"))
	require.NoError(t, err)
	assert.Equal(t, "carol", info.Subject)

	// A verifier that accepts a token but names nobody must not turn the
	// request anonymous: the token is refused.
	for _, r := range []*http.Request{req(), req("Bearer expired"), req("Bearer revoked"), req("Token x"), req("Bearer nobody"), req("Bearer nil")} {
		_, err := auth(r)
		require.Error(t, err)
		assert.ErrorIs(t, err, ErrUnauthorized)
		assert.Equal(t, `Bearer realm="mcp"`, challengeOf(err))
	}
	_, err = auth(req("Bearer expired"))
	assert.ErrorIs(t, err, verifyErr, "the verifier's error stays inspectable")
	assert.Contains(t, err.Error(), "token expired")
	_, err = auth(req("Bearer revoked"))
	assert.Equal(t, 1, strings.Count(err.Error(), "unauthorized"), "not wrapped twice: %v", err)

	assert.Equal(t, defaultChallenge, challengeOf(errors.New("plain")))
}
