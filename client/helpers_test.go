package client_test

import (
	"context"
	"encoding/json"
	"net/http/httptest"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/mrtrkit/mrtrkit/mrtr"
	"github.com/mrtrkit/mrtrkit/mrtr/legacy"
	"github.com/mrtrkit/mrtrkit/mrtr/mrtrtest"
	"github.com/mrtrkit/mrtrkit/transport/streamablehttp"
)

// threeRounds asks for a name, then a model's answer, then the roots, and
// reports all three.
func threeRounds(ctx context.Context, req *mrtr.Request) (mrtr.Result, error) {
	var st struct{ Name, Model string }
	if req.State != nil {
		if err := json.Unmarshal(req.State, &st); err != nil {
			return nil, err
		}
	}
	seal := func(key string, r mrtr.InputRequest) (mrtr.Result, error) {
		b, _ := json.Marshal(st)
		return &mrtr.InputRequired{Requests: map[string]mrtr.InputRequest{key: r}, State: b}, nil
	}
	switch {
	case st.Name == "":
		if a, ok := req.Responses.Elicitation("name"); ok && a.Accepted() {
			st.Name, _ = a.Content["name"].(string)
			return seal("model", &mrtr.SamplingRequest{Messages: []mrtr.SamplingMessage{mrtr.UserText("hi")}, MaxTokens: 5})
		}
		return seal("name", &mrtr.ElicitRequest{Message: "Name?", RequestedSchema: &mrtr.ElicitSchema{Type: "object", Properties: map[string]json.RawMessage{"name": json.RawMessage(`{"type":"string"}`)}}})
	case st.Model == "":
		if a, ok := req.Responses.Sampling("model"); ok {
			st.Model = a.Text()
			return seal("roots", &mrtr.RootsRequest{})
		}
		return seal("model", &mrtr.SamplingRequest{Messages: []mrtr.SamplingMessage{mrtr.UserText("hi")}, MaxTokens: 5})
	}
	r, ok := req.Responses.Roots("roots")
	if !ok {
		return seal("roots", &mrtr.RootsRequest{})
	}
	return mrtr.TextResult(st.Name + "/" + st.Model + "/" + r.Roots[0].URI), nil
}

// answers are the answering functions every test uses, written once for
// mrtrtest and the real client alike.
var (
	answerName mrtr.ElicitFunc = func(ctx context.Context, r *mrtr.ElicitRequest) (*mrtr.ElicitResult, error) {
		return &mrtr.ElicitResult{Action: "accept", Content: map[string]any{"name": "Ada"}}, nil
	}
	answerModel mrtr.SamplingFunc = func(ctx context.Context, r *mrtr.SamplingRequest) (*mrtr.SamplingResult, error) {
		return &mrtr.SamplingResult{Role: mrtr.RoleAssistant, Model: "m", Content: []mrtr.SamplingContent{{Type: "text", Text: "gpt"}}}, nil
	}
	roots = []mrtr.Root{{URI: "file:///src"}}
)

// kitServer is an mrtrkit server with the test tools.
func kitServer(t *testing.T) *mrtr.Server {
	t.Helper()
	srv := mrtrtest.NewServer(t, "kit")
	require.NoError(t, srv.AddTool(mrtr.Tool{Name: "three"}, mrtr.HandlerFunc(threeRounds)))
	require.NoError(t, srv.AddTool(mrtr.Tool{Name: "echo"}, mrtr.HandlerFunc(func(ctx context.Context, req *mrtr.Request) (mrtr.Result, error) {
		return mrtr.TextResult(string(req.Arguments)), nil
	})))
	return srv
}

// serveHTTP serves srv over Streamable HTTP, both eras, on a loopback
// listener.
func serveHTTP(t *testing.T, srv *mrtr.Server) string {
	t.Helper()
	eng, err := legacy.New(srv)
	require.NoError(t, err)
	h, err := streamablehttp.New(srv, streamablehttp.WithLegacy(eng), streamablehttp.WithLogger(mrtrtest.TestLogger(t)))
	require.NoError(t, err)
	ts := httptest.NewServer(h)
	t.Cleanup(ts.Close)
	return ts.URL + "/mcp"
}
