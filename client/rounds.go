package client

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"time"

	"github.com/mrtrkit/mrtrkit/internal/wire"
	"github.com/mrtrkit/mrtrkit/mrtr"
)

// LoadSheddingPause is how long a call waits before it retries an
// input_required result that asks nothing and only carries a
// requestState (the server sheds load); the retry carries the state
// alone.
const LoadSheddingPause = 250 * time.Millisecond

// Exchange is what one call went through.
type Exchange struct {
	// Rounds is how many input-required rounds the client answered.
	Rounds int
	// Asked lists, round by round, the keys each round asked, sorted.
	Asked [][]string
}

// InputRequest is one request a server embedded in an input_required
// result, or one question of a task.
type InputRequest struct {
	Key    string          // its key in inputRequests
	Method string          // sampling/createMessage, elicitation/create, roots/list, …
	Params json.RawMessage // its params, verbatim
	Raw    json.RawMessage // the whole embedded request, verbatim
}

// Round is one input_required result of a call (or the new questions of
// a task), and the client's answers to it.
type Round struct {
	// N numbers the round within its call: 1 for the first.
	N int
	// Requests are what the server asked, in the order of their keys.
	Requests []InputRequest
	// Answers[i] answers Requests[i], as it is sent; it is shorter
	// while the round is being answered, or when answering failed.
	Answers []json.RawMessage
	// RequestState is the state the server asked to be echoed, verbatim
	// (nil when none, and for a task's questions).
	RequestState json.RawMessage
}

// RoundWatch follows the rounds of a call made with WithRoundWatch.
// Every function is optional; they are called on the goroutine that
// made the call.
type RoundWatch struct {
	// Asked is called when the server asks, before the round is
	// answered; also for a round past the round limit, which is not
	// answered.
	Asked func(r *Round)
	// Answered is called once Requests[i] of the round is answered.
	Answered func(r *Round, i int)
	// Done is called when the round is over: with nil when the answers
	// go to the server, else with the error that ends the call.
	Done func(r *Round, err error)
}

// WithRoundWatch shows each input-required round of the call to w, as
// the client answers it: the rounds of CallTool, GetPrompt and
// ReadResource, and the questions of a task (CallTool with AsTask,
// CreateTask, AwaitTask). A program that prints a call as it goes uses
// it; the result's Exchange sums the rounds up afterwards.
func WithRoundWatch(w *RoundWatch) CallOption {
	return callOptionFunc(func(o *callOpts) { o.watch = w })
}

type inputKeyCtx struct{}

// InputKey returns the key of the input request that the Client's
// answer function (OnSampling, OnElicitation, OnRoots) is called for:
// the key of a round's inputRequests, or of a task's question. It is ""
// for a request of a 2025-11-25 session, which has no key.
func InputKey(ctx context.Context) string {
	k, _ := ctx.Value(inputKeyCtx{}).(string)
	return k
}

// roundResult is the part of a result that says whether the call is
// complete.
type roundResult struct {
	ResultType    string          `json:"resultType"`
	InputRequests json.RawMessage `json:"inputRequests"`
	RequestState  json.RawMessage `json:"requestState"`
}

// run sends a request for a method that may answer input_required and
// answers its rounds, up to the client's round limit, counting them in
// ex and showing them to the call's RoundWatch. A round that asks
// nothing but carries a requestState is retried with the state alone
// after LoadSheddingPause. It returns the first complete result (a
// result without resultType is complete: servers of 2025-11-25 never
// send one), or the CreateTaskResult of a call with AsTask.
func (c *Client) run(ctx context.Context, method, name string, params []member, hdrs map[string]string, co *callOpts, ex *Exchange) (json.RawMessage, error) {
	w := co.roundWatch()
	base := params
	for round := 0; ; round++ {
		res, err := c.call(ctx, method, name, params, hdrs, co, round)
		if err != nil {
			return nil, err
		}
		fail := func(err error) error {
			return &Error{Server: c.server, Method: method, Name: name, Round: round, Err: err}
		}
		var rr roundResult
		if err := json.Unmarshal(res, &rr); err != nil {
			return nil, fail(fmt.Errorf("the result does not decode: %w", err))
		}
		switch rr.ResultType {
		case "", wire.ResultComplete:
			return res, nil
		case wire.ResultTask:
			if co != nil && co.task {
				// The server runs the call as a task (CreateTaskResult).
				return res, nil
			}
			return nil, fail(fmt.Errorf("unrecognised resultType %q: the request did not declare the Tasks extension", wire.ResultTask))
		case wire.ResultInputRequired:
		default:
			return nil, fail(fmt.Errorf("unrecognised resultType %q", clip(rr.ResultType, 40)))
		}
		var reqs map[string]json.RawMessage
		if len(rr.InputRequests) > 0 && string(rr.InputRequests) != "null" {
			if err := json.Unmarshal(rr.InputRequests, &reqs); err != nil {
				return nil, fail(fmt.Errorf("inputRequests is not an object: %w", err))
			}
		}
		r, err := newRound(round+1, reqs, nil)
		if err != nil {
			return nil, fail(err)
		}
		if len(rr.RequestState) > 0 && string(rr.RequestState) != "null" {
			r.RequestState = rr.RequestState
		}
		if len(r.Requests) == 0 && r.RequestState == nil {
			return nil, fail(errors.New("input_required with neither inputRequests nor requestState"))
		}
		answers, err := c.answerRound(ctx, r, w, round >= c.cfg.maxRounds, fail)
		if err != nil {
			return nil, err
		}
		ex.add(r)
		params = append([]member(nil), base...)
		if len(answers) > 0 {
			params = append(params, member{"inputResponses", objectOf(answers)})
		} else if err := sleep(ctx, LoadSheddingPause); err != nil {
			return nil, fail(err)
		}
		if r.RequestState != nil {
			// The state goes back as the server sent it, byte for byte.
			params = append(params, member{"requestState", r.RequestState})
		}
	}
}

// add counts round r in ex (nil for none).
func (ex *Exchange) add(r *Round) {
	if ex == nil {
		return
	}
	keys := make([]string, len(r.Requests))
	for i, q := range r.Requests {
		keys[i] = q.Key
	}
	ex.Rounds++
	ex.Asked = append(ex.Asked, keys)
}

// newRound reads the requests reqs (by key, each a {method, params}
// request) as round n, leaving out the keys of skip.
func newRound(n int, reqs map[string]json.RawMessage, skip map[string]bool) (*Round, error) {
	keys := make([]string, 0, len(reqs))
	for k := range reqs {
		if !skip[k] {
			keys = append(keys, k)
		}
	}
	sort.Strings(keys)
	r := &Round{N: n}
	for _, k := range keys {
		var q struct {
			Method string          `json:"method"`
			Params json.RawMessage `json:"params"`
		}
		if err := json.Unmarshal(reqs[k], &q); err != nil || q.Method == "" {
			return nil, fmt.Errorf("input request %q is not a {method, params} request", clip(k, 40))
		}
		r.Requests = append(r.Requests, InputRequest{Key: k, Method: q.Method, Params: q.Params, Raw: reqs[k]})
	}
	return r, nil
}

// answerRound shows round r to w and answers its requests with the
// client's functions, each called with its key (InputKey); a round past
// the round limit (over) is shown and not answered. It returns the
// answers by key; its errors are fail's.
func (c *Client) answerRound(ctx context.Context, r *Round, w *RoundWatch, over bool, fail func(error) error) ([]member, error) {
	if w.Asked != nil {
		w.Asked(r)
	}
	done := func(err error) error {
		if w.Done != nil {
			w.Done(r, err)
		}
		return err
	}
	if over {
		return nil, done(fail(fmt.Errorf("%w (%d)", ErrTooManyRounds, c.cfg.maxRounds)))
	}
	answers := make([]member, 0, len(r.Requests))
	for i, q := range r.Requests {
		a, err := c.answer(context.WithValue(ctx, inputKeyCtx{}, q.Key), q.Method, q.Params)
		var b []byte
		if err == nil {
			if b, err = encodeJSON(a); err != nil {
				err = fmt.Errorf("the answer does not encode: %w", err)
			}
		}
		if err != nil {
			return nil, done(fail(fmt.Errorf("answering input request %q (%s): %w", clip(q.Key, 40), clip(q.Method, 40), err)))
		}
		r.Answers = append(r.Answers, b)
		if w.Answered != nil {
			w.Answered(r, i)
		}
		answers = append(answers, member{q.Key, b})
	}
	done(nil)
	return answers, nil
}

// answer answers one request of the server (embedded in a round, asked
// by a task, or sent on a 2025-11-25 stream) with the client's
// functions.
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

// orderedParams reads params (a value that encodes as a JSON object, or
// nil) as the members of the object, in their order and verbatim; _meta
// is left out (the client writes its own).
func orderedParams(params any) ([]member, error) {
	if params == nil {
		return nil, nil
	}
	b, err := encodeJSON(params)
	if err != nil {
		return nil, err
	}
	if string(b) == "null" {
		return nil, nil
	}
	var out []member
	err = wire.EachMember(b, func(k string, v json.RawMessage) error {
		if k != "_meta" {
			out = append(out, member{k, v})
		}
		return nil
	})
	if errors.Is(err, wire.ErrNotObject) {
		return nil, fmt.Errorf("%s is %w", clip(string(b), 40), err)
	}
	if err != nil {
		return nil, err
	}
	return out, nil
}

// targetOf returns the target a request of method names in params, which
// its Mcp-Name header mirrors: the name of a tools/call or prompts/get,
// the uri of a resources/read, the taskId of a tasks/* request; "" for
// other methods.
func targetOf(method string, params []member) string {
	var key string
	switch method {
	case wire.MethodToolsCall, wire.MethodPromptsGet:
		key = "name"
	case wire.MethodResourcesRead:
		key = "uri"
	case mrtr.MethodTasksGet, mrtr.MethodTasksUpdate, mrtr.MethodTasksCancel:
		key = "taskId"
	default:
		return ""
	}
	name := ""
	for _, m := range params {
		if m.name == key {
			_ = json.Unmarshal(m.value, &name)
		}
	}
	return name
}
