package main

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http/httptest"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mrtrkit/mrtrkit/discover"
	"github.com/mrtrkit/mrtrkit/internal/testkit"
	"github.com/mrtrkit/mrtrkit/mrtr"
	"github.com/mrtrkit/mrtrkit/transport/streamablehttp"
)

// taskTestServer serves two task tools: confirm asks one question, slow
// waits until cancelled.
func taskTestServer(t *testing.T) (string, *recorder) {
	t.Helper()
	srv, err := mrtr.NewServer(discover.Description{Server: discover.Implementation{Name: "tasks", Version: "1"}},
		mrtr.WithCodec(testkit.Codec(t)), mrtr.WithLogger(quiet), mrtr.WithTasks(mrtr.TaskPollInterval(20*time.Millisecond)))
	require.NoError(t, err)
	require.NoError(t, srv.AddTool(mrtr.Tool{Name: "confirm"}, mrtr.HandlerFunc(func(ctx context.Context, req *mrtr.Request) (mrtr.Result, error) {
		a, err := mrtr.Elicit(ctx, req, "ok", &mrtr.ElicitRequest{Message: "Proceed?", RequestedSchema: &mrtr.ElicitSchema{Type: "object",
			Properties: map[string]json.RawMessage{"yes": json.RawMessage(`{"type":"boolean"}`)}}})
		if err != nil {
			return nil, err
		}
		return mrtr.TextResult("confirmed: " + string(a.Action)), nil
	}), mrtr.TaskSupport(mrtr.TaskOptional)))
	require.NoError(t, srv.AddTool(mrtr.Tool{Name: "slow"}, mrtr.HandlerFunc(func(ctx context.Context, req *mrtr.Request) (mrtr.Result, error) {
		<-ctx.Done()
		return nil, ctx.Err()
	}), mrtr.TaskSupport(mrtr.TaskRequired)))
	h, err := streamablehttp.New(srv)
	require.NoError(t, err)
	rec := &recorder{}
	hs := httptest.NewServer(rec.wrap(h))
	t.Cleanup(func() {
		hs.Close()
		srv.Close()
		srv.WaitTasks()
	})
	return hs.URL + "/mcp", rec
}

func TestTaskCreatedPolledAnsweredOnTheWire(t *testing.T) {
	url, rec := taskTestServer(t)
	answers := writeFile(t, "answers.json", `{"*": {"yes": true}}`)
	r := runCLI(t, "-url", url, "--task", "tools", "call", "confirm", "--elicit-answers", answers)
	require.Equal(t, exitOK, r.code, r.stderr)
	assert.Contains(t, r.stdout, "confirmed: accept")
	assert.Regexp(t, regexp.MustCompile(`runs the call as task [A-Za-z0-9_-]{22}`), r.stderr)
	assert.NotEmpty(t, rec.all("tasks/get"))
	require.Len(t, rec.all("tasks/update"), 1)
	for _, s := range rec.all("") {
		if s.Method == "tools/call" || strings.HasPrefix(s.Method, "tasks/") {
			assert.Contains(t, string(s.meta(t)["io.modelcontextprotocol/clientCapabilities"]), mrtr.TasksExtension, "every request of the task declares the extension")
		}
	}
	// Without --task the same tool runs synchronously, as a plain MRTR call.
	r = runCLI(t, "-url", url, "tools", "call", "confirm", "--elicit-answers", answers)
	require.Equal(t, exitOK, r.code, r.stderr)
	assert.NotContains(t, r.stderr, "task")
}

func TestTaskCancelledWhenInterrupted(t *testing.T) {
	url, rec := taskTestServer(t)
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(200*time.Millisecond, cancel)
	var out, errb bytes.Buffer
	code := run(ctx, []string{"-url", url, "--task", "tools", "call", "slow"}, &env{stdin: strings.NewReader(""), stdout: &out, stderr: &errb, getenv: func(string) string { return "" }})
	assert.Equal(t, exitUsage, code)
	assert.Contains(t, errb.String(), "asked task")
	require.Len(t, rec.all("tasks/cancel"), 1)
	// tasks get shows it cancelled; tasks cancel again is acknowledged.
	var id string
	var body struct {
		Params struct {
			TaskID string `json:"taskId"`
		} `json:"params"`
	}
	require.NoError(t, json.Unmarshal(rec.all("tasks/cancel")[0].Body, &body))
	id = body.Params.TaskID
	require.Eventually(t, func() bool {
		r := runCLI(t, "-url", url, "tasks", "get", id)
		return r.code == exitOK && regexp.MustCompile(`cancelled`).MatchString(r.stdout)
	}, 5*time.Second, 20*time.Millisecond)
	r := runCLI(t, "-url", url, "tasks", "cancel", id)
	assert.Equal(t, exitOK, r.code, r.stderr)
	r = runCLI(t, "-url", url, "tasks", "get", "AAAAAAAAAAAAAAAAAAAAAA")
	assert.NotEqual(t, exitOK, r.code)
}

// A task whose question mcpcall cannot answer is left running, with its
// id; tasks wait follows it later, answering from a file, to its result.
func TestTaskLeftForTasksWait(t *testing.T) {
	url, rec := taskTestServer(t)
	// It declares elicitation, so the task asks, but has no answers.
	r := runCLI(t, "-url", url, "--task", "--capabilities", `{"elicitation":{}}`, "tools", "call", "confirm")
	assert.Equal(t, exitUsage, r.code)
	assert.Contains(t, r.stderr, "cannot answer")
	assert.Empty(t, rec.all("tasks/cancel"), "the task is left for tasks wait")
	id := regexp.MustCompile(`runs the call as task ([A-Za-z0-9_-]{22})`).FindStringSubmatch(r.stderr)
	require.Len(t, id, 2, r.stderr)

	answers := writeFile(t, "answers.json", `{"*": {"yes": true}}`)
	r = runCLI(t, "-url", url, "tasks", "wait", id[1], "--elicit-answers", answers)
	require.Equal(t, exitOK, r.code, r.stderr)
	assert.Contains(t, r.stdout, "confirmed: accept")
	assert.Contains(t, r.stdout, "round 1")
	require.Len(t, rec.all("tasks/update"), 1)
}

// A task id that begins with "-" is passed back as it was printed: tasks
// get and tasks cancel send it to the server, which answers that it knows
// no such task (a JSON-RPC error), rather than mcpcall refusing its own
// command line.
func TestTaskIDLikeAFlag(t *testing.T) {
	url, rec := taskTestServer(t)
	const id = "-K5hEuEnIRF5iRQ3RqNniA"
	for _, sub := range []string{"get", "cancel"} {
		r := runCLI(t, "-url", url, "tasks", sub, id)
		assert.Equal(t, exitRPCError, r.code, r.stderr)
		sent := rec.all("tasks/" + sub)
		require.Len(t, sent, 1)
		var body struct {
			Params struct {
				TaskID string `json:"taskId"`
			} `json:"params"`
		}
		require.NoError(t, json.Unmarshal(sent[0].Body, &body))
		assert.Equal(t, id, body.Params.TaskID)
	}
}
