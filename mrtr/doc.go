// Package mrtr is the core of mrtrkit, the layer every server uses: the
// Server, the protocol vocabulary, and the asks a handler makes of the
// client. It turns MCP 2026-07-28 requests into calls of your handlers and
// their answers back into protocol results. Write tools as typed functions
// (package typed); this package's Handler, returning a Result, is the
// low-level layer beneath them.
//
// # Writing handlers
//
// A Server (New, NewServer) holds tools, prompts, resources and resource
// templates, each served by a Handler (AddTool, AddPrompt, AddResource,
// AddResourceTemplate; typed.AddTool for typed functions). Serve it with a
// transport (transport/streamablehttp, transport/stdio) and test it with
// package mrtrtest, an in-process client that answers the rounds from Go
// functions.
//
//	srv, _ := mrtr.New("hello", "1.0.0")
//	srv.AddTool(mrtr.Tool{Name: "hello"}, mrtr.HandlerFunc(func(ctx context.Context, req *mrtr.Request) (mrtr.Result, error) {
//		return mrtr.TextResult("Hello, world!"), nil
//	}))
//
// A handler's errors: an *Error (NewError, InvalidParamsError,
// ResourceNotFoundError) goes to the client as is; a problem the model
// should see and fix is an ErrorResult; any other error becomes -32603
// "Internal error", its detail logged but never sent.
//
// # Asking in straight-line code
//
// A handler that needs something from the client asks for it where it
// needs it, and returns the ask's error as it would any error:
//
//	who, err := mrtr.Elicit(ctx, req, "who", question)   // a user's answer
//	if err != nil {
//		return nil, err
//	}
//	poem, err := mrtr.Sample(ctx, req, "poem", prompt)   // a model completion
//	if err != nil {
//		return nil, err
//	}
//	roots, err := mrtr.ListRoots(ctx, req, "roots")      // the client's roots
//
// Typed forms (typed.Form.Ask) and server-side models (model.Sample) ask
// the same way. While a question has no answer, its ask returns an error
// matching ErrInputRequired; the Server answers the call with
// input_required carrying every question asked in that run, and seals what
// the run learned (its journal: answers, memo values, the questions still
// open) into the requestState. Independent questions asked before
// returning go out together: collect their errors with Check. A question
// the client did not declare the capability for makes its ask return
// -32021 at once, so the handler may go on without it.
//
// The contract. A handler that asks runs again from the top on every round
// of its call, possibly on another replica, until it returns a result.
// Given the same arguments, answers and memo values, every run must ask
// the same questions under the same keys, worded the same way. An answered
// question returns its answer; an unanswered one returns ErrInputRequired.
// Nothing that can differ between runs may decide which questions are
// asked, what they say or what their answers lead to: not the clock, not
// randomness, not the order of a map range or of goroutines, not
// configuration that differs between replicas, files, databases, HTTP
// calls or any read whose result can change, and not process-local state
// such as caches and counters. Compute such a value once with Memo: its
// first result is sealed into the requestState and returned on every later
// run. CallStart is when the call began and CallID a stable identifier for
// it. Effects outside the server (a payment, a message, a deployment)
// belong after the last question and must be idempotent, keyed by CallID:
// a memo does not make them happen once, since a client may present an
// older requestState or the same one twice (see OnceOnly).
//
// Questions are identified by their keys: give each its own (Key builds
// keys in loops from stable values), never built from user data or
// secrets, as keys reach the client and the audit log. A question reworded
// between rounds is asked again once (the user answered another
// question); one that changes on two rounds in a row, an answered question
// no longer asked, or a key asked as another kind ends the call with the
// invalid-requestState error (-32602), and the log names the key and the
// reason. A handler that completes while a question is unanswered (an
// ask's error dropped), or that both asks and returns an *InputRequired,
// has a bug: -32603. Answers and memo values count against the size of a
// requestState (state.WithMaxTokenSize); past it the call ends with -32603
// and data.reason "state_too_large", and the log names the largest
// entries: memoise a parsed value rather than a long answer.
//
// The same handler serves 2026-07-28 clients over HTTP and stdio, and
// 2025-11-25 clients through the bridge of package legacy, which sends
// each round's questions to the client as requests and runs the handler
// again with the answers, as a modern client would.
//
// # Returning input requests yourself
//
// Beneath the asks, a Handler may return an *InputRequired itself (Ask
// builds one), carrying its own State, and read the answers of the
// previous round in Request.Responses on the retry. The wire resultType
// follows from the Go type returned, so a handler cannot return content
// and input requests at once. One handler uses one style.
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
// # Extensions
//
// Server.AddMethod serves a method of a protocol extension (SEP-2133)
// through the same ladder as the core methods: a request that does not
// declare the method's extension in its clientCapabilities is refused
// with -32021 before anything else is read, the params member named as
// the target must be mirrored by Mcp-Name, and interceptors, limits and
// the audit record apply. AddListenFilter adds a member to the
// subscriptions/listen filter. The Tasks extension is built on both.
//
// # Tasks
//
// WithTasks serves the Tasks extension (SEP-2663). A tool registered with
// TaskSupport runs as a task for a request that declares the extension:
// the call answers a task id at once, and the same handler runs in the
// background; a question it asks makes the task input_required, and
// tasks/update answers it, after which the handler runs again from the
// top as on an MRTR retry. Questions asked before Detach (with
// DetachInHandler) are ordinary rounds of the call. Tasks live on the
// shared bus (WithShare), so every replica serves every task.
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
