package streamablehttp

import (
	"fmt"
	"net/http"
	"strconv"
	"strings"

	"github.com/mrtrkit/mrtrkit/internal/wire"
)

// hostEntry is one allowed host: a host name or IP literal (brackets
// removed), and a port, or "" for any port.
type hostEntry struct{ host, port string }

// guard protects the endpoint from DNS rebinding and from cross-site
// requests by checking Host and Origin before anything else is done.
type guard struct {
	anyHost   bool
	hosts     []hostEntry // empty: loopback names only
	anyOrigin bool
	origins   []string // empty: http(s) origins on loopback names only
}

func newGuard(hosts, origins []string) (guard, error) {
	var g guard
	for _, h := range hosts {
		if h == "*" {
			g.anyHost = true
			continue
		}
		host, port, ok := splitHostPort(h)
		if !ok || host == "" {
			return guard{}, fmt.Errorf("streamablehttp: allowed host %q is not a host or host:port", h)
		}
		g.hosts = append(g.hosts, hostEntry{host, port})
	}
	for _, o := range origins {
		if o == "*" {
			g.anyOrigin = true
			continue
		}
		if _, ok := originHost(o); !ok {
			return guard{}, fmt.Errorf("streamablehttp: allowed origin %q is not of the form scheme://host[:port]", o)
		}
		g.origins = append(g.origins, o)
	}
	return g, nil
}

// check returns "" when the request may proceed, else what was refused.
func (g *guard) check(r *http.Request) string {
	if !g.hostAllowed(r.Host) {
		return "host"
	}
	if origin, present := r.Header["Origin"]; present && !g.originAllowed(origin) {
		return "origin"
	}
	return ""
}

// refusal explains a refusal of check to the client: the Host or Origin
// received (quoted: clipped, control characters escaped) and the option
// that allows it. Nothing of the allow-lists is disclosed.
func (g *guard) refusal(what string, r *http.Request) string {
	if what == "host" {
		hint := "list the names clients use to reach the server with streamablehttp.WithAllowedHosts"
		if len(g.hosts) == 0 {
			hint = "only localhost, 127.0.0.1 and [::1] are allowed by default; " + hint
		}
		return "host " + quoteEcho(r.Host) + " not allowed (" + hint + ")"
	}
	origins := r.Header["Origin"]
	if len(origins) != 1 {
		return "origin not allowed (a request carries at most one Origin header)"
	}
	hint := "list the origins of browser clients with streamablehttp.WithAllowedOrigins"
	if len(g.origins) == 0 {
		hint = "only loopback origins are allowed by default; " + hint
	}
	return "origin " + quoteEcho(origins[0]) + " not allowed (" + hint + ")"
}

// quoteEcho quotes a value a client sent for an error message, clipped to
// wire.MaxEcho bytes, with control characters, quotes and invalid UTF-8
// escaped, so that it can break neither a message nor a log line.
func quoteEcho(s string) string { return strconv.Quote(wire.Clip(s)) }

func (g *guard) hostAllowed(hostport string) bool {
	if g.anyHost {
		return true
	}
	host, port, ok := splitHostPort(hostport)
	if !ok {
		return false
	}
	if len(g.hosts) == 0 {
		return isLoopbackName(host)
	}
	for _, e := range g.hosts {
		if strings.EqualFold(e.host, host) && (e.port == "" || e.port == port) {
			return true
		}
	}
	return false
}

// originAllowed judges the Origin header lines of a request. A browser
// sends exactly one; anything else is refused.
func (g *guard) originAllowed(lines []string) bool {
	if len(lines) != 1 {
		return false
	}
	origin := lines[0]
	if g.anyOrigin {
		return true
	}
	if len(g.origins) == 0 {
		host, ok := originHost(origin)
		return ok && isLoopbackName(host)
	}
	for _, o := range g.origins {
		if strings.EqualFold(o, origin) {
			return true
		}
	}
	return false
}

// originHost returns the host name of an http or https origin
// (scheme://host[:port], nothing after it).
func originHost(origin string) (string, bool) {
	var rest string
	switch {
	case len(origin) > 7 && strings.EqualFold(origin[:7], "http://"):
		rest = origin[7:]
	case len(origin) > 8 && strings.EqualFold(origin[:8], "https://"):
		rest = origin[8:]
	default:
		return "", false
	}
	if strings.ContainsAny(rest, "/?#@ ") {
		return "", false
	}
	host, _, ok := splitHostPort(rest)
	return host, ok && host != ""
}

// isLoopbackName reports whether host names this machine by one of the
// loopback names a local client uses.
func isLoopbackName(host string) bool {
	return strings.EqualFold(host, "localhost") || host == "127.0.0.1" || host == "::1"
}

// splitHostPort splits "host", "host:port", "[v6]" or "[v6]:port",
// removing IPv6 brackets. The port, when present, must be digits.
func splitHostPort(s string) (host, port string, ok bool) {
	if strings.HasPrefix(s, "[") {
		end := strings.IndexByte(s, ']')
		if end < 0 {
			return "", "", false
		}
		host, s = s[1:end], s[end+1:]
		if s == "" {
			return host, "", true
		}
		if s[0] != ':' {
			return "", "", false
		}
		port = s[1:]
	} else {
		var hasPort bool
		host, port, hasPort = strings.Cut(s, ":")
		if strings.IndexByte(port, ':') >= 0 {
			return "", "", false // an IPv6 literal must be bracketed
		}
		if !hasPort {
			return host, "", true
		}
	}
	if port == "" {
		return "", "", false
	}
	for i := 0; i < len(port); i++ {
		if port[i] < '0' || port[i] > '9' {
			return "", "", false
		}
	}
	return host, port, true
}
