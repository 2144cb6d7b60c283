package legacy

import (
	"bytes"
	"encoding/json"
	"errors"
	"strconv"
	"strings"

	"github.com/mrtrkit/mrtrkit/internal/wire"
	"github.com/mrtrkit/mrtrkit/mrtr"
)

// This file translates between the eras: what a modern answer carries
// that a client of the initialize era must never see.

var errDuplicate = errors.New("duplicate member name")

// eachMember calls fn with the name and raw value of each member of the
// JSON object b, in order (the Server's own output), refusing a name given
// twice.
func eachMember(b []byte, fn func(name []byte, v json.RawMessage)) error {
	var seenAt [8][]byte
	seen := seenAt[:0]
	return wire.EachMemberBytes(b, func(name []byte, v json.RawMessage) error {
		for _, s := range seen {
			if bytes.Equal(s, name) {
				return errDuplicate
			}
		}
		seen = append(seen, name)
		fn(name, v)
		return nil
	})
}

// appendQuote appends name quoted as strconv.Quote quotes it, without
// making a string of it.
func appendQuote(b []byte, name []byte) []byte {
	if !wire.Plain(name) {
		return strconv.AppendQuote(b, string(name))
	}
	b = append(b, '"')
	b = append(b, name...)
	return append(b, '"')
}

// Members of a modern result that mean nothing before 2026-07-28.
var modernOnly = map[string]bool{"resultType": true, "ttlMs": true, "cacheScope": true}

// _meta keys of a modern result or notification that stay on the modern
// wire.
var modernMeta = map[string]bool{
	wire.MetaServerInfo:     true,
	wire.MetaSubscriptionID: true,
}

// stripResult removes from a modern result what a client of the
// initialize era must not see: resultType, the cache hints and the
// server's identity in _meta (the handler's own _meta keys stay). An
// empty result becomes exactly {}.
func stripResult(r json.RawMessage) (json.RawMessage, error) {
	out := make([]byte, 0, len(r))
	out = append(out, '{')
	var err error
	each := eachMember(r, func(name []byte, v json.RawMessage) {
		if modernOnly[string(name)] || err != nil {
			return
		}
		if string(name) == "_meta" {
			if v, err = stripMeta(v); err != nil || v == nil {
				return
			}
		}
		if len(out) > 1 {
			out = append(out, ',')
		}
		out = appendQuote(out, name)
		out = append(out, ':')
		out = append(out, v...)
	})
	if each != nil {
		return nil, each
	}
	if err != nil {
		return nil, err
	}
	return append(out, '}'), nil
}

// stripMeta removes the modern keys of a _meta object; nil when nothing
// is left.
func stripMeta(m json.RawMessage) (json.RawMessage, error) {
	if len(m) == 0 || m[0] != '{' {
		return m, nil
	}
	out := []byte{'{'}
	err := eachMember(m, func(name []byte, v json.RawMessage) {
		if modernMeta[string(name)] {
			return
		}
		if len(out) > 1 {
			out = append(out, ',')
		}
		out = appendQuote(out, name)
		out = append(out, ':')
		out = append(out, v...)
	})
	if err != nil || len(out) == 1 {
		return nil, err
	}
	return append(out, '}'), nil
}

// codeResourceNotFound is how the initialize era says "no such resource".
const codeResourceNotFound mrtr.Code = -32002

// legacyError translates a modern error for the initialize era: a missing
// resource gets that era's code, and the codes of 2026-07-28 (header
// mismatch, missing capability, unsupported version), which its clients
// do not know, become -32603 with their message.
func legacyError(e *mrtr.Error) *mrtr.Error {
	switch e.Code {
	case mrtr.CodeInvalidParams:
		if m, ok := e.Data.(map[string]string); ok && m["uri"] != "" && strings.HasPrefix(e.Message, "Resource not found") {
			return mrtr.NewError(codeResourceNotFound, e.Message, e.Data)
		}
	case mrtr.CodeHeaderMismatch, mrtr.CodeMissingCapability, mrtr.CodeUnsupportedVersion:
		return mrtr.NewError(mrtr.CodeInternalError, e.Message, nil)
	}
	return e
}

// legacyNotification rewrites a notification of a modern listen stream
// for a session's stream: the acknowledgement is dropped (nil), and the
// subscription id leaves _meta.
func legacyNotification(n []byte) []byte {
	var msg struct {
		Method string          `json:"method"`
		Params json.RawMessage `json:"params"`
	}
	if json.Unmarshal(n, &msg) != nil || msg.Method == "notifications/subscriptions/acknowledged" {
		return nil
	}
	out := []byte(`{"jsonrpc":"2.0","method":`)
	out = strconv.AppendQuote(out, msg.Method)
	if len(msg.Params) > 0 && msg.Params[0] == '{' {
		p, err := stripResult(msg.Params)
		if err == nil && len(p) > 2 {
			out = append(out, `,"params":`...)
			out = append(out, p...)
		}
	}
	return append(out, '}')
}
