// Package mrtrtest is for tests: it tests mrtr servers and handlers in
// process, as package httptest does for HTTP handlers. NewServer gives a
// test a Server with its own key and a quiet logger.
//
// A Client calls a tool, prompt or resource of an mrtr.Server the way an
// MCP 2026-07-28 client does (the _meta envelope, a fresh id, the message
// parsed as a transport parses it) and answers every input-required round
// from Go functions: OnSampling, OnElicitation, OnRoots. It follows the
// rounds through the server's real pipeline (sealed requestState,
// capability gate, strict door), so a test of a multi-round handler tests
// what clients will meet:
//
//	c := mrtrtest.NewClient(srv,
//		mrtrtest.OnElicitation(func(ctx context.Context, r *mrtr.ElicitRequest) (*mrtr.ElicitResult, error) {
//			return &mrtr.ElicitResult{Action: "accept", Content: map[string]any{"name": "Ada"}}, nil
//		}))
//	res, err := c.CallTool(ctx, "greet", nil)
//	// res.Text() == "Hello, Ada!", res.Rounds == 1
//
// NewRequest builds single requests (any method, any _meta) for tests of
// the protocol itself, and Send serves one.
package mrtrtest
