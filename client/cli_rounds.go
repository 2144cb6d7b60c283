package client

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"time"

	"github.com/mrtrkit/mrtrkit/internal/wire"
)

// LoadSheddingPause is how long Run waits before it retries an
// input_required result that asks nothing and only carries a
// requestState (the server sheds load).
const LoadSheddingPause = 250 * time.Millisecond

// InputRequest is one request a server embedded in an input_required
// result.
type InputRequest struct {
	Key    string          // its key in inputRequests
	Method string          // sampling/createMessage, elicitation/create, roots/list, …
	Params json.RawMessage // its params, verbatim
	Raw    json.RawMessage // the whole embedded request, verbatim
}

// Round is one input_required result of a call made with Run, and the
// client's answers to it.
type Round struct {
	// N numbers the round: 1 for the first input_required result.
	N int
	// Requests are what the server asked, in the order of their keys.
	Requests []InputRequest
	// Answers[i] answers Requests[i], as it is sent; it is shorter
	// while the round is being answered, or when answering failed.
	Answers []json.RawMessage
	// RequestState is the state the server asked to be echoed, verbatim
	// (nil when none).
	RequestState json.RawMessage
}

// RoundWatch follows the rounds of a call made with Run. Every function
// is optional; they are called on the goroutine that called Run.
type RoundWatch struct {
	// Asked is called when the server answers input_required, before
	// the round is answered; also for a round past the round limit,
	// which is not answered.
	Asked func(r *Round)
	// Answered is called once Requests[i] of the round is answered.
	Answered func(r *Round, i int)
	// Done is called when the round is over: with nil when the answers
	// go to the server, else with the error that ends the call.
	Done func(r *Round, err error)
}

type inputKeyCtx struct{}

// InputKey returns the key of the input request that the Client's
// answer function (OnSampling, OnElicitation, OnRoots) is called for,
// within a round of Run; "" elsewhere.
func InputKey(ctx context.Context) string {
	k, _ := ctx.Value(inputKeyCtx{}).(string)
	return k
}

// Run sends a request for method with params (a value that encodes as a
// JSON object; its members are sent in their order, verbatim) and
// answers its input_required rounds with the Client's functions, as
// CallTool does, reporting each round to w (nil for none). It returns
// the first result that does not ask for input, verbatim, whatever its
// resultType: "complete", or another (a task's, say) for the caller to
// read. A round that asks nothing but carries a requestState (the
// server sheds load) is retried with the state alone after
// LoadSheddingPause. A tools/call carries the Mcp-Param-* headers of
// the tool's x-mcp-header declarations as the last ListTools saw them;
// unlike CallTool, Run does not list the tools again when the server
// refuses them (-32020): the caller decides.
func (c *Client) Run(ctx context.Context, method string, params any, w *RoundWatch, opts ...CallOption) (json.RawMessage, error) {
	base, err := orderedParams(params)
	if err != nil {
		return nil, &Error{Server: c.server, Method: method, Err: fmt.Errorf("params are not a JSON object: %w", err)}
	}
	name := ""
	var args json.RawMessage
	for _, m := range base {
		switch {
		case m.name == "name" && (method == wire.MethodToolsCall || method == wire.MethodPromptsGet),
			m.name == "uri" && method == wire.MethodResourcesRead:
			_ = json.Unmarshal(m.value, &name)
		case m.name == "arguments" && method == wire.MethodToolsCall:
			args = m.value
		}
	}
	var hdrs map[string]string
	if method == wire.MethodToolsCall {
		if hdrs, err = c.paramHeaders(name, args); err != nil {
			return nil, &Error{Server: c.server, Method: method, Name: name, Err: err}
		}
	}
	if w == nil {
		w = &RoundWatch{}
	}
	co := callOptions(opts)
	params2 := base
	for round := 0; ; round++ {
		res, err := c.call(ctx, method, name, params2, hdrs, co, round)
		if err != nil {
			return nil, err
		}
		fail := func(err error) error {
			return &Error{Server: c.server, Method: method, Name: name, Round: round, Err: err}
		}
		var rr struct {
			ResultType    string          `json:"resultType"`
			InputRequests json.RawMessage `json:"inputRequests"`
			RequestState  json.RawMessage `json:"requestState"`
		}
		if err := json.Unmarshal(res, &rr); err != nil {
			return nil, fail(fmt.Errorf("the result does not decode: %w", err))
		}
		if rr.ResultType != wire.ResultInputRequired {
			return res, nil
		}
		r, err := readRound(round+1, rr.InputRequests, rr.RequestState)
		if err != nil {
			return nil, fail(err)
		}
		notifyRound(w.Asked, r)
		if round >= c.cfg.maxRounds {
			err := fail(fmt.Errorf("%w (%d)", ErrTooManyRounds, c.cfg.maxRounds))
			roundDone(w.Done, r, err)
			return nil, err
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
				err = fail(fmt.Errorf("answering input request %q (%s): %w", clip(q.Key, 40), clip(q.Method, 40), err))
				roundDone(w.Done, r, err)
				return nil, err
			}
			r.Answers = append(r.Answers, b)
			if w.Answered != nil {
				w.Answered(r, i)
			}
			answers = append(answers, member{q.Key, b})
		}
		roundDone(w.Done, r, nil)
		params2 = append([]member(nil), base...)
		if len(answers) > 0 {
			params2 = append(params2, member{"inputResponses", objectOf(answers)})
		} else if err := sleep(ctx, LoadSheddingPause); err != nil {
			return nil, fail(err)
		}
		if r.RequestState != nil {
			// The state goes back as the server sent it, byte for byte.
			params2 = append(params2, member{"requestState", r.RequestState})
		}
	}
}

func notifyRound(f func(*Round), r *Round) {
	if f != nil {
		f(r)
	}
}

func roundDone(f func(*Round, error), r *Round, err error) {
	if f != nil {
		f(r, err)
	}
}

// readRound reads the inputRequests and requestState of an
// input_required result.
func readRound(n int, reqs, state json.RawMessage) (*Round, error) {
	r := &Round{N: n}
	if len(state) > 0 && string(state) != "null" {
		r.RequestState = state
	}
	var m map[string]json.RawMessage
	if len(reqs) > 0 && string(reqs) != "null" {
		if err := json.Unmarshal(reqs, &m); err != nil {
			return nil, fmt.Errorf("inputRequests is not an object: %w", err)
		}
	}
	if len(m) == 0 && r.RequestState == nil {
		return nil, errors.New("input_required with neither inputRequests nor requestState")
	}
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		var q struct {
			Method string          `json:"method"`
			Params json.RawMessage `json:"params"`
		}
		if err := json.Unmarshal(m[k], &q); err != nil || q.Method == "" {
			return nil, fmt.Errorf("input request %q is not a {method, params} request", clip(k, 40))
		}
		r.Requests = append(r.Requests, InputRequest{Key: k, Method: q.Method, Params: q.Params, Raw: m[k]})
	}
	return r, nil
}

// orderedParams reads params as the members of a JSON object, in their
// order and verbatim; _meta is left out (the client writes its own).
func orderedParams(params any) ([]member, error) {
	if params == nil {
		return nil, nil
	}
	b, err := encodeJSON(params)
	if err != nil {
		return nil, err
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return nil, fmt.Errorf("%s is not an object", clip(string(b), 40))
	}
	var out []member
	for dec.More() {
		t, err := dec.Token()
		if err != nil {
			return nil, err
		}
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return nil, err
		}
		if k := t.(string); k != "_meta" {
			out = append(out, member{k, v})
		}
	}
	return out, nil
}
