package client_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mrtrkit/mrtrkit/client"
	"github.com/mrtrkit/mrtrkit/internal/fixture"
	"github.com/mrtrkit/mrtrkit/mrtr"
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

// The client completes tasks (the Tasks extension, SEP-2663) against the
// conformance fixture: a task that asks a question inside the task, one
// that asks in an MRTR round before it becomes a task, a failed one and a
// cancelled one.
func TestFixtureTasks(t *testing.T) {
	url := fixtureURL(t)
	// Booleans are answered true, every other field "ada".
	typed := func(ctx context.Context, r *mrtr.ElicitRequest) (*mrtr.ElicitResult, error) {
		content := map[string]any{}
		if r.RequestedSchema != nil {
			for k, raw := range r.RequestedSchema.Properties {
				var p struct{ Type string }
				_ = json.Unmarshal(raw, &p)
				content[k] = "ada"
				if p.Type == "boolean" {
					content[k] = true
				}
			}
		}
		return &mrtr.ElicitResult{Action: mrtr.Accepted, Content: content}, nil
	}
	c, err := client.Connect(ctxT(t), client.HTTP(url), client.OnElicitation(typed))
	require.NoError(t, err)
	defer c.Close()
	require.True(t, c.SupportsTasks(), "the fixture declares %s", mrtr.TasksExtension)

	t.Run("create, poll, answer, result", func(t *testing.T) {
		task, err := c.CreateTask(ctxT(t), "confirm_delete", map[string]any{"filename": "a.txt"})
		require.NoError(t, err)
		require.NotEmpty(t, task.ID)
		require.Positive(t, task.PollInterval)
		for task.Status != mrtr.TaskInputRequired {
			require.False(t, task.Done(), "the task ended before it asked: %s", task.Raw)
			time.Sleep(task.PollInterval)
			task, err = c.GetTask(ctxT(t), task.ID)
			require.NoError(t, err)
		}
		require.Len(t, task.InputRequests, 1)
		for _, q := range task.InputRequests {
			assert.Contains(t, string(q), `"elicitation/create"`)
		}
		require.NoError(t, c.AnswerTask(ctxT(t), task))
		res, err := c.AwaitTask(ctxT(t), task)
		require.NoError(t, err)
		assert.Equal(t, "Deleted a.txt", res.Text(), "the answer reached the task")
	})

	t.Run("to completion with AsTask, an MRTR round first", func(t *testing.T) {
		res, err := c.CallTool(ctxT(t), "test_tool_with_task", map[string]any{}, client.AsTask())
		require.NoError(t, err)
		assert.Equal(t, "Hello, ada! (from a task)", res.Text())
		assert.Equal(t, 1, res.Rounds)
	})

	t.Run("a failed task", func(t *testing.T) {
		_, err := c.CallTool(ctxT(t), "protocol_error_job", map[string]any{}, client.AsTask())
		require.ErrorIs(t, err, client.ErrTaskFailed)
		assert.Contains(t, err.Error(), "protocol_error_job failed on purpose")
	})

	t.Run("cancel", func(t *testing.T) {
		task, err := c.CreateTask(ctxT(t), "slow_compute", map[string]any{"seconds": 60, "label": "never"})
		require.NoError(t, err)
		require.NoError(t, c.CancelTask(ctxT(t), task.ID))
		_, err = c.AwaitTask(ctxT(t), task)
		require.ErrorIs(t, err, client.ErrTaskCancelled)

		// A call given up cancels its task.
		ctx, cancel := context.WithTimeout(ctxT(t), time.Second)
		defer cancel()
		_, err = c.CallTool(ctx, "slow_compute", map[string]any{"seconds": 60, "label": "abandoned"}, client.AsTask())
		require.ErrorIs(t, err, context.DeadlineExceeded)
		var e *client.Error
		require.ErrorAs(t, err, &e)
		require.NotEmpty(t, e.TaskID)
		require.Eventually(t, func() bool {
			got, err := c.GetTask(ctxT(t), e.TaskID)
			return err == nil && got.Status == mrtr.TaskCancelled
		}, 10*time.Second, 100*time.Millisecond)
	})
}
