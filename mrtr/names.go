package mrtr

import "github.com/mrtrkit/mrtrkit/internal/wire"

// The names of the protocol, for interceptors, transports and tools that
// look at a request from outside the Server (Call.Message.Method,
// Call.ResultType, the members of params._meta). Handler authors never
// need them: the Server routes the methods and reads and writes _meta.
// Each is the protocol's own string, which stays the contract; the
// constants only save spelling it.

// Methods of MCP 2026-07-28 that a Server answers.
const (
	MethodDiscover            = wire.MethodDiscover            // "server/discover"
	MethodToolsList           = wire.MethodToolsList           // "tools/list"
	MethodToolsCall           = wire.MethodToolsCall           // "tools/call"
	MethodPromptsList         = wire.MethodPromptsList         // "prompts/list"
	MethodPromptsGet          = wire.MethodPromptsGet          // "prompts/get"
	MethodResourcesList       = wire.MethodResourcesList       // "resources/list"
	MethodResourcesRead       = wire.MethodResourcesRead       // "resources/read"
	MethodTemplatesList       = wire.MethodTemplatesList       // "resources/templates/list"
	MethodComplete            = wire.MethodComplete            // "completion/complete"
	MethodSubscriptionsListen = wire.MethodSubscriptionsListen // "subscriptions/listen"
)

// Methods of the requests a handler asks the client in an input_required
// result (ElicitRequest, SamplingRequest, RootsRequest).
const (
	MethodCreateMessage = wire.MethodCreateMessage // "sampling/createMessage"
	MethodElicit        = wire.MethodElicit        // "elicitation/create"
	MethodListRoots     = wire.MethodListRoots     // "roots/list"
)

// Reserved members of _meta in MCP 2026-07-28, matched by exact name.
const (
	MetaProtocolVersion    = wire.MetaProtocolVersion    // request: the protocol version claimed
	MetaClientCapabilities = wire.MetaClientCapabilities // request: the client's capabilities
	MetaClientInfo         = wire.MetaClientInfo         // request: the client's Implementation
	MetaLogLevel           = wire.MetaLogLevel           // request: the log level wanted
	MetaServerInfo         = wire.MetaServerInfo         // result: the server's Implementation
	MetaSubscriptionID     = wire.MetaSubscriptionID     // listen notifications: the listen request's id
	MetaProgressToken      = wire.MetaProgressToken      // request: the token of progress notifications
)

// The values of a result's resultType (Call.ResultType).
const (
	ResultTypeComplete      = wire.ResultComplete      // "complete"
	ResultTypeInputRequired = wire.ResultInputRequired // "input_required"
)
