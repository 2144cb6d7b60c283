package streamablehttp

import (
	"encoding/base64"
	"net/http"
	"strings"
	"unicode/utf8"

	"github.com/mrtrkit/mrtrkit/mrtr"
)

// The base64 form of a header value is the base64 of its UTF-8 bytes
// between these two markers, for example =?base64?WsO8cmljaA==?= for
// "Zürich". The markers are matched exactly, in lower case.
const (
	b64Prefix = "=?base64?"
	b64Suffix = "?="
)

// headerError is a header value that cannot be decoded. Its text is the
// reason alone, which is what a Mirror records in HeaderValue.Invalid.
type headerError string

func (e headerError) Error() string { return "streamablehttp: invalid header value: " + string(e) }

const (
	errBadBase64   = headerError("the =?base64?...?= form does not hold valid base64")
	errBadUTF8     = headerError("the =?base64?...?= form does not decode to UTF-8")
	errBadChar     = headerError("plain values may hold only visible ASCII and inner spaces; use the =?base64?...?= form")
	errOuterSpaces = headerError("plain values may not start or end with whitespace; use the =?base64?...?= form")
)

// DecodeHeaderValue decodes one Mcp-Name, Mcp-Method, MCP-Protocol-Version
// or Mcp-Param-* header value as received (after the HTTP layer has
// trimmed surrounding whitespace).
//
// A value that starts with the marker =?base64? and ends with ?= is in the
// base64 form: it holds, between the markers, padded standard base64 of a
// UTF-8 string, which is the decoded value. Any other value
// is plain and stands for itself; it may hold only visible ASCII (0x21 to
// 0x7E) and spaces between them, so no control characters, no non-ASCII
// bytes and no leading or trailing whitespace. The markers are matched in
// lower case only: "=?BASE64?...?=" is a plain value.
func DecodeHeaderValue(raw string) (string, error) {
	// Only a value with both markers is the base64 form; one that merely
	// starts like it is an ordinary value.
	if len(raw) >= len(b64Prefix)+len(b64Suffix) && strings.HasPrefix(raw, b64Prefix) && strings.HasSuffix(raw, b64Suffix) {
		return decodeBase64Form(raw[len(b64Prefix) : len(raw)-len(b64Suffix)])
	}
	if err := checkPlain(raw); err != nil {
		return "", err
	}
	return raw, nil
}

// decodeBase64Form decodes padded standard base64 (RFC 4648 section 4);
// unpadded input is refused, as SEP-2243 requires.
func decodeBase64Form(s string) (string, error) {
	b, err := base64.StdEncoding.Strict().DecodeString(s)
	if err != nil {
		return "", errBadBase64
	}
	if !utf8.Valid(b) {
		return "", errBadUTF8
	}
	return string(b), nil
}

// checkPlain reports whether s may travel as a plain header value.
func checkPlain(s string) error {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c == ' ' {
			if i == 0 || i == len(s)-1 {
				return errOuterSpaces
			}
			continue
		}
		if c < 0x21 || c > 0x7e {
			if c == '\t' && (i == 0 || i == len(s)-1) {
				return errOuterSpaces
			}
			return errBadChar
		}
	}
	return nil
}

// EncodeHeaderValue renders v for an Mcp-Name, Mcp-Method or Mcp-Param-*
// header: as is when it is a valid plain value (see DecodeHeaderValue),
// otherwise in the base64 form. A value that itself starts with =?base64?
// is always encoded, so that DecodeHeaderValue(EncodeHeaderValue(v)) == v
// for every valid UTF-8 string v. Clients use it; so do tests.
func EncodeHeaderValue(v string) string {
	if !strings.HasPrefix(v, b64Prefix) && checkPlain(v) == nil {
		return v
	}
	return b64Prefix + base64.StdEncoding.EncodeToString([]byte(v)) + b64Suffix
}

// The request headers that mirror body values, lower-cased.
const (
	hdrProtocolVersion = "mcp-protocol-version"
	hdrMethod          = "mcp-method"
	hdrName            = "mcp-name"
	hdrParamPrefix     = "mcp-param-"
)

// invalidConflict is recorded when one header arrives more than once with
// different values.
const invalidConflict = "the header is repeated with different values"

// readMirror collects the mirrored headers of a request into m, which
// must be zero. It makes one pass over the header map and matches names
// regardless of case, so a header is found however it was spelled or
// canonicalized.
func readMirror(h http.Header, m *mrtr.Mirror) {
	for k, vs := range h {
		if len(k) < len(hdrName) || (k[0] != 'M' && k[0] != 'm') {
			continue
		}
		switch {
		case strings.EqualFold(k, hdrProtocolVersion):
			m.ProtocolVersion = merge(m.ProtocolVersion, vs)
		case strings.EqualFold(k, hdrMethod):
			m.Method = merge(m.Method, vs)
		case strings.EqualFold(k, hdrName):
			m.Name = merge(m.Name, vs)
		case len(k) > len(hdrParamPrefix) && strings.EqualFold(k[:len(hdrParamPrefix)], hdrParamPrefix):
			key := lowerASCII(k[len(hdrParamPrefix):])
			if m.Params == nil {
				m.Params = make(map[string]mrtr.HeaderValue, 2)
			}
			m.Params[key] = merge(m.Params[key], vs)
		}
	}
}

// merge folds the lines of one header into what was already collected
// under the same name. Every line must decode, and all must agree.
func merge(hv mrtr.HeaderValue, lines []string) mrtr.HeaderValue {
	for _, raw := range lines {
		v, err := DecodeHeaderValue(raw)
		switch {
		case hv.Invalid != "":
		case err != nil:
			hv.Invalid = string(err.(headerError))
		case hv.Present && hv.Value != v:
			hv.Invalid = invalidConflict
		}
		if !hv.Present {
			hv.Value = v
		}
		hv.Present = true
	}
	if hv.Invalid != "" {
		hv.Value = ""
	}
	return hv
}

// lowerASCII lower-cases s, without allocating when it already is.
func lowerASCII(s string) string {
	for i := 0; i < len(s); i++ {
		if c := s[i]; 'A' <= c && c <= 'Z' {
			return strings.ToLower(s)
		}
	}
	return s
}
