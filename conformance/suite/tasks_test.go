package suite

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mrtrkit/mrtrkit/discover"
	"github.com/mrtrkit/mrtrkit/mrtr"
	"github.com/mrtrkit/mrtrkit/transport/streamablehttp"
)

// taskIDs are the task scenarios, not run on a server without tasks.
func taskIDs() []string {
	var ids []string
	for _, s := range taskScenarios {
		ids = append(ids, s.ID)
	}
	return ids
}

// newTaskServer serves DefaultTaskTool as a task, authenticating the
// tokens "one" and "two" as two principals; with samePrincipal, both as
// one (a server that does not bind tasks to their creator, as far as the
// suite can tell).
func newTaskServer(t *testing.T, samePrincipal bool) string {
	t.Helper()
	srv, err := mrtr.NewServer(discover.Description{Server: discover.Implementation{Name: "tasks", Version: "1"}}, mrtr.WithLogger(quiet), mrtr.WithTasks())
	require.NoError(t, err)
	require.NoError(t, srv.AddTool(mrtr.Tool{Name: DefaultTaskTool}, mrtr.HandlerFunc(func(ctx context.Context, _ *mrtr.Request) (mrtr.Result, error) {
		select {
		case <-time.After(time.Minute):
			return mrtr.TextResult("done"), nil
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}), mrtr.TaskSupport(mrtr.TaskOptional)))
	h, err := streamablehttp.New(srv, streamablehttp.WithAuthenticator(func(r *http.Request) (*mrtr.TokenInfo, error) {
		tok, _ := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
		if samePrincipal {
			tok = "one"
		}
		return &mrtr.TokenInfo{Subject: tok}, nil
	}))
	require.NoError(t, err)
	hs := httptest.NewServer(h)
	t.Cleanup(func() {
		hs.Close()
		srv.Close()
		srv.WaitTasks()
	})
	return hs.URL + "/mcp"
}

func taskConfig(url string) Config {
	return Config{URL: url, Token: "one", OtherToken: "two", Select: func(id string) bool { return strings.HasPrefix(id, "tasks.") }}
}

func TestTaskScenariosPassOnMRTRKit(t *testing.T) {
	rep := run(t, taskConfig(newTaskServer(t, false)))
	require.Len(t, rep.Results, len(taskScenarios))
	requireStatus(t, rep, Pass, taskIDs()...)
}

func TestTaskScenariosCatchTasksSharedBetweenPrincipals(t *testing.T) {
	rep := run(t, taskConfig(newTaskServer(t, true)))
	res, ok := rep.Result("tasks.other-principal")
	require.True(t, ok)
	assert.Equal(t, Fail, res.Status, res.Reason)
}
