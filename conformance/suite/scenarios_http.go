package suite

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"strings"
)

// The HTTP-layer scenarios: other HTTP methods, the version and name
// headers, and DNS rebinding (Host and Origin).

func httpMethod(method string) func(ctx context.Context, r *runner) Result {
	return controlled(func(ctx context.Context, r *runner, ctl Evidence) Result {
		h := r.header("", false)
		h.Del("Mcp-Method")
		h.Del("Content-Type")
		rep := r.send(ctx, probe{label: method + " " + r.cfg.URL, method: method, header: h})
		ev := []Evidence{ctl, rep.Evidence}
		switch s := rep.HTTPStatus; {
		case s == http.StatusMethodNotAllowed:
			return pass("answered 405", ev...)
		case s == 0:
			return fail("no answer: "+rep.TransportError, ev...)
		case s >= 500:
			return fail(fmt.Sprintf("the server failed (HTTP %d); want 405", s), ev...)
		case s >= 200 && s < 300 && holdsResult(rep.Body):
			return fail(fmt.Sprintf("answered %d with an MCP result; want 405", s), ev...)
		case s >= 200 && s < 300:
			return pass(fmt.Sprintf("answered %d without an MCP result, not 405: acceptable only for a server that also serves 2025-era clients", s), ev...)
		}
		return pass(fmt.Sprintf("answered %d, not 405: acceptable for a server that also serves 2025-era clients", rep.HTTPStatus), ev...)
	})
}

// holdsResult reports whether a body, JSON or an event stream, carries a
// JSON-RPC result.
func holdsResult(body string) bool {
	return strings.Contains(body, `"jsonrpc"`) && strings.Contains(body, `"result"`)
}

func versionMismatch(ctx context.Context, r *runner, ctl Evidence) Result {
	p := r.listProbe("tools/list with header MCP-Protocol-Version 2026-07-28 and _meta version 2025-11-25")
	p.body = envelope(p.id, "tools/list", object(m("_meta", r.meta("2025-11-25"))))
	return expectCode(r.send(ctx, p), -32020, http.StatusBadRequest, ctl)
}

func nameBase64Mismatch(ctx context.Context, r *runner) Result {
	other := r.cfg.OtherTool
	if other == "" {
		other = r.cfg.Tool + "_mrtrcheck"
	}
	ctl := r.call(ctx, callSpec{label: "control: tools/call " + r.cfg.Tool + " with a plain Mcp-Name", tool: r.cfg.Tool, args: r.cfg.Args})
	if !ctl.isResult() {
		return controlFailed(ctl)
	}
	enc := base64Sentinel(other)
	rep := r.call(ctx, callSpec{label: fmt.Sprintf("tools/call %s with Mcp-Name %s (%s)", r.cfg.Tool, enc, other), tool: r.cfg.Tool, args: r.cfg.Args, name: enc})
	return expectCode(rep, -32020, http.StatusBadRequest, ctl.Evidence)
}

func nameBase64Match(ctx context.Context, r *runner) Result {
	enc := base64Sentinel(r.cfg.Tool)
	rep := r.call(ctx, callSpec{label: fmt.Sprintf("tools/call %s with Mcp-Name %s", r.cfg.Tool, enc), tool: r.cfg.Tool, args: r.cfg.Args, name: enc})
	if rep.isResult() {
		return pass("accepted: "+rep.String(), rep.Evidence)
	}
	return fail("a correctly encoded Mcp-Name was not accepted: "+describeNoRPC(rep), rep.Evidence)
}

// expectForbidden judges a request that must be refused with 403, after
// the control (the same request with a valid Host and no Origin) was
// accepted.
func expectForbidden(rep reply, ctl Evidence) Result {
	ev := []Evidence{ctl, rep.Evidence}
	switch s := rep.HTTPStatus; {
	case s == http.StatusForbidden:
		return pass("answered 403", ev...)
	case s >= 400 && s < 500:
		return pass(fmt.Sprintf("refused with %d (403 expected)", s), ev...)
	case s == 0:
		return fail("no answer: "+rep.TransportError, ev...)
	}
	return fail(fmt.Sprintf("not refused: %s", rep.String()), ev...)
}

const evilHost = "evil.example.com"

func rebindHost(ctx context.Context, r *runner, ctl Evidence) Result {
	host := evilHost
	if u, err := url.Parse(r.cfg.URL); err == nil && u.Port() != "" {
		host += ":" + u.Port()
	}
	p := r.listProbe("tools/list with Host " + host)
	p.host = host
	return expectForbidden(r.send(ctx, p), ctl)
}

func rebindOrigin(ctx context.Context, r *runner, ctl Evidence) Result {
	p := r.listProbe("tools/list with Origin http://" + evilHost)
	p.header.Set("Origin", "http://"+evilHost)
	return expectForbidden(r.send(ctx, p), ctl)
}
