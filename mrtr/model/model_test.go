package model_test

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mrtrkit/mrtrkit/internal/testkit"
	"github.com/mrtrkit/mrtrkit/mrtr"
	"github.com/mrtrkit/mrtrkit/mrtr/model"
	"github.com/mrtrkit/mrtrkit/mrtr/mrtrtest"
)

func TestClientDefers(t *testing.T) {
	_, err := model.Client().CreateMessage(context.Background(), &mrtr.SamplingRequest{})
	assert.ErrorIs(t, err, model.ErrDeferred)
}

func TestValidateResult(t *testing.T) {
	ok := &mrtr.SamplingResult{Role: mrtr.RoleAssistant, Content: []mrtr.SamplingContent{{Type: "text", Text: "x"}}, Model: "m"}
	assert.NoError(t, ok.Validate())
	for name, r := range map[string]*mrtr.SamplingResult{
		"nil":        nil,
		"no role":    {Content: ok.Content, Model: "m"},
		"bad role":   {Role: "system", Content: ok.Content, Model: "m"},
		"no content": {Role: mrtr.RoleAssistant, Model: "m"},
		"no model":   {Role: mrtr.RoleAssistant, Content: ok.Content},
	} {
		assert.Error(t, r.Validate(), name)
	}
}

// haiku is a plain handler written once for both configurations.
func haiku(m model.Model) mrtr.HandlerFunc {
	return func(ctx context.Context, req *mrtr.Request) (mrtr.Result, error) {
		sr := &mrtr.SamplingRequest{Messages: []mrtr.SamplingMessage{mrtr.UserText("A haiku about tides")}, MaxTokens: 60}
		res, ask, err := model.Complete(ctx, m, req, "haiku", sr)
		if err != nil {
			return nil, err
		}
		if ask != nil {
			return ask, nil
		}
		return &mrtr.CallToolResult{Content: []mrtr.Content{mrtr.Text(res.Text())}}, nil
	}
}

// haikuServer serves haiku with model m.
func haikuServer(t *testing.T, m model.Model) *mrtr.Server {
	t.Helper()
	srv := testkit.Server(t, testkit.Desc("m", "1"),
		mrtr.WithCodec(testkit.FreshCodec(t)), mrtr.WithLogger(testkit.Logger(io.Discard, slog.LevelInfo)))
	require.NoError(t, srv.AddTool(mrtr.Tool{Name: "haiku"}, haiku(m)))
	return srv
}

// serve returns a function that sends one tools/call of haiku, served with
// model m, with the given extra params members.
func serve(t *testing.T, m model.Model) func(params string) (map[string]any, *mrtr.Error) {
	srv := haikuServer(t, m)
	return func(extra string) (map[string]any, *mrtr.Error) {
		body := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"haiku",` + extra +
			`"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{"sampling":{}}}}}`
		msg, _, perr := mrtr.ParseMessage([]byte(body))
		require.Nil(t, perr)
		resp := srv.Handle(context.Background(), &mrtr.Inbound{Message: msg})
		if resp.Error != nil {
			return nil, resp.Error
		}
		var out map[string]any
		require.NoError(t, json.Unmarshal(resp.Result, &out))
		return out, nil
	}
}

func TestCompleteThroughClient(t *testing.T) {
	call := serve(t, model.Client())
	r, e := call("")
	require.Nil(t, e)
	assert.Equal(t, "input_required", r["resultType"])
	assert.Contains(t, r["inputRequests"], "haiku")

	st, _ := json.Marshal(r["requestState"])
	r, e = call(`"requestState":` + string(st) + `,"inputResponses":{"haiku":{"role":"assistant","content":{"type":"text","text":"moon pulls"},"model":"c"}},`)
	require.Nil(t, e)
	assert.Equal(t, "complete", r["resultType"])
	assert.Equal(t, "moon pulls", r["content"].([]any)[0].(map[string]any)["text"])

	// A client whose model answers: one round.
	var asked []*mrtr.SamplingRequest
	c := mrtrtest.NewClient(haikuServer(t, model.Client()), mrtrtest.OnSampling(func(_ context.Context, r *mrtr.SamplingRequest) (*mrtr.SamplingResult, error) {
		asked = append(asked, r)
		return &mrtr.SamplingResult{Role: mrtr.RoleAssistant, Content: []mrtr.SamplingContent{{Type: "text", Text: "tide turns"}}, Model: "c"}, nil
	}))
	res, err := c.CallTool(context.Background(), "haiku", nil)
	require.NoError(t, err)
	assert.Equal(t, "tide turns", res.Text())
	assert.Equal(t, [][]string{{"haiku"}}, res.Asked)
	require.Len(t, asked, 1)
	assert.Equal(t, 60, asked[0].MaxTokens)

	// The client's model answering malformed is the client's error.
	c = mrtrtest.NewClient(haikuServer(t, model.Client()), mrtrtest.OnSampling(func(context.Context, *mrtr.SamplingRequest) (*mrtr.SamplingResult, error) {
		return &mrtr.SamplingResult{Role: mrtr.RoleAssistant, Model: "c"}, nil
	}))
	_, err = c.CallTool(context.Background(), "haiku", nil)
	var me *mrtr.Error
	require.ErrorAs(t, err, &me)
	assert.Equal(t, mrtr.CodeInvalidParams, me.Code)
}

func TestCompleteDirect(t *testing.T) {
	var got *mrtr.SamplingRequest
	call := serve(t, model.Func(func(_ context.Context, r *mrtr.SamplingRequest) (*mrtr.SamplingResult, error) {
		got = r
		return &mrtr.SamplingResult{Role: mrtr.RoleAssistant, Content: []mrtr.SamplingContent{{Type: "text", Text: "salt wind"}}, Model: "s"}, nil
	}))
	r, e := call("")
	require.Nil(t, e)
	assert.Equal(t, "complete", r["resultType"], "one round")
	assert.Equal(t, "salt wind", r["content"].([]any)[0].(map[string]any)["text"])
	require.NotNil(t, got)
	assert.Equal(t, 60, got.MaxTokens)
}

func TestCompleteDirectFailures(t *testing.T) {
	call := serve(t, model.Func(func(context.Context, *mrtr.SamplingRequest) (*mrtr.SamplingResult, error) {
		return nil, errors.New("provider down")
	}))
	_, e := call("")
	require.NotNil(t, e)
	assert.Equal(t, mrtr.CodeInternalError, e.Code)

	call = serve(t, model.Func(func(context.Context, *mrtr.SamplingRequest) (*mrtr.SamplingResult, error) {
		return &mrtr.SamplingResult{Role: mrtr.RoleAssistant}, nil
	}))
	_, e = call("")
	require.NotNil(t, e)
	assert.Equal(t, mrtr.CodeInternalError, e.Code, "a malformed completion is not passed on")
}

// model.Sample in straight-line code: the same handler completes inline
// with a server model (one call of it, no round) and in a round with the
// client's model; a model that defers hands the question to the client.
func TestSampleInlineOrClient(t *testing.T) {
	q := &mrtr.SamplingRequest{Messages: []mrtr.SamplingMessage{mrtr.UserText("haiku")}, MaxTokens: 20}
	handler := func(m model.Model) mrtr.HandlerFunc {
		return func(ctx context.Context, req *mrtr.Request) (mrtr.Result, error) {
			res, err := model.Sample(ctx, m, req, "haiku", q)
			if err != nil {
				return nil, err
			}
			return mrtr.TextResult(res.Text()), nil
		}
	}
	calls := 0
	server := model.Func(func(context.Context, *mrtr.SamplingRequest) (*mrtr.SamplingResult, error) {
		calls++
		return &mrtr.SamplingResult{Role: mrtr.RoleAssistant, Model: "server", Content: []mrtr.SamplingContent{{Type: "text", Text: "from the server"}}}, nil
	})
	deferring := model.Func(func(context.Context, *mrtr.SamplingRequest) (*mrtr.SamplingResult, error) {
		return nil, model.ErrDeferred
	})
	srv := mrtrtest.NewServer(t, "models")
	require.NoError(t, srv.AddTool(mrtr.Tool{Name: "server"}, handler(server)))
	require.NoError(t, srv.AddTool(mrtr.Tool{Name: "client"}, handler(model.Client())))
	require.NoError(t, srv.AddTool(mrtr.Tool{Name: "deferring"}, handler(deferring)))
	c := mrtrtest.NewClient(srv, mrtrtest.OnSampling(func(context.Context, *mrtr.SamplingRequest) (*mrtr.SamplingResult, error) {
		return &mrtr.SamplingResult{Role: mrtr.RoleAssistant, Model: "client", Content: []mrtr.SamplingContent{{Type: "text", Text: "from the client"}}}, nil
	}))
	for tool, want := range map[string]struct {
		text   string
		rounds int
	}{"server": {"from the server", 0}, "client": {"from the client", 1}, "deferring": {"from the client", 1}} {
		res, err := c.CallTool(context.Background(), tool, nil)
		require.NoError(t, err, tool)
		assert.Equal(t, want.text, res.Text(), tool)
		assert.Equal(t, want.rounds, res.Rounds, tool)
	}
	assert.Equal(t, 1, calls)
}
