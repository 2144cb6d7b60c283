package main

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestParseFlags(t *testing.T) {
	env := func(k string) string {
		if k == EnvAPIKey {
			return "sk-test-secret"
		}
		return ""
	}
	s, err := parseFlags(nil, env, io.Discard)
	require.NoError(t, err)
	require.Falsef(t, s.Addr != "127.0.0.1:8080" || s.Config.Dir != "." || s.Config.Critique || s.DirectModel() || s.APIKey != "", "defaults: %+v", s)
	s, err = parseFlags([]string{"-dir", "/tmp", "-addr", "127.0.0.1:0", "-critique",
		"-model-url", "http://127.0.0.1:9/v1", "-model", "m"}, env, io.Discard)
	require.NoError(t, err)
	require.Falsef(t, s.Addr != "127.0.0.1:0" || s.Config.Dir != "/tmp" || !s.Config.Critique || !s.DirectModel() ||
		s.Model != "m" || s.APIKey != "sk-test-secret", "flags: %+v", s)

	for name, args := range map[string][]string{
		"model without url":    {"-model", "m"},
		"url without model":    {"-model-url", "https://api.example.com/v1"},
		"url not http":         {"-model-url", "file:///etc/passwd", "-model", "m"},
		"url with credentials": {"-model-url", "https://user:pw@api.example.com/v1", "-model", "m"},
		"key over plain http":  {"-model-url", "http://api.example.com/v1", "-model", "m"},
		"key over http to LAN": {"-model-url", "http://10.0.0.5:8000/v1", "-model", "m"},
		"api key as a flag":    {"-api-key", "sk-x"},
		"stray argument":       {"extra"},
	} {
		if _, err := parseFlags(args, env, io.Discard); err == nil {
			assert.Fail(t, fmt.Sprintf("%s: accepted %q", name, args))
		}
	}
	var usage bytes.Buffer
	if _, err := parseFlags([]string{"-h"}, env, &usage); !errors.Is(err, flag.ErrHelp) {
		require.FailNow(t, fmt.Sprintf("-h: %v", err))
	}
	require.Falsef(t, !strings.Contains(usage.String(), EnvAPIKey) || strings.Contains(usage.String(), "sk-test-secret"), "usage:\n%s", usage.String())
}

// TestRunServesAndShutsDown starts the command's server on a free port,
// calls it, and stops it.
func TestRunServesAndShutsDown(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	var logs bytes.Buffer
	log := slog.New(slog.NewTextHandler(&logs, nil))
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		done <- run(ctx, Settings{Config: Config{Dir: testTree(t)}}, ln, log)
	}()
	s := &testServer{t: t, url: "http://" + ln.Addr().String() + "/mcp"}
	deadline := time.Now().Add(5 * time.Second)
	for {
		c, err := net.Dial("tcp", ln.Addr().String())
		if err == nil {
			c.Close()
			break
		}
		require.False(t, time.Now().After(deadline), fmt.Sprint(err))
		time.Sleep(10 * time.Millisecond)
	}
	s.call(toolCall{}).asked(t, KeyPickFiles)
	cancel()
	select {
	case err := <-done:
		require.NoError(t, err)
	case <-time.After(15 * time.Second):
		require.FailNow(t, "run did not return after cancel")
	}
	if _, err := http.Get(s.url); err == nil {
		require.FailNow(t, "server still answers after shutdown")
	}
	require.Containsf(t, logs.String(), "summarize_repo serving", "log:\n%s", logs.String())
}

// An API key goes over plain http only to a loopback host; without a key,
// or over https, any host is accepted.
func TestAPIKeyNeedsHTTPSOffLoopback(t *testing.T) {
	withKey := func(k string) string {
		if k == EnvAPIKey {
			return "sk-test-secret"
		}
		return ""
	}
	noKey := func(string) string { return "" }
	for _, c := range []struct {
		url    string
		getenv func(string) string
		ok     bool
	}{
		{"http://api.example.com/v1", withKey, false},
		{"http://127.0.0.2:8000/v1", withKey, true},
		{"http://localhost:8000/v1", withKey, true},
		{"http://[::1]:8000/v1", withKey, true},
		{"https://api.example.com/v1", withKey, true},
		{"http://api.example.com/v1", noKey, true},
	} {
		_, err := parseFlags([]string{"-model-url", c.url, "-model", "m"}, c.getenv, io.Discard)
		assert.Equalf(t, c.ok, (err == nil), "%s: err = %v, want ok %v", c.url, err, c.ok)
		assert.Falsef(t, err != nil && strings.Contains(err.Error(), "sk-test-secret"), "%s: error shows the key", c.url)
	}
}
