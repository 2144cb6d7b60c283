// Package mrtr is the core of mrtrkit: it turns MCP 2026-07-28 requests
// into calls of your handlers and their answers back into protocol results.
//
// # Writing handlers
//
// A Server holds tools, prompts, resources and resource templates, each
// served by a Handler (AddTool, AddPrompt, AddResource,
// AddResourceTemplate). A Handler returns either a complete result
// (*CallToolResult, *GetPromptResult, *ReadResourceResult) or an
// *InputRequired asking the client for input: a model completion
// (SamplingRequest), a user answer (ElicitRequest) or the client's roots
// (RootsRequest). The wire resultType follows from the Go type returned,
// so a handler cannot return content and input requests at once.
//
//	srv, _ := mrtr.NewServer(discover.Description{Server: discover.Implementation{Name: "greeter", Version: "1.0.0"}})
//	srv.AddTool(mrtr.Tool{Name: "greet"}, mrtr.HandlerFunc(func(ctx context.Context, req *mrtr.Request) (mrtr.Result, error) {
//		if ans, ok := req.Responses.Elicitation("name"); ok && ans.Accepted() {
//			return mrtr.TextResult(fmt.Sprintf("Hello, %v!", ans.Content["name"])), nil
//		}
//		return mrtr.Ask("name", &mrtr.ElicitRequest{Message: "Your name?", RequestedSchema: nameSchema}), nil
//	}))
//
// Serve the Server with a transport (transport/streamablehttp,
// transport/stdio) and test it with package mrtrtest, an in-process client
// that answers the rounds from Go functions. Packages typed and flow build
// handlers from typed Go functions and multi-round steps.
//
// A handler's errors: an *Error (NewError, InvalidParamsError,
// ResourceNotFoundError) goes to the client as is; a problem the model
// should see and fix is an ErrorResult; any other error becomes -32603
// "Internal error", its detail logged but never sent.
//
// # Multi round-trip requests
//
// Multi-round calls keep no state on the server. When a handler asks for
// input, the Server seals the handler's State together with the request's
// principal, audience, method, target, argument digest, expiry, round
// number and the kind of every key asked (package state, AEAD by
// default). The client echoes that requestState on its retry. The Server
// authenticates it before any work on the arguments, holds its round to
// the limit (WithMaxRounds: the Server is the only place that limit
// lives), checks every claim against the retry, and decodes each answer in
// inputResponses by the kind recorded for its key, all before any handler
// code runs. Answers to keys that were not asked never reach the handler.
// Any replica holding the same keys can serve any round.
//
// # The validation ladder
//
// Every request goes through one ladder, in this order; each step refuses
// with its own code:
//
//  1. the params members, matched by exact name, each at most once
//     (-32600);
//  2. the protocol version header against params._meta (-32020);
//  3. the version itself (-32022);
//  4. the _meta envelope (-32602, an envelope error);
//  5. the method, looked up once in the method table: unknown, removed
//     and unadvertised methods are -32601;
//  6. the target (tool or prompt name, resource URI), resolved once to
//     its registration;
//  7. the Mcp-Method and Mcp-Name headers, then the Mcp-Param-* headers of
//     a tool's x-mcp-header declarations (-32020);
//  8. the method's params (-32602, in-band), including the strict door
//     every argument object passes;
//  9. the presented requestState and the answers, as above;
//  10. what the handler embeds, checked against the capabilities the
//     client declared on this request: anything it cannot do is -32021
//     with data.requiredCapabilities.
//
// All errors come from one taxonomy (Code, Error); Error.Envelope tells a
// transport which ones are about the request as a whole.
//
// # The strict door
//
// Tool and prompt arguments (and form answers) are read once, in time
// linear in their size, before any handler or state work. Refused with
// -32602: two member names of one object that are equal under the case
// folding Go's encoding/json uses to bind names to struct fields (Unicode
// simple folding: "ſ" equals "s", the Kelvin sign equals "k"); numbers
// that are not exactly the shortest decimal of an IEEE 754 double, or
// longer than 40 characters; strings that are not valid Unicode; nesting
// deeper than 100 levels. Arguments are thus I-JSON (RFC 7493) with names
// unique under folding, and the argument digest bound into a requestState
// pins exactly what a handler decodes. Send big integers and exact
// decimals as strings.
//
// # Writing a transport
//
// A transport turns its wire into calls of Server.Handle and writes the
// Response back; handler authors need none of this. It parses one message
// with ParseMessage (which also recognises a response, for transports
// that serve clients of the initialize era next to this Server), and
// hands it to Handle in an Inbound, together with the principal its
// authenticator established, the decoded Mirror of any headers that copy
// body values (nil when the wire has none, as on stdio) and an Emit
// function that delivers the request's notifications as they happen.
// Handle returns nil for a notification. The transport owns the mapping of
// errors to its wire: Streamable HTTP answers an envelope error
// (Error.Envelope) with 404 for -32601 and 400 for the rest, and every
// other response with 200. This surface stays in package mrtr rather than
// a package of its own because Server.Handle is its centre and every type
// in it is small; it is kept to Inbound, Message, ParseMessage, ID,
// Response, Mirror and HeaderValue.
//
// The Server knows nothing of HTTP: this package does not import net/http.
package mrtr
