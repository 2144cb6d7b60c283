package client

import (
	"context"
	"encoding/json"
	"fmt"
)

// CallTarget is Call for a method that names a target the client does
// not know of, such as the task of an extension's tasks/get: the request
// carries Mcp-Name: target (encoded as EncodeHeaderValue says) besides
// params (a value that encodes as a JSON object, its members sent in
// their order, verbatim; or nil). It returns the raw result and answers
// no rounds.
func (c *Client) CallTarget(ctx context.Context, method, target string, params any, opts ...CallOption) (json.RawMessage, error) {
	p, err := orderedParams(params)
	if err != nil {
		return nil, &Error{Server: c.server, Method: method, Name: target, Err: fmt.Errorf("params are not a JSON object: %w", err)}
	}
	return c.call(ctx, method, target, p, nil, callOptions(opts), 0)
}
