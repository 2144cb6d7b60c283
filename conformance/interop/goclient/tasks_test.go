package goclient

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mrtrkit/mrtrkit/client"
	"github.com/mrtrkit/mrtrkit/mrtr"
)

// The mrtrkit client completes tasks (the Tasks extension, SEP-2663)
// against the conformance fixture (conformance/server) run as its own
// process: a task that asks a question inside the task, one that asks in
// an MRTR round before it becomes a task, and a cancelled one.
func TestTaskFixtureProcess(t *testing.T) {
	url := fixtureProcess(t)
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
