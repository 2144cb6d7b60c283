package client_test

import (
	"context"
	"errors"
	"strings"
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

// Prompts, resources, templates and completion against the fixture, at
// both revisions.
func TestFixturePromptsResourcesCompletion(t *testing.T) {
	url := fixtureURL(t)
	for _, version := range []string{client.LatestVersion, client.LegacyVersion} {
		t.Run(version, func(t *testing.T) {
			c, err := client.Connect(ctxT(t), client.HTTP(url), client.WithProtocolVersion(version))
			require.NoError(t, err)
			defer c.Close()
			ps, err := c.ListPrompts(ctxT(t))
			require.NoError(t, err)
			assert.NotEmpty(t, ps)
			p, err := c.GetPrompt(ctxT(t), "test_prompt_with_arguments", map[string]string{"arg1": "a", "arg2": "b"})
			require.NoError(t, err)
			require.NotEmpty(t, p.Messages)
			rs, err := c.ListResources(ctxT(t))
			require.NoError(t, err)
			assert.NotEmpty(t, rs)
			r, err := c.ReadResource(ctxT(t), "test://static-text")
			require.NoError(t, err)
			require.Len(t, r.Contents, 1)
			require.NotNil(t, r.Contents[0].Text)
			ts, err := c.ListResourceTemplates(ctxT(t))
			require.NoError(t, err)
			require.NotEmpty(t, ts)
			assert.Equal(t, "test://template/{id}/data", ts[0].URITemplate)
			comp, err := c.Complete(ctxT(t), client.CompletionRef{Type: "ref/prompt", Name: "test_prompt_with_arguments"}, "arg1", "", nil)
			require.NoError(t, err)
			assert.NotEmpty(t, comp.Values)
		})
	}
}

// Many calls at once on one client, each answering its own rounds:
// nothing of one call leaks into another.
func TestFixtureConcurrentCallsStayIsolated(t *testing.T) {
	url := fixtureURL(t)
	for _, version := range []string{client.LatestVersion, client.LegacyVersion} {
		t.Run(version, func(t *testing.T) {
			c, err := client.Connect(ctxT(t), client.HTTP(url), client.WithProtocolVersion(version),
				client.OnElicitation(answerName), client.OnSampling(answerModel), client.WithRoots(roots...))
			require.NoError(t, err)
			defer c.Close()
			var wg sync.WaitGroup
			errs := make(chan error, 8)
			for i := 0; i < 8; i++ { // the fixture allows 8 calls in flight per 2025 session
				wg.Add(1)
				go func() {
					defer wg.Done()
					res, err := c.CallTool(ctxT(t), "test_three_rounds", map[string]any{})
					if err == nil && !strings.Contains(res.Text(), "Three rounds completed") {
						err = errors.New(res.Text())
					}
					errs <- err
				}()
			}
			wg.Wait()
			close(errs)
			for err := range errs {
				assert.NoError(t, err)
			}
		})
	}
}
