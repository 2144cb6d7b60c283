package wire

// Methods of MCP 2026-07-28 that a server answers.
const (
	MethodDiscover            = "server/discover"
	MethodToolsList           = "tools/list"
	MethodToolsCall           = "tools/call"
	MethodPromptsList         = "prompts/list"
	MethodPromptsGet          = "prompts/get"
	MethodResourcesList       = "resources/list"
	MethodResourcesRead       = "resources/read"
	MethodTemplatesList       = "resources/templates/list"
	MethodComplete            = "completion/complete"
	MethodSubscriptionsListen = "subscriptions/listen"
)

// The methods of the requests a handler embeds in an input-required result
// (and that the initialize era sends to the client as real requests).
const (
	MethodCreateMessage = "sampling/createMessage"
	MethodElicit        = "elicitation/create"
	MethodListRoots     = "roots/list"
)

// Reserved _meta keys of MCP 2026-07-28.
const (
	MetaProtocolVersion    = "io.modelcontextprotocol/protocolVersion"    // request: the protocol version
	MetaClientCapabilities = "io.modelcontextprotocol/clientCapabilities" // request: the client's capabilities
	MetaClientInfo         = "io.modelcontextprotocol/clientInfo"         // request: the client's Implementation
	MetaLogLevel           = "io.modelcontextprotocol/logLevel"           // request: the log level wanted
	MetaServerInfo         = "io.modelcontextprotocol/serverInfo"         // result: the server's Implementation
	MetaSubscriptionID     = "io.modelcontextprotocol/subscriptionId"     // listen notifications: the listen request's id
	MetaProgressToken      = "progressToken"                              // request: the token of progress notifications
)

// Result types on the wire (a result's resultType).
const (
	ResultComplete      = "complete"
	ResultInputRequired = "input_required"
	ResultTask          = "task" // Tasks extension: a CreateTaskResult
)

// NotifyTasks is the notification of a task's new state (Tasks
// extension).
const NotifyTasks = "notifications/tasks"

// MaxEcho bounds what an error message or log line repeats of a value the
// caller sent.
const MaxEcho = 64

// Clip cuts s to at most MaxEcho bytes, at a rune boundary, with "..."
// marking the cut, so that no caller can make a log line or an error
// message grow without bound.
func Clip(s string) string { return ClipTo(s, MaxEcho) }

// ClipTo cuts s to at most max bytes, at a rune boundary, marking the cut.
func ClipTo(s string, max int) string {
	if len(s) <= max {
		return s
	}
	n := max
	for n > 0 && s[n]&0xC0 == 0x80 {
		n--
	}
	return s[:n] + "..."
}

// MaxResourceSubscriptions bounds the resource URIs one listen request or
// one session subscribes to.
const MaxResourceSubscriptions = 256
