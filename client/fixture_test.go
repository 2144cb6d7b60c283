package client_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mrtrkit/mrtrkit/client"
	"github.com/mrtrkit/mrtrkit/internal/fixture"
	"github.com/mrtrkit/mrtrkit/mrtr/mrtrtest"
)

// fixtureURL serves the conformance fixture (internal/fixture) over
// Streamable HTTP, both eras.
func fixtureURL(t *testing.T) string {
	srv, err := fixture.New(mrtrtest.TestLogger(t))
	require.NoError(t, err)
	return serveHTTP(t, srv)
}

func TestFixtureThreeRoundsProgressBothEras(t *testing.T) {
	url := fixtureURL(t)
	for _, version := range []string{client.LatestVersion, client.LegacyVersion} {
		t.Run(version, func(t *testing.T) {
			c, err := client.Connect(ctxT(t), client.HTTP(url), client.WithProtocolVersion(version),
				client.OnElicitation(answerName), client.OnSampling(answerModel), client.WithRoots(roots...))
			require.NoError(t, err)
			defer c.Close()
			tools, err := c.ListTools(ctxT(t))
			require.NoError(t, err)
			assert.Greater(t, len(tools), 10)
			res, err := c.CallTool(ctxT(t), "test_three_rounds", map[string]any{})
			require.NoError(t, err)
			assert.Contains(t, res.Text(), "Three rounds completed")
			assert.Contains(t, res.Text(), "file:///src")
			if version == client.LatestVersion {
				assert.Equal(t, 3, res.Rounds)
			}
			var mu sync.Mutex
			var got []client.Progress
			_, err = c.CallTool(ctxT(t), "test_tool_with_progress", map[string]any{}, client.WithProgress(0, func(p client.Progress) {
				mu.Lock()
				got = append(got, p)
				mu.Unlock()
			}))
			require.NoError(t, err)
			mu.Lock()
			assert.Len(t, got, 3, "progress under token 0")
			mu.Unlock()
			for _, tool := range []string{"test_sampling", "test_elicitation"} {
				_, err = c.CallTool(ctxT(t), tool, map[string]any{"prompt": "hi", "message": "name?"})
				require.NoError(t, err, tool)
			}
		})
	}
}

func TestFixtureListenStream(t *testing.T) {
	c, err := client.Connect(ctxT(t), client.HTTP(fixtureURL(t)))
	require.NoError(t, err)
	defer c.Close()
	ctx, cancel := context.WithCancel(ctxT(t))
	defer cancel()
	acked := make(chan struct{}, 1)
	changed := make(chan struct{}, 1)
	go func() {
		_ = c.Listen(ctx, client.ListenFilter{ToolsListChanged: true}, func(n client.Notification) {
			switch n.Method {
			case "notifications/subscriptions/acknowledged":
				acked <- struct{}{}
			case "notifications/tools/list_changed":
				changed <- struct{}{}
			}
		})
	}()
	select {
	case <-acked:
	case <-time.After(5 * time.Second):
		t.Fatal("no acknowledgement")
	}
	_, err = c.CallTool(ctxT(t), "test_trigger_tool_change", map[string]any{})
	require.NoError(t, err)
	select {
	case <-changed:
	case <-time.After(5 * time.Second):
		t.Fatal("no list_changed")
	}
}
