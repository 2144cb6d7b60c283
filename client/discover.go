package client

import (
	"context"
	"encoding/json"

	"github.com/mrtrkit/mrtrkit/internal/wire"
)

// Discover sends one server/discover request of LatestVersion to the
// server behind t and returns the result verbatim, whatever revisions it
// lists; it opens no Client and falls back to nothing. It is for tools
// that show what a server says about itself; Connect is the way to talk
// to it. opts are the Client's options (clientInfo, capabilities, log
// level).
func Discover(ctx context.Context, t Transport, opts ...Option) (json.RawMessage, error) {
	c := newClient(t, opts)
	c.version = LatestVersion
	cn, err := t.dial(ctx, c)
	if err != nil {
		return nil, &Error{Server: c.server, Method: wire.MethodDiscover, Err: err}
	}
	c.conn = cn
	defer c.Close()
	return c.call(ctx, wire.MethodDiscover, "", nil, nil, nil, 0)
}
