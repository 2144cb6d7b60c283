package mrtr

import (
	"context"
	"encoding/json"
)

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

// The methods of the requests a handler embeds in an input-required result.
const (
	MethodCreateMessage = "sampling/createMessage"
	MethodElicit        = "elicitation/create"
	MethodListRoots     = "roots/list"
)

// method is one row of the method table: everything the ladder needs to
// know about a method.
type method struct {
	// served reports whether the advertised capabilities include the
	// method; nil means it is always served. An unserved method is -32601.
	served func(*ServerCapabilities) bool
	// target names the params member that names the call's target,
	// "name" or "uri": it must be a string, it is resolved to a registry
	// entry once, and the Mcp-Name header must mirror it. "" for none.
	target string
	// resolve finds the entry serving c.target; nil for none.
	resolve func(s *Server, c *call)
	// serve answers the request; from here on errors are about params
	// (-32602, in-band) or the server (-32603).
	serve func(s *Server, ctx context.Context, c *call) (json.RawMessage, *Error)
}

// methods is the method table. A method that is not here does not exist
// in MCP 2026-07-28 (including those it removed, such as initialize and
// ping): -32601.
var methods = map[string]*method{
	MethodDiscover:            {serve: (*Server).serveDiscover},
	MethodToolsList:           {served: hasTools, serve: (*Server).listTools},
	MethodToolsCall:           {served: hasTools, target: "name", resolve: (*Server).resolveTool, serve: (*Server).callTool},
	MethodPromptsList:         {served: hasPrompts, serve: (*Server).listPrompts},
	MethodPromptsGet:          {served: hasPrompts, target: "name", resolve: (*Server).resolvePrompt, serve: (*Server).getPrompt},
	MethodResourcesList:       {served: hasResources, serve: (*Server).listResources},
	MethodTemplatesList:       {served: hasResources, serve: (*Server).listTemplates},
	MethodResourcesRead:       {served: hasResources, target: "uri", resolve: (*Server).resolveResource, serve: (*Server).readResource},
	MethodComplete:            {served: hasCompletions, serve: (*Server).completion},
	MethodSubscriptionsListen: {served: listenAdvertised, serve: (*Server).listen},
}

func hasTools(c *ServerCapabilities) bool       { return c.Tools != nil }
func hasPrompts(c *ServerCapabilities) bool     { return c.Prompts != nil }
func hasResources(c *ServerCapabilities) bool   { return c.Resources != nil }
func hasCompletions(c *ServerCapabilities) bool { return c.Completions != nil }

// listenAdvertised reports whether the server advertises any notification
// a listener could ask for.
func listenAdvertised(c *ServerCapabilities) bool {
	return (c.Tools != nil && c.Tools.ListChanged) ||
		(c.Prompts != nil && c.Prompts.ListChanged) ||
		(c.Resources != nil && (c.Resources.ListChanged || c.Resources.Subscribe))
}
