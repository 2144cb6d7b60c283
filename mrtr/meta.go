package mrtr

import (
	"bytes"
	"encoding/json"
	"errors"
	"sort"
	"strings"

	"github.com/mrtrkit/mrtrkit/discover"
	"github.com/mrtrkit/mrtrkit/internal/wire"
)

// Object is a JSON object whose content mrtrkit does not interpret.
type Object = map[string]json.RawMessage

// ClientCapabilities is what the client declared on one request. A nil
// field means the capability was not declared.
type ClientCapabilities struct {
	// Experimental holds non-standard capabilities, by name.
	Experimental map[string]Object `json:"experimental,omitempty"`
	// Roots is set when the client answers roots/list (deprecated).
	Roots *Object `json:"roots,omitempty"`
	// Sampling is set when the client answers sampling/createMessage
	// (deprecated).
	Sampling *SamplingCapability `json:"sampling,omitempty"`
	// Elicitation is set when the client answers elicitation/create.
	Elicitation *ElicitCapability `json:"elicitation,omitempty"`
	// Extensions holds the protocol extensions the client supports, by
	// extension identifier.
	Extensions map[string]Object `json:"extensions,omitempty"`
}

// SamplingCapability is the client's sampling capability.
type SamplingCapability struct {
	// Context is set when the client honours includeContext values other
	// than "none".
	Context Object `json:"context,omitempty"`
	// Tools is set when the client accepts tools and toolChoice in
	// sampling requests.
	Tools Object `json:"tools,omitempty"`
}

// ElicitCapability is the client's elicitation capability. An empty object
// means form mode only.
type ElicitCapability struct {
	// Form is set when the client supports form-mode elicitation.
	Form Object `json:"form,omitempty"`
	// URL is set when the client supports url-mode elicitation.
	URL Object `json:"url,omitempty"`
}

// MarshalJSON renders declared-but-empty members as {} rather than null.
func (c SamplingCapability) MarshalJSON() ([]byte, error) {
	m := map[string]Object{}
	if c.Context != nil {
		m["context"] = c.Context
	}
	if c.Tools != nil {
		m["tools"] = c.Tools
	}
	return json.Marshal(m)
}

// MarshalJSON renders declared-but-empty members as {} rather than null.
func (c ElicitCapability) MarshalJSON() ([]byte, error) {
	m := map[string]Object{}
	if c.Form != nil {
		m["form"] = c.Form
	}
	if c.URL != nil {
		m["url"] = c.URL
	}
	return json.Marshal(m)
}

// FormElicitation reports whether form-mode elicitation was declared
// (an empty elicitation object counts as form).
func (c ClientCapabilities) FormElicitation() bool {
	return c.Elicitation != nil && (c.Elicitation.Form != nil || c.Elicitation.URL == nil)
}

// URLElicitation reports whether url-mode elicitation was declared.
func (c ClientCapabilities) URLElicitation() bool {
	return c.Elicitation != nil && c.Elicitation.URL != nil
}

// names lists the top-level capabilities present, for error messages.
func (c ClientCapabilities) names() string {
	var n []string
	if c.Elicitation != nil {
		n = append(n, "elicitation")
	}
	if c.Roots != nil {
		n = append(n, "roots")
	}
	if c.Sampling != nil {
		n = append(n, "sampling")
	}
	for k := range c.Extensions {
		n = append(n, k)
	}
	sort.Strings(n)
	if len(n) == 0 {
		return "declared"
	}
	return strings.Join(n, " and ")
}

// LogLevel is a syslog severity used by notifications/message.
type LogLevel string

// The log levels, from least to most severe.
const (
	LevelDebug     LogLevel = "debug"
	LevelInfo      LogLevel = "info"
	LevelNotice    LogLevel = "notice"
	LevelWarning   LogLevel = "warning"
	LevelError     LogLevel = "error"
	LevelCritical  LogLevel = "critical"
	LevelAlert     LogLevel = "alert"
	LevelEmergency LogLevel = "emergency"
)

var levelRank = map[LogLevel]int{
	LevelDebug: 0, LevelInfo: 1, LevelNotice: 2, LevelWarning: 3,
	LevelError: 4, LevelCritical: 5, LevelAlert: 6, LevelEmergency: 7,
}

// Valid reports whether l is one of the eight levels.
func (l LogLevel) Valid() bool { _, ok := levelRank[l]; return ok }

// AtLeast reports whether l is as severe as min or more.
func (l LogLevel) AtLeast(min LogLevel) bool { return levelRank[l] >= levelRank[min] }

// Meta is the parsed params._meta of one request. Everything in it holds
// for this request only.
type Meta struct {
	// ProtocolVersion is the protocol version the request claims
	// ("io.modelcontextprotocol/protocolVersion").
	ProtocolVersion string
	// ClientCapabilities is what the client declared for this request
	// ("io.modelcontextprotocol/clientCapabilities").
	ClientCapabilities ClientCapabilities
	// ClientInfo is the client's self-reported identity ("io.modelcontextprotocol/clientInfo");
	// nil when absent. It is never used for decisions.
	ClientInfo *discover.Implementation
	// LogLevel is the least severe level of log notifications the client
	// wants ("io.modelcontextprotocol/logLevel"); empty means none.
	LogLevel LogLevel
	// ProgressToken is the token of progress notifications, verbatim
	// ("progressToken"); nil means none.
	ProgressToken json.RawMessage
	// Extra holds every other key verbatim, including the W3C trace-context
	// keys traceparent, tracestate and baggage.
	Extra map[string]json.RawMessage
}

// TraceParent returns the W3C traceparent passed in _meta, if any.
func (m *Meta) TraceParent() string {
	s, _ := wire.String(m.Extra["traceparent"])
	return s
}

// metaMembers is params._meta split in one walk over its bytes: the
// reserved members the ladder reads, verbatim, and every other member in
// extra (nil when there is none).
type metaMembers struct {
	version, caps, info, level, progress json.RawMessage
	extra                                map[string]json.RawMessage
}

// splitMeta splits params._meta into its members, refusing a name given
// twice. Errors are envelope errors (HTTP 400); with one, the members are
// zero.
func splitMeta(raw json.RawMessage) (metaMembers, *Error) {
	var f metaMembers
	if isAbsent(raw) {
		return f, invalidMeta("params._meta is required")
	}
	err := wire.EachMemberBytes(raw, func(name []byte, v json.RawMessage) error {
		var slot *json.RawMessage
		switch string(name) {
		case wire.MetaProtocolVersion:
			slot = &f.version
		case wire.MetaClientCapabilities:
			slot = &f.caps
		case wire.MetaClientInfo:
			slot = &f.info
		case wire.MetaLogLevel:
			slot = &f.level
		case wire.MetaProgressToken:
			slot = &f.progress
		default:
			if _, dup := f.extra[string(name)]; dup {
				return wire.ErrDuplicateMember
			}
			if f.extra == nil {
				f.extra = make(map[string]json.RawMessage, 4)
			}
			f.extra[string(name)] = v
			return nil
		}
		if *slot != nil {
			return wire.ErrDuplicateMember
		}
		*slot = v
		return nil
	})
	if err != nil {
		if errors.Is(err, wire.ErrDuplicateMember) {
			return metaMembers{}, invalidMeta("params._meta has a duplicate member")
		}
		return metaMembers{}, invalidMeta("params._meta must be an object")
	}
	return f, nil
}

// versionOf reads the protocol version claim from split _meta members,
// without judging the rest of the envelope. known are the versions the
// server speaks: a claim of one of them costs no allocation.
func versionOf(f *metaMembers, known []string) (version string, ok bool) {
	if f.version == nil {
		return "", false
	}
	return wire.Interned(f.version, known)
}

// parseMeta decodes the split members of params._meta into m, and
// returns it; known are as for versionOf. Errors are envelope errors
// (HTTP 400). The Meta keeps f.extra.
func parseMeta(f *metaMembers, m *Meta, known []string) (*Meta, *Error) {
	*m = Meta{Extra: f.extra}
	version, ok := versionOf(f, known)
	m.ProtocolVersion = version
	if !ok || m.ProtocolVersion == "" {
		return nil, invalidMeta(wire.MetaProtocolVersion + " is required and must be a string")
	}
	// UnmarshalJSON directly: it checks the JSON itself, and encoding/json
	// would only check it once more before handing it the same bytes.
	if v := f.caps; v == nil || isAbsent(v) || v[0] != '{' || m.ClientCapabilities.UnmarshalJSON(v) != nil {
		return nil, invalidMeta(wire.MetaClientCapabilities + " is required and must be a ClientCapabilities object")
	}
	if v := f.info; v != nil {
		var info discover.Implementation
		if json.Unmarshal(v, &info) != nil || info.Name == "" {
			return nil, invalidMeta(wire.MetaClientInfo + " must be an object with a name")
		}
		m.ClientInfo = &info
	}
	if v := f.level; v != nil {
		level, ok := wire.String(v)
		if m.LogLevel = LogLevel(level); !ok || !m.LogLevel.Valid() {
			return nil, invalidMeta(wire.MetaLogLevel + " must be one of debug, info, notice, warning, error, critical, alert, emergency")
		}
	}
	if v := f.progress; v != nil {
		if !validID(v) {
			return nil, invalidMeta("progressToken must be a string or an integer")
		}
		m.ProgressToken = v
	}
	return m, nil
}

// UnmarshalJSON decodes capabilities with exact member names: a member
// spelt in another case is not a declaration.
func (c *ClientCapabilities) UnmarshalJSON(b []byte) error {
	*c = ClientCapabilities{}
	if !json.Valid(b) {
		return errors.New("invalid JSON")
	}
	return wire.EachMember(b, func(name string, v json.RawMessage) error {
		if isAbsent(v) {
			return nil
		}
		switch name {
		case "experimental":
			return json.Unmarshal(v, &c.Experimental)
		case "extensions":
			return json.Unmarshal(v, &c.Extensions)
		case "roots":
			var o Object
			if err := json.Unmarshal(v, &o); err != nil {
				return err
			}
			if o == nil {
				o = Object{}
			}
			c.Roots = &o
		case "sampling":
			var sc SamplingCapability
			if err := decodeSubObjects(v, "context", &sc.Context, "tools", &sc.Tools); err != nil {
				return err
			}
			c.Sampling = &sc
		case "elicitation":
			var ec ElicitCapability
			if err := decodeSubObjects(v, "form", &ec.Form, "url", &ec.URL); err != nil {
				return err
			}
			c.Elicitation = &ec
		}
		return nil
	})
}

// decodeSubObjects decodes the object members of b named name1 and
// name2, exactly by name, into slot1 and slot2.
func decodeSubObjects(b []byte, name1 string, slot1 *Object, name2 string, slot2 *Object) error {
	if b[0] != '{' {
		return errors.New("capability must be an object")
	}
	return wire.EachMemberBytes(b, func(name []byte, v json.RawMessage) error {
		var slot *Object
		switch string(name) {
		case name1:
			slot = slot1
		case name2:
			slot = slot2
		}
		if slot == nil || isAbsent(v) {
			return nil
		}
		if err := json.Unmarshal(v, slot); err != nil {
			return err
		}
		if *slot == nil {
			*slot = Object{}
		}
		return nil
	})
}

// isAbsent reports whether a raw JSON value is missing or null.
func isAbsent(raw json.RawMessage) bool {
	return len(raw) == 0 || bytes.Equal(raw, []byte("null"))
}
