package client_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mrtrkit/mrtrkit/client"
	"github.com/mrtrkit/mrtrkit/mrtr"
	"github.com/mrtrkit/mrtrkit/mrtr/mrtrtest"
)

func ctxT(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	t.Cleanup(cancel)
	return ctx
}

// The same answering functions serve the in-process test client and the
// real client over HTTP, at both revisions.
func TestThreeRoundToolSameHandlersBothEras(t *testing.T) {
	srv := kitServer(t)
	url := serveHTTP(t, srv)

	tc := mrtrtest.NewClient(srv, mrtrtest.OnElicitation(answerName), mrtrtest.OnSampling(answerModel), mrtrtest.WithRoots(roots...))
	want, err := tc.CallTool(ctxT(t), "three", nil)
	require.NoError(t, err)
	assert.Equal(t, "Ada/gpt/file:///src", want.Text())

	for _, version := range []string{"", client.LatestVersion, client.LegacyVersion} {
		t.Run("version="+version, func(t *testing.T) {
			opts := []client.Option{client.OnElicitation(answerName), client.OnSampling(answerModel), client.WithRoots(roots...)}
			if version != "" {
				opts = append(opts, client.WithProtocolVersion(version))
			}
			c, err := client.Connect(ctxT(t), client.HTTP(url), opts...)
			require.NoError(t, err)
			defer c.Close()
			res, err := c.CallTool(ctxT(t), "three", nil)
			require.NoError(t, err)
			assert.Equal(t, want.Text(), res.Text())
			if version == client.LegacyVersion {
				assert.True(t, c.Legacy())
				assert.Equal(t, 0, res.Rounds, "a 2025-11-25 server asks on its stream; no rounds")
			} else {
				assert.False(t, c.Legacy())
				assert.Equal(t, client.LatestVersion, c.Version())
				assert.Equal(t, 3, res.Rounds)
				assert.Equal(t, [][]string{{"name"}, {"model"}, {"roots"}}, res.Asked)
			}
			assert.Equal(t, "kit", c.ServerInfo().Name)
		})
	}
}

func TestRoundLimit(t *testing.T) {
	srv := mrtrtest.NewServer(t, "kit")
	require.NoError(t, srv.AddTool(mrtr.Tool{Name: "forever"}, mrtr.HandlerFunc(func(ctx context.Context, req *mrtr.Request) (mrtr.Result, error) {
		return mrtr.Ask("again", &mrtr.RootsRequest{}), nil
	})))
	c, err := client.Connect(ctxT(t), client.HTTP(serveHTTP(t, srv)), client.WithRoots(roots...), client.WithMaxRounds(2))
	require.NoError(t, err)
	defer c.Close()
	_, err = c.CallTool(ctxT(t), "forever", nil)
	require.ErrorIs(t, err, client.ErrTooManyRounds)
	var ce *client.Error
	require.ErrorAs(t, err, &ce)
	assert.Equal(t, "tools/call", ce.Method)
	assert.Equal(t, "forever", ce.Name)
	assert.Equal(t, 2, ce.Round)
	assert.Contains(t, err.Error(), "/mcp: tools/call \"forever\" (round 3)")
}

func TestUnansweredQuestionNamesRoundAndKey(t *testing.T) {
	srv := kitServer(t)
	c, err := client.Connect(ctxT(t), client.HTTP(serveHTTP(t, srv)), client.OnElicitation(answerName),
		client.WithCapabilities(mrtr.ClientCapabilities{Elicitation: &mrtr.ElicitCapability{}, Sampling: &mrtr.SamplingCapability{}}))
	require.NoError(t, err)
	defer c.Close()
	_, err = c.CallTool(ctxT(t), "three", nil)
	require.ErrorIs(t, err, client.ErrUnanswered)
	assert.Contains(t, err.Error(), `(round 2)`)
	assert.Contains(t, err.Error(), `"model" (sampling/createMessage)`)
}

func TestServerErrorIsActionable(t *testing.T) {
	c, err := client.Connect(ctxT(t), client.HTTP(serveHTTP(t, kitServer(t))))
	require.NoError(t, err)
	defer c.Close()
	_, err = c.CallTool(ctxT(t), "nope", nil)
	require.Error(t, err)
	assert.Equal(t, client.CodeInvalidParams, client.CodeOf(err))
	var rpc *client.RPCError
	require.True(t, errors.As(err, &rpc))
	assert.Contains(t, err.Error(), `tools/call "nope"`)
	assert.Contains(t, err.Error(), "server error -32602")
}
