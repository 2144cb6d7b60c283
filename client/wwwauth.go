package client

import (
	"strings"

	"github.com/mrtrkit/mrtrkit/internal/wire"
)

// challenge is one authentication challenge of a WWW-Authenticate header
// (RFC 9110 §11.6.1): a scheme and its parameters, names lowercased.
type challenge struct {
	scheme string
	params map[string]string
}

// parseWWWAuthenticate parses the values of WWW-Authenticate headers into
// their challenges. The header is untrusted: malformed parts are skipped,
// never a panic.
func parseWWWAuthenticate(values []string) []challenge {
	var out []challenge
	for _, v := range values {
		s := v
		var cur *challenge
		for {
			s = strings.TrimLeft(s, " \t,")
			if s == "" {
				break
			}
			tok := readToken(s)
			if tok == "" {
				// Skip one byte of something that is not a token.
				s = s[1:]
				continue
			}
			rest := strings.TrimLeft(s[len(tok):], " \t")
			if strings.HasPrefix(rest, "=") && !strings.HasPrefix(strings.TrimLeft(rest[1:], " \t"), "=") && cur != nil {
				// A parameter of the current challenge.
				rest = strings.TrimLeft(rest[1:], " \t")
				var val string
				if strings.HasPrefix(rest, `"`) {
					val, rest = readQuoted(rest)
				} else {
					val = readToken(rest)
					rest = rest[len(val):]
				}
				cur.params[strings.ToLower(tok)] = val
				s = rest
				continue
			}
			// A new challenge: scheme [token68].
			out = append(out, challenge{scheme: strings.ToLower(tok), params: map[string]string{}})
			cur = &out[len(out)-1]
			s = rest
			if t68 := readToken68(s); t68 != "" && !strings.HasPrefix(strings.TrimLeft(s[len(readToken(s)):], " \t"), "=") {
				s = s[len(t68):]
			}
		}
	}
	return out
}

func readToken(s string) string {
	i := 0
	for i < len(s) && wire.IsToken(s[i:i+1]) {
		i++
	}
	return s[:i]
}

func readToken68(s string) string {
	i := 0
	for i < len(s) {
		c := s[i]
		if c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || strings.IndexByte("-._~+/", c) >= 0 {
			i++
			continue
		}
		break
	}
	for i < len(s) && s[i] == '=' {
		i++
	}
	return s[:i]
}

// readQuoted reads a quoted string at the start of s and returns its
// value and the rest.
func readQuoted(s string) (string, string) {
	var b strings.Builder
	for i := 1; i < len(s); i++ {
		switch s[i] {
		case '\\':
			if i+1 < len(s) {
				i++
				b.WriteByte(s[i])
			}
		case '"':
			return b.String(), s[i+1:]
		default:
			b.WriteByte(s[i])
		}
	}
	return b.String(), ""
}
