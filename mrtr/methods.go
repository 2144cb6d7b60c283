package mrtr

import (
	"context"
	"encoding/json"
	"maps"
	"slices"

	"github.com/mrtrkit/mrtrkit/discover"
	"github.com/mrtrkit/mrtrkit/internal/wire"
)

// method is one row of the method table: everything the ladder needs to
// know about a method.
type method struct {
	// served reports whether the advertised capabilities include the
	// method; nil means it is always served. An unserved method is -32601.
	served func(*discover.Capabilities) bool
	// target names the params member that names the call's target,
	// "name" or "uri": it must be a string, it is resolved to a registry
	// entry once, and the Mcp-Name header must mirror it. "" for none.
	target string
	// resolve finds the entry serving c.target; nil for none.
	resolve func(s *Server, c *call)
	// extension is the extension a request must declare in its
	// clientCapabilities to call the method (-32021 otherwise, before
	// its target is looked at); "" for none.
	extension string
	// serve answers the request; from here on errors are about params
	// (-32602, in-band) or the server (-32603).
	serve func(s *Server, ctx context.Context, c *call) (json.RawMessage, *Error)
}

// methodNames are the methods of the table, by which ParseMessage reads a
// request's method without allocating a string for it.
var methodNames = slices.Collect(maps.Keys(methods))

// methods is the method table. A method that is not here does not exist
// in MCP 2026-07-28 (including those it removed, such as initialize and
// ping): -32601.
var methods = map[string]*method{
	wire.MethodDiscover:            {serve: (*Server).serveDiscover},
	wire.MethodToolsList:           {served: hasTools, serve: (*Server).listTools},
	wire.MethodToolsCall:           {served: hasTools, target: "name", resolve: (*Server).resolveTool, serve: (*Server).callTool},
	wire.MethodPromptsList:         {served: hasPrompts, serve: (*Server).listPrompts},
	wire.MethodPromptsGet:          {served: hasPrompts, target: "name", resolve: (*Server).resolvePrompt, serve: (*Server).getPrompt},
	wire.MethodResourcesList:       {served: hasResources, serve: (*Server).listResources},
	wire.MethodTemplatesList:       {served: hasResources, serve: (*Server).listTemplates},
	wire.MethodResourcesRead:       {served: hasResources, target: "uri", resolve: (*Server).resolveResource, serve: (*Server).readResource},
	wire.MethodComplete:            {served: hasCompletions, serve: (*Server).completion},
	wire.MethodSubscriptionsListen: {served: listenAdvertised, serve: (*Server).listen},
}

func hasTools(c *discover.Capabilities) bool       { return c.Tools != nil }
func hasPrompts(c *discover.Capabilities) bool     { return c.Prompts != nil }
func hasResources(c *discover.Capabilities) bool   { return c.Resources != nil }
func hasCompletions(c *discover.Capabilities) bool { return c.Completions != nil }

// listenAdvertised reports whether the server advertises any notification
// a listener could ask for.
func listenAdvertised(c *discover.Capabilities) bool {
	return (c.Tools != nil && c.Tools.ListChanged) ||
		(c.Prompts != nil && c.Prompts.ListChanged) ||
		(c.Resources != nil && (c.Resources.ListChanged || c.Resources.Subscribe))
}
