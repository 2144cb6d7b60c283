package suite

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/mrtrkit/mrtrkit/client"
)

// ConfigError is the error Run returns for a Config it cannot use.
type ConfigError struct{ Err error }

// Error says what is wrong with the Config.
func (e *ConfigError) Error() string { return "suite: invalid configuration: " + e.Err.Error() }

// Unwrap returns the underlying error.
func (e *ConfigError) Unwrap() error { return e.Err }

// Run checks the server at cfg.URL with every scenario cfg selects, one
// after another, and reports each verdict. Failures of the server, of the
// network included, are verdicts, not errors: Run returns an error only
// for an invalid Config (a *ConfigError), or the context's error when ctx
// ends, together with the results so far.
func Run(ctx context.Context, cfg Config) (*Report, error) {
	c, err := cfg.normalize()
	if err != nil {
		return nil, &ConfigError{err}
	}
	r := newRunner(c)
	rep := &Report{URL: c.URL, Tool: c.Tool, OtherTool: c.OtherTool, Started: time.Now(), Counts: map[Status]int{}}
	defer func() { rep.ElapsedMS = time.Since(rep.Started).Milliseconds() }()

	var chosen []Scenario
	needBaseline := false
	for _, s := range catalogue {
		if s.ID == baselineID || (c.Select != nil && !c.Select(s.ID)) {
			continue
		}
		chosen = append(chosen, s)
		needBaseline = needBaseline || s.needsBaseline
	}
	if needBaseline || c.Select == nil || c.Select(baselineID) {
		chosen = append([]Scenario{catalogue[0]}, chosen...)
	}
	for _, s := range chosen {
		if err := ctx.Err(); err != nil {
			return rep, err
		}
		var res Result
		switch {
		case s.ID == baselineID:
			res = r.baseline(ctx)
		case s.needsBaseline && r.base != nil && r.base.Status != Pass:
			res = notRun("the baseline did not pass (see " + baselineID + ")")
		default:
			res = s.run(ctx, r)
		}
		if err := ctx.Err(); err != nil {
			// The exchanges cut short by ctx are no verdict on the server.
			return rep, err
		}
		if c.Strict && res.Status == NotRun && strictCounts(s, res) {
			res.Status = Fail
			res.Reason = "not run, which -strict counts as a failure: " + res.Reason
		}
		res.ID, res.Title = s.ID, s.Title
		rep.Results = append(rep.Results, res)
		rep.Counts[res.Status]++
	}
	return rep, ctx.Err()
}

// strictCounts reports whether Config.Strict turns the NotRun res of s
// into a failure: it does for the security scenarios (state.*, replay.*,
// answers.*) except the informational ones and a NotRun that says the
// property does not apply.
func strictCounts(s Scenario, res Result) bool {
	if s.Informational || res.inapplicable {
		return false
	}
	for _, g := range []string{"state.", "replay.", "answers."} {
		if strings.HasPrefix(s.ID, g) {
			return true
		}
	}
	return false
}

// runner holds what the scenarios of one run share.
type runner struct {
	cfg    Config
	client *http.Client
	nextID int64

	// From tools/list, read once: the input schema of each tool, and the
	// evidence of the listing.
	listed   bool
	tools    map[string]json.RawMessage
	listEv   []Evidence
	listFail string

	// The baseline's verdict, once judged.
	base *Result

	// Whether the server serves the initialize era, probed once: why not
	// (empty when it does) and the evidence of the probe.
	legacyProbed bool
	legacyWhy    string
	legacyEv     Evidence
}

func newRunner(c Config) *runner {
	hc := c.HTTPClient
	if hc == nil {
		hc = &http.Client{
			Transport: http.DefaultTransport.(*http.Transport).Clone(),
			CheckRedirect: func(*http.Request, []*http.Request) error {
				return http.ErrUseLastResponse
			},
		}
	}
	return &runner{cfg: c, client: hc}
}

// id returns a fresh JSON-RPC request id.
func (r *runner) id() int64 {
	r.nextID++
	return r.nextID
}

// meta renders the _meta of a request declaring version.
func (r *runner) meta(version string) json.RawMessage {
	return client.RawMeta(version, r.cfg.Capabilities, clientInfo)
}

// envelope renders a JSON-RPC request.
func envelope(id int64, method string, params json.RawMessage) []byte {
	return client.RawRequestBody(id, method, params)
}

// header returns the headers of a POST for method, authenticated as the
// main principal, or the other one.
func (r *runner) header(method string, otherPrincipal bool) http.Header {
	tok := r.cfg.Token
	if otherPrincipal {
		tok = r.cfg.OtherToken
	}
	return withToken(client.RawHeader(ProtocolVersion, method, ""), tok)
}

// withToken adds the bearer token to h, when there is one.
func withToken(h http.Header, token string) http.Header {
	if token != "" {
		h.Set("Authorization", "Bearer "+token)
	}
	return h
}

// listProbe returns a well-formed tools/list request; scenarios about the
// envelope and the HTTP layer alter it.
func (r *runner) listProbe(label string) probe {
	id := r.id()
	return probe{
		label:  label,
		body:   envelope(id, "tools/list", object(m("_meta", r.meta(ProtocolVersion)))),
		header: r.header("tools/list", false),
		id:     id,
	}
}

// callSpec describes one tools/call.
type callSpec struct {
	label   string
	tool    string
	args    json.RawMessage
	answers json.RawMessage // params.inputResponses; nil: absent
	state   json.RawMessage // params.requestState, any JSON value; nil: absent
	other   bool            // authenticate as the other principal
	name    string          // the Mcp-Name header value; "" derives it from tool
}

// callProbe builds the request for a tools/call.
func (r *runner) callProbe(cs callSpec) probe {
	params := []member{m("name", str(cs.tool)), m("arguments", cs.args)}
	if cs.answers != nil {
		params = append(params, m("inputResponses", cs.answers))
	}
	if cs.state != nil {
		params = append(params, m("requestState", cs.state))
	}
	params = append(params, m("_meta", r.meta(ProtocolVersion)))
	id := r.id()
	h := r.header("tools/call", cs.other)
	if cs.name != "" {
		h.Set("Mcp-Name", cs.name)
	} else {
		h.Set("Mcp-Name", client.EncodeHeaderValue(cs.tool))
	}
	for k, v := range r.paramHeaders(cs.tool, cs.args) {
		h[k] = v
	}
	return probe{label: cs.label, body: envelope(id, "tools/call", object(params...)), header: h, id: id}
}

// call sends a tools/call, after reading tools/list for the
// Mcp-Param-* headers if that has not been done.
func (r *runner) call(ctx context.Context, cs callSpec) reply {
	r.listTools(ctx)
	return r.send(ctx, r.callProbe(cs))
}

// listTools reads tools/list once, following nextCursor, and keeps every
// tool's input schema for the Mcp-Param-* headers.
func (r *runner) listTools(ctx context.Context) {
	if r.listed {
		return
	}
	r.listed = true
	r.tools = map[string]json.RawMessage{}
	var cursor string
	for page := 0; page < 50; page++ {
		params := []member{}
		if cursor != "" {
			params = append(params, m("cursor", str(cursor)))
		}
		params = append(params, m("_meta", r.meta(ProtocolVersion)))
		id := r.id()
		rep := r.send(ctx, probe{label: "tools/list", body: envelope(id, "tools/list", object(params...)), header: r.header("tools/list", false), id: id})
		r.listEv = append(r.listEv, rep.Evidence)
		if !rep.isResult() {
			r.listFail = "tools/list failed: " + rep.String()
			return
		}
		var list struct {
			Tools []struct {
				Name        string          `json:"name"`
				InputSchema json.RawMessage `json:"inputSchema"`
			} `json:"tools"`
			NextCursor string `json:"nextCursor"`
		}
		if err := json.Unmarshal(rep.result, &list); err != nil {
			r.listFail = "tools/list result does not decode: " + err.Error()
			return
		}
		for _, t := range list.Tools {
			r.tools[t.Name] = t.InputSchema
		}
		if list.NextCursor == "" {
			return
		}
		cursor = list.NextCursor
	}
}

// paramHeaders returns the Mcp-Param-* headers a call of tool with args
// must carry, as a client derives them from the x-mcp-header
// declarations of the tool's input schema; none when the schema declares
// what no client may honour.
func (r *runner) paramHeaders(tool string, args json.RawMessage) http.Header {
	h, err := client.RawParamHeaders(r.tools[tool], args)
	if err != nil {
		return nil
	}
	return h
}

// firstCall is a fresh first call of the configured tool that answered
// input_required with a requestState, and answers to its questions.
type firstCall struct {
	reply
	state   string
	answers json.RawMessage
	madeUp  map[string]bool // the keys whose answers the suite made up
}

// first makes a fresh first call. When it does not yield a state to work
// with, the returned Result says why the scenario is not run.
func (r *runner) first(ctx context.Context, other bool) (*firstCall, *Result) {
	rep := r.call(ctx, callSpec{label: "first call of " + r.cfg.Tool + " (no requestState)", tool: r.cfg.Tool, args: r.cfg.Args, other: other})
	f := &firstCall{reply: rep}
	if rep.ResultType != "input_required" {
		res := notRun("the first call did not answer input_required: "+rep.String(), rep.Evidence)
		return nil, &res
	}
	s, ok := rep.stateString()
	if !ok {
		res := notRun("the first call carried no requestState string", rep.Evidence)
		return nil, &res
	}
	f.state = s
	answers, madeUp, err := answerAll(rep.inputRequests, r.cfg.Answers)
	if err != nil {
		res := notRun("cannot answer the first call: "+err.Error(), rep.Evidence)
		return nil, &res
	}
	f.madeUp = madeUp
	if f.answers, err = json.Marshal(answers); err != nil {
		res := notRun("cannot encode the answers: "+err.Error(), rep.Evidence)
		return nil, &res
	}
	return f, nil
}

// Verdict helpers.

func verdict(s Status, reason string, ev ...Evidence) Result {
	return Result{Status: s, Reason: reason, Evidence: ev}
}
func pass(reason string, ev ...Evidence) Result   { return verdict(Pass, reason, ev...) }
func fail(reason string, ev ...Evidence) Result   { return verdict(Fail, reason, ev...) }
func notRun(reason string, ev ...Evidence) Result { return verdict(NotRun, reason, ev...) }
func info(reason string, ev ...Evidence) Result   { return verdict(Info, reason, ev...) }

// expectRefusal judges an exchange that must end in a JSON-RPC error: a
// result of any kind fails, and so does a server error (HTTP 5xx) or an
// answer without a JSON-RPC error.
func expectRefusal(rep reply, before ...Evidence) Result {
	ev := append(append([]Evidence(nil), before...), rep.Evidence)
	switch {
	case rep.isRPCError() && rep.HTTPStatus < 500:
		return pass("refused: "+rep.String(), ev...)
	case rep.isRPCError():
		return fail("the server failed instead of refusing: "+rep.String(), ev...)
	case rep.isResult():
		return fail("accepted: "+rep.String(), ev...)
	}
	return fail("no JSON-RPC error: "+describeNoRPC(rep), ev...)
}

// expectCode judges an exchange that must end in the JSON-RPC error code,
// with the HTTP status when status is not 0.
func expectCode(rep reply, code, status int, before ...Evidence) Result {
	ev := append(append([]Evidence(nil), before...), rep.Evidence)
	switch {
	case rep.isRPCError() && rep.Error.Code == code && (status == 0 || rep.HTTPStatus == status):
		return pass("refused as required: "+rep.String(), ev...)
	case rep.isRPCError() && rep.Error.Code == code:
		return fail(fmt.Sprintf("right error, wrong HTTP status (want %d): %s", status, rep.String()), ev...)
	case rep.isRPCError():
		return fail(fmt.Sprintf("want error %d: %s", code, rep.String()), ev...)
	case rep.isResult():
		return fail("accepted: "+rep.String(), ev...)
	}
	return fail(fmt.Sprintf("want error %d, got no JSON-RPC error: %s", code, describeNoRPC(rep)), ev...)
}

// describeNoRPC describes an exchange without a JSON-RPC response.
func describeNoRPC(rep reply) string {
	s := rep.String()
	if rep.Body != "" {
		s += ", body " + strconv.Quote(clip(rep.Body, 60))
	}
	return s
}
