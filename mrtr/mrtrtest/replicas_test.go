package mrtrtest_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mrtrkit/mrtrkit/mrtr"
	"github.com/mrtrkit/mrtrkit/mrtr/mrtrtest"
)

// replica is a server with the "three" tool built with opts.
func replica(t *testing.T, opts ...mrtr.Option) *mrtr.Server {
	t.Helper()
	srv := mrtrtest.NewServer(t, "replica", opts...)
	require.NoError(t, srv.AddTool(mrtr.Tool{Name: "three"}, mrtrtest.ThreeRounds("")))
	return srv
}

// TestReplicaCodecsOpenEachOthersState: the first round of a call is
// answered by one server and the retry served by another built apart
// with its own ReplicaCodec, which opens the requestState; a server with
// a key of its own refuses it.
func TestReplicaCodecsOpenEachOthersState(t *testing.T) {
	a, b := replica(t, mrtr.WithCodec(mrtrtest.ReplicaCodec(t))), replica(t, mrtr.WithCodec(mrtrtest.ReplicaCodec(t)))
	other := replica(t) // mrtrtest.NewServer's own fresh key
	ctx := context.Background()
	caps := `{"elicitation":{},"sampling":{},"roots":{}}`
	res, rerr := mrtrtest.Send(ctx, a, "", mrtrtest.NewRequest(mrtr.MethodToolsCall, map[string]any{"name": "three", "arguments": map[string]any{}}).WithCapabilities(caps))
	require.Nil(t, rerr)
	var first struct {
		ResultType   string `json:"resultType"`
		RequestState string `json:"requestState"`
	}
	require.NoError(t, json.Unmarshal(res, &first))
	require.Equal(t, mrtr.ResultTypeInputRequired, first.ResultType)
	retry := map[string]any{"name": "three", "arguments": map[string]any{}, "requestState": first.RequestState,
		"inputResponses": map[string]any{"name": map[string]any{"action": "accept", "content": map[string]any{"name": "Ada"}}}}

	res, rerr = mrtrtest.Send(ctx, b, "", mrtrtest.NewRequest(mrtr.MethodToolsCall, retry).WithCapabilities(caps))
	require.Nil(t, rerr, "the other replica opens the state")
	assert.Contains(t, string(res), `"draft"`, "and asks the next round")

	_, rerr = mrtrtest.Send(ctx, other, "", mrtrtest.NewRequest(mrtr.MethodToolsCall, retry).WithCapabilities(caps))
	require.NotNil(t, rerr, "a server with another key refuses the state")
}

// TestThreeRoundsNamesAMissingAnswer: a declined form ends the call with
// an isError result naming what is missing.
func TestThreeRoundsNamesAMissingAnswer(t *testing.T) {
	c := mrtrtest.NewClient(replica(t, mrtr.WithCodec(mrtrtest.ReplicaCodec(t))),
		mrtrtest.OnElicitation(func(context.Context, *mrtr.ElicitRequest) (*mrtr.ElicitResult, error) {
			return &mrtr.ElicitResult{Action: "decline"}, nil
		}))
	res, err := c.CallTool(context.Background(), "three", nil)
	require.NoError(t, err)
	assert.True(t, res.IsError)
	assert.Equal(t, "no name", res.Text())
}

func TestReplicaKeyRingHoldsOneKey(t *testing.T) {
	assert.Equal(t, []string{mrtrtest.ReplicaKeyID}, mrtrtest.ReplicaKeyRing(t).IDs())
}
