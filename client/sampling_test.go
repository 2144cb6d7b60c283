package client_test

import (
	"context"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mrtrkit/mrtrkit/client"
	"github.com/mrtrkit/mrtrkit/mrtr"
)

func answeringModel(name string, inputs ...string) client.Model {
	return client.Model{Name: name, Inputs: inputs, Generate: func(ctx context.Context, req *mrtr.SamplingRequest, beat func(int)) (*mrtr.SamplingResult, error) {
		beat(1)
		return &mrtr.SamplingResult{Role: mrtr.RoleAssistant, Content: []mrtr.SamplingContent{{Type: "text", Text: "from " + name}}}, nil
	}}
}

func imageRequest(hints ...string) *mrtr.SamplingRequest {
	req := &mrtr.SamplingRequest{MaxTokens: 100, Messages: []mrtr.SamplingMessage{{Role: mrtr.RoleUser, Content: []mrtr.SamplingContent{
		{Type: "text", Text: "what is this?"}, {Type: "image", Data: "iVBORw0KGgo=", MIMEType: "image/png"}}}}}
	if hints != nil {
		req.ModelPreferences = &mrtr.ModelPreferences{}
		for _, h := range hints {
			req.ModelPreferences.Hints = append(req.ModelPreferences.Hints, mrtr.ModelHint{Name: h})
		}
	}
	return req
}

// The content decides which models may answer; a hint naming a model
// that cannot read the content does not make it eligible.
func TestSamplingModelChosenByContentHintsNeverWiden(t *testing.T) {
	p := &client.SamplingPolicy{Server: "s", Decision: client.Allow, Models: []client.Model{
		answeringModel("gpt-text", "text"), answeringModel("vision-small", "text", "image"), answeringModel("vision-large", "text", "image")}}
	res, err := p.Func()(context.Background(), imageRequest("gpt"))
	require.NoError(t, err)
	assert.Equal(t, "vision-small", res.Model)
	assert.Equal(t, "from vision-small", res.Text())

	// Among the eligible, the hints rank.
	res, err = p.Func()(context.Background(), imageRequest("large", "small"))
	require.NoError(t, err)
	assert.Equal(t, "vision-large", res.Model)
}

func TestSamplingRefusalNamesEachRejectedModel(t *testing.T) {
	p := &client.SamplingPolicy{Server: "weather", Decision: client.Allow, Models: []client.Model{
		answeringModel("gpt-text", "text"), {Name: "tiny", Inputs: []string{"text", "image"}, MaxTokens: 10}}}
	_, err := p.Func()(context.Background(), imageRequest())
	var r *client.SamplingRefusal
	require.ErrorAs(t, err, &r)
	assert.Equal(t, "weather", r.Server)
	assert.Equal(t, []client.RejectedModel{
		{Model: "gpt-text", Reason: "it does not read image content"},
		{Model: "tiny", Reason: "the request wants up to 100 tokens and it generates at most 10"},
	}, r.Rejected)

	_, err = (&client.SamplingPolicy{Server: "weather", Decision: client.Deny, Models: p.Models}).Func()(context.Background(), imageRequest())
	require.ErrorAs(t, err, &r)
	assert.Contains(t, r.Reason, "denies")
}

func TestSamplingAskShowsKindsAndSizesNotContent(t *testing.T) {
	var shown client.SamplingPrompt
	p := &client.SamplingPolicy{Server: "s", Models: []client.Model{answeringModel("v", "text", "image")},
		Ask: func(ctx context.Context, sp client.SamplingPrompt) (bool, error) { shown = sp; return false, nil }}
	_, err := p.Func()(context.Background(), imageRequest())
	var r *client.SamplingRefusal
	require.ErrorAs(t, err, &r)
	assert.Equal(t, "the user declined", r.Reason)
	assert.Equal(t, client.SamplingPrompt{Server: "s", Model: "v", Kinds: map[string]int{"text": 1, "image": 1}, Bytes: 25, MaxTokens: 100}, shown)

	_, err = (&client.SamplingPolicy{Server: "s", Models: p.Models}).Func()(context.Background(), imageRequest())
	require.ErrorAs(t, err, &r, "ask with no one to ask refuses")
}

// A silence bound, not a total: a model that keeps beating runs past it;
// one that falls silent is stopped. Beats carry counts.
func TestSamplingStallBound(t *testing.T) {
	var beats []client.SamplingProgress
	slowButAlive := client.Model{Name: "alive", Inputs: []string{"text", "image"}, Generate: func(ctx context.Context, req *mrtr.SamplingRequest, beat func(int)) (*mrtr.SamplingResult, error) {
		for i := 1; i <= 8; i++ {
			select {
			case <-time.After(75 * time.Millisecond):
				beat(i * 10)
			case <-ctx.Done():
				return nil, ctx.Err()
			}
		}
		return &mrtr.SamplingResult{Role: mrtr.RoleAssistant, Content: []mrtr.SamplingContent{{Type: "text", Text: "done"}}}, nil
	}}
	p := &client.SamplingPolicy{Server: "s", Decision: client.Allow, Stall: 300 * time.Millisecond, Models: []client.Model{slowButAlive},
		OnProgress: func(sp client.SamplingProgress) { beats = append(beats, sp) }}
	res, err := p.Func()(context.Background(), imageRequest())
	require.NoError(t, err, "600ms in all, never 300ms silent")
	assert.Equal(t, "alive", res.Model)
	require.Len(t, beats, 8)
	assert.Equal(t, 80, beats[7].Tokens)

	silent := client.Model{Name: "silent", Inputs: []string{"text", "image"}, Generate: func(ctx context.Context, req *mrtr.SamplingRequest, beat func(int)) (*mrtr.SamplingResult, error) {
		beat(1)
		<-ctx.Done()
		return nil, ctx.Err()
	}}
	start := time.Now()
	_, err = (&client.SamplingPolicy{Server: "s", Decision: client.Allow, Stall: 100 * time.Millisecond, Models: []client.Model{silent}}).Func()(context.Background(), imageRequest())
	require.ErrorIs(t, err, client.ErrStalled)
	assert.Less(t, time.Since(start), 2*time.Second)
}

// Over a real server: the policy plugs into OnSampling, and a refusal
// reaches the caller with the models named.
func TestSamplingPolicyOverHTTP(t *testing.T) {
	srv := kitServer(t)
	p := &client.SamplingPolicy{Server: "kit", Decision: client.Allow, Models: []client.Model{{Name: "audio-only", Inputs: []string{"audio"}}}}
	c, err := client.Connect(ctxT(t), client.HTTP(serveHTTP(t, srv)), client.OnElicitation(answerName), client.OnSampling(p.Func()), client.WithRoots(roots...))
	require.NoError(t, err)
	defer c.Close()
	_, err = c.CallTool(ctxT(t), "three", nil)
	var r *client.SamplingRefusal
	require.ErrorAs(t, err, &r)
	assert.Contains(t, err.Error(), "audio-only: it does not read text content")
	assert.Contains(t, err.Error(), "(round 2)")
}

// Answering a server's request while the client's own call is pending
// never deadlocks, even when the answer itself calls the server.
func TestAnsweringWhileCallPendingNeverDeadlocks(t *testing.T) {
	for _, tr := range []string{"stdio", "http"} {
		t.Run(tr, func(t *testing.T) {
			var c *client.Client
			var inner atomic.Int32
			sampling := func(ctx context.Context, req *mrtr.SamplingRequest) (*mrtr.SamplingResult, error) {
				ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
				defer cancel()
				if _, err := c.ListTools(ctx); err != nil {
					return nil, err
				}
				inner.Add(1)
				return answerModel(ctx, req)
			}
			opts := []client.Option{client.WithProtocolVersion(client.LegacyVersion), client.OnElicitation(answerName), client.OnSampling(sampling), client.WithRoots(roots...)}
			var t0 client.Transport
			if tr == "stdio" {
				t0 = client.Command(serverCmd(t, "kit"))
			} else {
				t0 = client.HTTP(serveHTTP(t, kitServer(t)))
			}
			var err error
			c, err = client.Connect(ctxT(t), t0, opts...)
			require.NoError(t, err)
			defer c.Close()
			ctx, cancel := context.WithTimeout(ctxT(t), 10*time.Second)
			defer cancel()
			res, err := c.CallTool(ctx, "three", nil)
			require.NoError(t, err)
			assert.Equal(t, "Ada/gpt/file:///src", res.Text())
			assert.Equal(t, int32(1), inner.Load())
		})
	}
}

// Among models the hints do not tell apart, the server's priorities
// weigh cost, speed and intelligence.
func TestSamplingPrioritiesRankEligibleModels(t *testing.T) {
	cheap := answeringModel("cheap", "text", "image")
	cheap.Cost, cheap.Speed, cheap.Intelligence = 0.1, 0.9, 0.3
	smart := answeringModel("smart", "text", "image")
	smart.Cost, smart.Speed, smart.Intelligence = 0.9, 0.2, 0.95
	textOnly := answeringModel("genius-text", "text")
	textOnly.Intelligence = 1
	p := &client.SamplingPolicy{Server: "s", Decision: client.Allow, Models: []client.Model{textOnly, cheap, smart}}
	one := 1.0
	req := imageRequest()
	req.ModelPreferences = &mrtr.ModelPreferences{IntelligencePriority: &one}
	res, err := p.Func()(context.Background(), req)
	require.NoError(t, err)
	assert.Equal(t, "smart", res.Model, "the most capable eligible model; the text-only one stays out")
	req.ModelPreferences = &mrtr.ModelPreferences{CostPriority: &one}
	res, err = p.Func()(context.Background(), req)
	require.NoError(t, err)
	assert.Equal(t, "cheap", res.Model)
}

func TestPromptAskShowsSizesAndReadsYes(t *testing.T) {
	var out strings.Builder
	ask := client.PromptAsk(strings.NewReader("y\nno\n"), &out)
	p := client.SamplingPrompt{Server: "evil\x1b[2Jserver", Model: "vision", Kinds: map[string]int{"text": 2, "image": 1}, Bytes: 25, MaxTokens: 100}
	yes, err := ask(context.Background(), p)
	require.NoError(t, err)
	assert.True(t, yes)
	assert.Equal(t, `Server "evil[2Jserver" asks model "vision" to answer: 1 image, 2 text block(s), 25 bytes, up to 100 tokens, 0 tool(s). Allow? [y/N] `, out.String(),
		"no escape sequence from the server reaches the terminal")
	yes, err = ask(context.Background(), p)
	require.NoError(t, err)
	assert.False(t, yes)
	yes, err = ask(context.Background(), p)
	require.NoError(t, err)
	assert.False(t, yes, "the end of the input refuses")
}
