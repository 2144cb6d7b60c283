package client

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sort"

	"github.com/mrtrkit/mrtrkit/internal/wire"
	"github.com/mrtrkit/mrtrkit/mrtr"
)

// roundResult is the part of a result that says whether the call is
// complete.
type roundResult struct {
	ResultType    string                     `json:"resultType"`
	InputRequests map[string]json.RawMessage `json:"inputRequests"`
	RequestState  json.RawMessage            `json:"requestState"`
}

// embedded is one request embedded in an input_required result.
type embedded struct {
	Method string          `json:"method"`
	Params json.RawMessage `json:"params"`
}

// Exchange is what one call went through.
type Exchange struct {
	// Rounds is how many input-required rounds the client answered.
	Rounds int
	// Asked lists, round by round, the keys each round asked, sorted.
	Asked [][]string
}

// run sends a request for a method that may answer input_required and
// answers its rounds, up to the client's round limit. A result without
// resultType is complete (servers of 2025-11-25 never send one).
func (c *Client) run(ctx context.Context, method, name string, params []member, hdrs map[string]string, co *callOpts, ex *Exchange) (json.RawMessage, error) {
	base := params
	for round := 0; ; round++ {
		res, err := c.call(ctx, method, name, params, hdrs, co, round)
		if err != nil {
			return nil, err
		}
		var rr roundResult
		if err := json.Unmarshal(res, &rr); err != nil {
			return nil, &Error{Server: c.server, Method: method, Name: name, Round: round, Err: fmt.Errorf("the result does not decode: %w", err)}
		}
		switch rr.ResultType {
		case "", wire.ResultComplete:
			return res, nil
		case resultTask:
			if co != nil && co.task {
				// The server runs the call as a task (CreateTaskResult).
				return res, nil
			}
			return nil, &Error{Server: c.server, Method: method, Name: name, Round: round, Err: errors.New("the server answered with a task, but the request did not declare the Tasks extension")}
		case wire.ResultInputRequired:
		default:
			return nil, &Error{Server: c.server, Method: method, Name: name, Round: round, Err: fmt.Errorf("unknown resultType %q", clip(rr.ResultType, 40))}
		}
		if round >= c.cfg.maxRounds {
			return nil, &Error{Server: c.server, Method: method, Name: name, Round: round, Err: fmt.Errorf("%w (%d)", ErrTooManyRounds, c.cfg.maxRounds)}
		}
		keys := make([]string, 0, len(rr.InputRequests))
		for k := range rr.InputRequests {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		if ex != nil {
			ex.Rounds++
			ex.Asked = append(ex.Asked, keys)
		}
		answers := make([]member, 0, len(keys))
		for _, k := range keys {
			var q embedded
			if err := json.Unmarshal(rr.InputRequests[k], &q); err != nil {
				return nil, &Error{Server: c.server, Method: method, Name: name, Round: round, Err: fmt.Errorf("input request %q does not decode: %w", clip(k, 40), err)}
			}
			a, err := c.answer(ctx, q.Method, q.Params)
			if err != nil {
				return nil, &Error{Server: c.server, Method: method, Name: name, Round: round, Err: fmt.Errorf("answering input request %q (%s): %w", clip(k, 40), clip(q.Method, 40), err)}
			}
			b, err := encodeJSON(a)
			if err != nil {
				return nil, &Error{Server: c.server, Method: method, Name: name, Round: round, Err: fmt.Errorf("the answer to %q does not encode: %w", clip(k, 40), err)}
			}
			answers = append(answers, member{k, b})
		}
		next := append([]member(nil), base...)
		next = append(next, member{"inputResponses", objectOf(answers)})
		if len(rr.RequestState) > 0 && string(rr.RequestState) != "null" {
			// The state goes back as the server sent it, byte for byte.
			next = append(next, member{"requestState", rr.RequestState})
		}
		params = next
	}
}

// answer answers one request of the server (embedded in a round, or sent
// on a 2025-11-25 stream) with the client's functions.
func (c *Client) answer(ctx context.Context, method string, params json.RawMessage) (any, error) {
	switch method {
	case wire.MethodCreateMessage:
		if c.cfg.sampling == nil {
			return nil, fmt.Errorf("%w: sampling (OnSampling)", ErrUnanswered)
		}
		var r mrtr.SamplingRequest
		if err := json.Unmarshal(params, &r); err != nil {
			return nil, fmt.Errorf("the sampling request does not decode: %w", err)
		}
		res, err := c.cfg.sampling(ctx, &r)
		if err == nil && res == nil {
			err = errors.New("the sampling function returned no result")
		}
		return res, err
	case wire.MethodElicit:
		if c.cfg.elicit == nil {
			return nil, fmt.Errorf("%w: elicitation (OnElicitation)", ErrUnanswered)
		}
		var r mrtr.ElicitRequest
		if err := json.Unmarshal(params, &r); err != nil {
			return nil, fmt.Errorf("the elicitation request does not decode: %w", err)
		}
		res, err := c.cfg.elicit(ctx, &r)
		if err == nil && res == nil {
			err = errors.New("the elicitation function returned no result")
		}
		return res, err
	case wire.MethodListRoots:
		if c.cfg.roots == nil {
			return nil, fmt.Errorf("%w: roots (OnRoots)", ErrUnanswered)
		}
		res, err := c.cfg.roots(ctx)
		if err == nil && res == nil {
			err = errors.New("the roots function returned no result")
		}
		return res, err
	case "ping":
		return struct{}{}, nil
	}
	return nil, fmt.Errorf("%w: unknown method %q", ErrUnanswered, clip(method, 40))
}

// serveRequest answers a request the server sent on a 2025-11-25 stream
// (or over stdio) and returns the response body.
func (c *Client) serveRequest(ctx context.Context, m *message) []byte {
	if !c.Legacy() {
		// Servers of 2026-07-28 send no requests: the user's functions
		// answer only what a round embeds.
		return responseBody(m.ID, nil, &RPCError{Code: CodeMethodNotFound, Message: "a server of " + LatestVersion + " sends no requests"})
	}
	res, err := c.answer(ctx, m.Method, m.Params)
	if err != nil {
		code := -32603
		switch {
		case errors.Is(err, ErrUnanswered):
			code = CodeMethodNotFound
		case refusalData(err) != nil:
			code = -1 // the user (or the host's policy) rejected the request
		}
		return responseBody(m.ID, nil, &RPCError{Code: code, Message: err.Error(), Data: refusalData(err)})
	}
	return responseBody(m.ID, res, nil)
}
