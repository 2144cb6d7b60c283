// Package typed lets you write an MCP tool as a Go function from an input
// struct to an output struct: it generates the tool's JSON Schemas, checks
// the arguments before your function runs, and turns its output into the
// tool result.
//
// A one-shot tool is one call:
//
//	type In struct {
//		City string `json:"city" jsonschema:"the city to report on" validate:"min=2"`
//	}
//	type Out struct {
//		Forecast string `json:"forecast"`
//	}
//
//	err := typed.AddTool(srv, mrtr.Tool{Name: "forecast"},
//		typed.Func(func(ctx context.Context, req *mrtr.Request, in In) (Out, error) {
//			return Out{Forecast: "sunny in " + in.City}, nil
//		}))
//
// # Schemas
//
// The inputSchema is generated from In (root type "object",
// additionalProperties false, fields required unless tagged omitempty, a
// `jsonschema:"..."` tag as the description) and the outputSchema from Out,
// by github.com/google/jsonschema-go. A schema already set on the Tool is
// kept. With Out = *mrtr.CallToolResult the function builds the whole
// result and no output schema is declared.
//
// # Arguments
//
// Arguments reach a typed tool through the Server's strict door (see
// package mrtr), then are checked in layers by a Binder, each problem
// named by the argument's JSON path: in one pass over the JSON text, JSON
// types, required members, members the schema does not allow and case
// variants of declared names (through $ref, $defs, allOf, anyOf and oneOf
// as well, since Go's decoding would bind them to the declared field); a
// hand-written schema in full; then In's `validate` tags
// (github.com/go-playground/validator). Unknown arguments
// follow the schema: a generated schema refuses them; a hand-written one
// decides. A problem ends the call with an isError result the model can act
// on, for example:
//
//	Invalid arguments:
//	- city must be a string
//	- days must be at most 7 (rule "lte=7")
//
// # Output and errors
//
// The output is the result's structuredContent and also its one text
// block, for clients that only read content; an Out that implements
// Contenter chooses its own blocks. A hand-written outputSchema is
// enforced (a mismatch is a server bug: -32603, detail logged), and so is
// a generated one when Out can encode itself differently from its schema
// (a MarshalJSON or MarshalText method, an interface inside it). A *ToolError from the
// function (see Errorf) is an isError result with its message; an
// *mrtr.Error goes to the client as is; any other error is -32603.
//
// # More than one round
//
// A Handler returns an Outcome: Done with the output, or NeedInput with an
// *mrtr.InputRequired. Register one with AddTool, as any Handler. Most
// multi-round tools are better written as flows (package mrtr/flow), which
// are Handlers. Adapt serves a Handler for prompts/get and resources/read
// too.
package typed
