package mrtr

// Inbound is one parsed message handed to the Server by a transport.
type Inbound struct {
	// Message is the parsed request or notification (see ParseMessage).
	Message *Message
	// Principal is who the transport authenticated; "" when anonymous.
	// It comes from the transport's authenticator, never from clientInfo.
	Principal string
	// Headers are the values the transport carries beside the body (the
	// MCP-Protocol-Version, Mcp-Method, Mcp-Name and Mcp-Param-* headers on
	// Streamable HTTP), already decoded. Nil for a transport without them,
	// such as stdio; then no header checks are made.
	Headers *Mirror
	// Emit delivers one encoded server-to-client notification related to
	// this request (progress, log). Nil when the transport cannot deliver
	// notifications.
	Emit func(notification []byte) error
}

// Mirror holds the header copies of body values that a transport carries.
type Mirror struct {
	// ProtocolVersion is the MCP-Protocol-Version header.
	ProtocolVersion HeaderValue
	// Method is the Mcp-Method header.
	Method HeaderValue
	// Name is the Mcp-Name header: the tool or prompt name, or the
	// resource URI.
	Name HeaderValue
	// Params are the Mcp-Param-{Name} values, keyed by the lower-cased Name.
	Params map[string]HeaderValue
}

// HeaderValue is one decoded header value.
type HeaderValue struct {
	// Value is the decoded value, usable when Present and not Invalid.
	Value string
	// Present reports whether the header was sent.
	Present bool
	// Invalid, when not empty, says why the raw value could not be decoded
	// (bad characters, broken base64 form); the value is then unusable.
	Invalid string
}
