package suite

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/mrtrkit/mrtrkit/client"
	"github.com/mrtrkit/mrtrkit/mrtr"
)

// connect opens a client of 2026-07-28 (package client) to the server, as
// the main principal, declaring the configured capabilities and answering
// the server's questions as the suite answers them: for the scenarios
// that behave as an ordinary client does.
func (r *runner) connect(ctx context.Context, opts ...client.Option) (*client.Client, error) {
	var hopts []client.HTTPOption
	hopts = append(hopts, client.WithHTTPClient(r.client))
	if r.cfg.Token != "" {
		hopts = append(hopts, client.WithBearerToken(r.cfg.Token))
	}
	var caps mrtr.ClientCapabilities
	if err := json.Unmarshal(r.cfg.Capabilities, &caps); err != nil {
		return nil, fmt.Errorf("the capabilities do not decode: %w", err)
	}
	cctx, cancel := context.WithTimeout(ctx, r.cfg.Timeout)
	defer cancel()
	all := append([]client.Option{
		client.WithProtocolVersion(client.LatestVersion),
		client.WithClientInfo(clientInfo.Name, clientInfo.Version),
		client.WithCapabilities(caps),
		client.OnElicitation(func(_ context.Context, q *mrtr.ElicitRequest) (*mrtr.ElicitResult, error) {
			return madeUpAnswer[mrtr.ElicitResult]("elicitation/create", q)
		}),
		client.OnSampling(func(_ context.Context, q *mrtr.SamplingRequest) (*mrtr.SamplingResult, error) {
			return madeUpAnswer[mrtr.SamplingResult]("sampling/createMessage", q)
		}),
		client.OnRoots(func(context.Context) (*mrtr.RootsResult, error) {
			return madeUpAnswer[mrtr.RootsResult]("roots/list", struct{}{})
		}),
	}, opts...)
	return client.Connect(cctx, client.HTTP(r.cfg.URL, hopts...), all...)
}

// madeUpAnswer answers a question of the server as the suite does
// (answerOne), decoded as the client's function returns it.
func madeUpAnswer[T any](method string, params any) (*T, error) {
	p, err := json.Marshal(params)
	if err != nil {
		return nil, err
	}
	a, err := answerOne(object(m("method", str(method)), m("params", p)))
	if err != nil {
		return nil, err
	}
	var out T
	if err := json.Unmarshal(a, &out); err != nil {
		return nil, fmt.Errorf("the made-up answer does not decode: %w", err)
	}
	return &out, nil
}
