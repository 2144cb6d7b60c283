package streamablehttp

import "strings"

// The media types of Streamable HTTP.
const (
	mediaJSON = "application/json"
	mediaSSE  = "text/event-stream"
)

// isJSONContentType reports whether a Content-Type value is
// application/json, with or without parameters. A charset parameter, when
// present, must name UTF-8, the only encoding of JSON on the wire.
func isJSONContentType(v string) bool {
	typ, params := cutParams(v)
	if !strings.EqualFold(typ, mediaJSON) {
		return false
	}
	for params != "" {
		var name, value string
		name, value, params = nextParam(params)
		if strings.EqualFold(name, "charset") && !strings.EqualFold(value, "utf-8") && !strings.EqualFold(value, "utf8") {
			return false
		}
	}
	return true
}

// acceptsResponses reports whether the Accept field lines allow both
// application/json and text/event-stream, the two forms a response may
// take. Each type is judged by the most specific media range that matches
// it (exact, then type/*, then */*), and is acceptable when that range's
// weight is above zero; a type no range matches is not acceptable. A
// request without Accept is refused: clients must list both types.
func acceptsResponses(lines []string) bool {
	if len(lines) == 1 && (lines[0] == "application/json, text/event-stream" || lines[0] == "text/event-stream, application/json") {
		return true
	}
	var js, sse weight
	eachMediaRange(lines, func(main, sub string, q int) {
		js.consider(specificity(main, sub, "application", "json"), q)
		sse.consider(specificity(main, sub, "text", "event-stream"), q)
	})
	return js.acceptable() && sse.acceptable()
}

// acceptsStream reports whether the Accept header lines allow an event
// stream (text/event-stream), as a GET stream of the initialize era needs.
// No Accept header allows anything.
func acceptsStream(lines []string) bool {
	if len(lines) == 0 {
		return true
	}
	var sse weight
	eachMediaRange(lines, func(main, sub string, q int) {
		sse.consider(specificity(main, sub, "text", "event-stream"), q)
	})
	return sse.acceptable()
}

// eachMediaRange calls f with each well-formed media range of the Accept
// header lines and its weight in thousandths; malformed ones are skipped.
func eachMediaRange(lines []string, f func(main, sub string, q int)) {
	for _, line := range lines {
		for line != "" {
			var elem string
			elem, line = cutElement(line)
			typ, params := cutParams(elem)
			main, sub, ok := strings.Cut(typ, "/")
			if !ok || main == "" || sub == "" || (main == "*" && sub != "*") {
				continue
			}
			q, ok := qOf(params)
			if !ok {
				continue
			}
			f(main, sub, q)
		}
	}
}

// weight is the best match found so far for one media type.
type weight struct {
	spec int // 0 no match, 1 */*, 2 type/*, 3 type/subtype
	q    int // thousandths
}

func (w *weight) consider(spec, q int) {
	switch {
	case spec == 0 || spec < w.spec:
	case spec > w.spec:
		w.spec, w.q = spec, q
	case q > w.q:
		// Two ranges equally specific: the more generous one wins.
		w.q = q
	}
}

func (w weight) acceptable() bool { return w.spec > 0 && w.q > 0 }

// specificity rates how precisely the range main/sub names wantMain/wantSub.
func specificity(main, sub, wantMain, wantSub string) int {
	switch {
	case main == "*" && sub == "*":
		return 1
	case !strings.EqualFold(main, wantMain):
		return 0
	case sub == "*":
		return 2
	case strings.EqualFold(sub, wantSub):
		return 3
	}
	return 0
}

// qOf finds the q parameter of a media range, in thousandths (1000 when
// absent). ok is false for a q that is not an RFC 9110 qvalue.
func qOf(params string) (q int, ok bool) {
	for params != "" {
		var name, value string
		name, value, params = nextParam(params)
		if strings.EqualFold(name, "q") {
			return parseQ(value)
		}
	}
	return 1000, true
}

// parseQ parses a qvalue: "0" or "1", optionally followed by a dot and up
// to three digits (all zero after a 1).
func parseQ(s string) (int, bool) {
	if s == "" || len(s) > 5 || (s[0] != '0' && s[0] != '1') {
		return 0, false
	}
	q := int(s[0]-'0') * 1000
	if len(s) == 1 {
		return q, true
	}
	if s[1] != '.' {
		return 0, false
	}
	scale := 100
	for i := 2; i < len(s); i++ {
		c := s[i]
		if c < '0' || c > '9' {
			return 0, false
		}
		q += int(c-'0') * scale
		scale /= 10
	}
	if q > 1000 {
		return 0, false
	}
	return q, true
}

// cutElement splits the first element off a comma-separated list. Commas
// inside quoted strings do not split.
func cutElement(s string) (elem, rest string) {
	quoted := false
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '"':
			quoted = !quoted
		case '\\':
			if quoted {
				i++
			}
		case ',':
			if !quoted {
				return trimOWS(s[:i]), s[i+1:]
			}
		}
	}
	return trimOWS(s), ""
}

// cutParams splits a media type from its parameters.
func cutParams(s string) (typ, params string) {
	typ, params, _ = strings.Cut(s, ";")
	return trimOWS(typ), params
}

// nextParam takes the first name=value parameter off a ';'-separated list.
// The value is unquoted (escapes inside quotes are kept as sent).
func nextParam(s string) (name, value, rest string) {
	var p string
	p, rest, _ = strings.Cut(s, ";")
	name, value, _ = strings.Cut(p, "=")
	name, value = trimOWS(name), trimOWS(value)
	if len(value) >= 2 && value[0] == '"' && value[len(value)-1] == '"' {
		value = value[1 : len(value)-1]
	}
	return name, value, rest
}

func trimOWS(s string) string {
	for s != "" && (s[0] == ' ' || s[0] == '\t') {
		s = s[1:]
	}
	for s != "" && (s[len(s)-1] == ' ' || s[len(s)-1] == '\t') {
		s = s[:len(s)-1]
	}
	return s
}
