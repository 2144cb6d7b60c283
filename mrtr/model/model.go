package model

import (
	"context"
	"errors"
	"fmt"

	"github.com/mrtrkit/mrtrkit/mrtr"
)

// Model produces the completion of a sampling request. Its answer is
// either here now (a model the server calls itself) or ErrDeferred, which
// leaves the completion to the client's model through an embedded
// sampling/createMessage request.
type Model interface {
	CreateMessage(ctx context.Context, r *mrtr.SamplingRequest) (*mrtr.SamplingResult, error)
}

// ErrDeferred is returned by a Model that leaves the completion to the
// client: the handler then asks for it with input_required and reads the
// client's answer on the retry.
var ErrDeferred = errors.New("model: completion deferred to the client")

// Client returns the Model that leaves every completion to the client:
// sampling/createMessage embedded in input_required. The client must
// declare the sampling capability on the request; otherwise the server
// answers -32021. Sampling is deprecated in MCP 2026-07-28; a server that
// owns a model provider configures that provider instead, and its
// handlers do not change.
func Client() Model { return client{} }

type client struct{}

// CreateMessage always defers.
func (client) CreateMessage(context.Context, *mrtr.SamplingRequest) (*mrtr.SamplingResult, error) {
	return nil, ErrDeferred
}

// Func adapts a function to Model.
type Func func(ctx context.Context, r *mrtr.SamplingRequest) (*mrtr.SamplingResult, error)

// CreateMessage calls f.
func (f Func) CreateMessage(ctx context.Context, r *mrtr.SamplingRequest) (*mrtr.SamplingResult, error) {
	return f(ctx, r)
}

// Sample obtains the completion of q asked under key, in straight-line
// code: the answer recorded for key on an earlier round when there is
// one; otherwise m's. A model the server calls answers now, and its
// answer is recorded in the call's sealed state, so later rounds neither
// call it again nor get a different answer; Client() (or a model that
// returns ErrDeferred) asks the client's model instead, and Sample
// returns an error matching mrtr.ErrInputRequired, which the handler
// returns:
//
//	summary, err := model.Sample(ctx, m, req, "summary", q)
//	if err != nil {
//		return Output{}, err
//	}
//
// A handler written this way runs unchanged whether the server owns a
// model or leaves completions to the client.
func Sample(ctx context.Context, m Model, req *mrtr.Request, key string, q *mrtr.SamplingRequest) (*mrtr.SamplingResult, error) {
	if _, ok := m.(client); ok || m == nil {
		return mrtr.Sample(ctx, req, key, q)
	}
	return mrtr.Sample(ctx, req, key, q, mrtr.AnswerWith(func(ctx context.Context, q *mrtr.SamplingRequest) (*mrtr.SamplingResult, error) {
		res, err := m.CreateMessage(ctx, q)
		if errors.Is(err, ErrDeferred) {
			return nil, mrtr.ErrInputRequired
		}
		return res, err
	}))
}

// Complete obtains, for a handler written against mrtr.Result, the completion of r asked
// under key. When the request carries the client's answer to key (asked in
// the previous round), that answer is returned. Otherwise m is asked: a
// model the server calls returns its completion now; the client model
// returns a non-nil *mrtr.InputRequired asking for r under key, which the
// handler returns as its result (adding its State when it keeps any).
//
//	res, ask, err := model.Complete(ctx, m, req, "haiku", sr)
//	if err != nil || ask != nil {
//		return ask, err
//	}
func Complete(ctx context.Context, m Model, req *mrtr.Request, key string, r *mrtr.SamplingRequest) (*mrtr.SamplingResult, *mrtr.InputRequired, error) {
	if res, ok := req.Responses.Sampling(key); ok {
		return res, nil, nil
	}
	res, err := m.CreateMessage(ctx, r)
	if errors.Is(err, ErrDeferred) {
		return nil, mrtr.Ask(key, r), nil
	}
	if err != nil {
		return nil, nil, err
	}
	if err := res.Validate(); err != nil {
		return nil, nil, fmt.Errorf("model: %w", err)
	}
	return res, nil, nil
}
