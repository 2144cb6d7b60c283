package otelmrtr

import (
	"bytes"
	"encoding/json"
	"strconv"
	"unicode/utf8"

	"go.opentelemetry.io/otel/attribute"

	"github.com/mrtrkit/mrtrkit/mrtr"
)

// Attribute keys of the OpenTelemetry semantic conventions for MCP
// (gen-ai/mcp.md, status Development) and the registries they reference.
const (
	keyMethod          = attribute.Key("mcp.method.name")
	keyProtocolVersion = attribute.Key("mcp.protocol.version")
	keyResourceURI     = attribute.Key("mcp.resource.uri")
	keyToolName        = attribute.Key("gen_ai.tool.name")
	keyPromptName      = attribute.Key("gen_ai.prompt.name")
	keyOperation       = attribute.Key("gen_ai.operation.name")
	keyRequestID       = attribute.Key("jsonrpc.request.id")
	keyStatusCode      = attribute.Key("rpc.response.status_code")
	keyErrorType       = attribute.Key("error.type")
)

// Attribute keys of mrtrkit's own, for what the conventions do not cover.
const (
	keyPrincipal      = attribute.Key("mrtr.principal.digest")
	keyStatePresented = attribute.Key("mrtr.state.presented")
	keyRound          = attribute.Key("mrtr.round")
	keyResultType     = attribute.Key("mrtr.result_type")
	keyRefusal        = attribute.Key("mrtr.refusal")
	keyStateReason    = attribute.Key("mrtr.state.reason")
	keyAsked          = attribute.Key("mrtr.asked")
)

// Event names.
const (
	eventInputRequired = "mrtr.input_required"
	eventRefusal       = "mrtr.refusal"
)

// otherMethod stands for a method the Server does not serve, where a
// low-cardinality value is needed (span names, metric attributes): the
// method name is the client's to choose.
const otherMethod = "_OTHER"

// operationExecuteTool is the gen_ai.operation.name of tools/call.
const operationExecuteTool = "execute_tool"

// maxValue bounds the length in bytes of any value a client chose (target,
// method, request id, protocol version) recorded as an attribute.
const maxValue = 256

// methods are the methods an mrtr.Server serves.
var methods = map[string]bool{
	mrtr.MethodDiscover:            true,
	mrtr.MethodToolsList:           true,
	mrtr.MethodToolsCall:           true,
	mrtr.MethodPromptsList:         true,
	mrtr.MethodPromptsGet:          true,
	mrtr.MethodResourcesList:       true,
	mrtr.MethodResourcesRead:       true,
	mrtr.MethodTemplatesList:       true,
	mrtr.MethodComplete:            true,
	mrtr.MethodSubscriptionsListen: true,
}

// knownMethod returns method when the Server serves it, otherMethod
// otherwise.
func knownMethod(method string) string {
	if methods[method] {
		return method
	}
	return otherMethod
}

// multiRound reports whether method may take input-required rounds.
func multiRound(method string) bool {
	return method == mrtr.MethodToolsCall || method == mrtr.MethodPromptsGet || method == mrtr.MethodResourcesRead
}

// targetResolved reports whether c's target named a registered tool,
// prompt or resource. A target is only trusted as a low-cardinality value
// (span name, metric attribute) then: before, it is whatever the client
// sent.
func targetResolved(c *mrtr.Call) bool { return c.Resolved }

// versionAccepted reports whether the protocol version c claimed was one
// the Server speaks: the request got past the version steps.
func versionAccepted(c *mrtr.Call) bool { return c.RefusedAt.VersionAccepted() }

// clip bounds s to maxValue bytes, cut at a rune boundary.
func clip(s string) string {
	if len(s) <= maxValue {
		return s
	}
	n := maxValue
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}

// requestID renders a JSON-RPC id as jsonrpc.request.id wants it: a
// string id without its quotes, an integer as written. "" when absent.
func requestID(id mrtr.ID) string {
	raw := id.String()
	if raw == "" || raw[0] != '"' {
		return clip(raw)
	}
	var s string
	if json.Unmarshal([]byte(raw), &s) != nil {
		return ""
	}
	return clip(s)
}

// codeString renders a JSON-RPC error code for error.type and
// rpc.response.status_code.
func codeString(e *mrtr.Error) string { return strconv.Itoa(int(e.Code)) }

// requestMeta is what the interceptor reads from params._meta: the
// protocol version claimed and the members the propagator reads.
type requestMeta struct {
	version string
	carrier map[string]string
}

// skipValue consumes one JSON value without keeping it.
type skipValue struct{}

func (*skipValue) UnmarshalJSON([]byte) error { return nil }

// readMeta finds params._meta (matched by exact name, as the Server
// matches it) and reads from it the protocol version and the string
// members named in fields. Nothing else of the params is decoded: the
// arguments are skipped, never kept. A _meta the Server will refuse
// yields what could be read, or nothing.
func readMeta(params json.RawMessage, fields []string) requestMeta {
	var rm requestMeta
	params = bytes.TrimLeft(params, " \t\r\n")
	if len(params) == 0 || params[0] != '{' {
		return rm
	}
	dec := json.NewDecoder(bytes.NewReader(params))
	if _, err := dec.Token(); err != nil {
		return rm
	}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return rm
		}
		if name, _ := tok.(string); name != "_meta" {
			if dec.Decode(&skipValue{}) != nil {
				return rm
			}
			continue
		}
		var meta map[string]json.RawMessage
		if dec.Decode(&meta) != nil {
			return rm
		}
		str := func(key string) string {
			raw, ok := meta[key]
			if !ok || len(raw) == 0 || raw[0] != '"' {
				return ""
			}
			var s string
			if json.Unmarshal(raw, &s) != nil {
				return ""
			}
			return s
		}
		rm.version = clip(str(mrtr.MetaProtocolVersion))
		for _, f := range fields {
			if v := str(f); v != "" {
				if rm.carrier == nil {
					rm.carrier = make(map[string]string, len(fields))
				}
				rm.carrier[f] = v
			}
		}
		return rm
	}
	return rm
}
