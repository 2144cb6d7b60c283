package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"sort"
	"strings"

	"github.com/mrtrkit/mrtrkit/client"
	"github.com/mrtrkit/mrtrkit/internal/wire"
	"github.com/mrtrkit/mrtrkit/mrtr"
)

// maxPages bounds how many pages of a list are fetched.
const maxPages = 100

// resultHead is what mcpcall reads of every result first.
type resultHead struct {
	ResultType string  `json:"resultType"`
	IsError    bool    `json:"isError"`
	NextCursor *string `json:"nextCursor"`
}

// execute runs the command and returns the exit status.
func (s *session) execute(ctx context.Context, cmd command) int {
	if cmd.method == wire.MethodDiscover {
		// What the server says about itself, shown whatever revisions it
		// lists: one server/discover, no Connect.
		res, err := client.Discover(ctx, s.tr, s.copts...)
		if err != nil {
			return s.failed(cmd, err)
		}
		if code := s.checkComplete(cmd.method, res); code >= 0 {
			return code
		}
		var d struct {
			SupportedVersions []string `json:"supportedVersions"`
		}
		_ = json.Unmarshal(res, &d)
		s.out.final(cmd, res, 0, 0)
		if !slices.Contains(d.SupportedVersions, ProtocolVersion) {
			fmt.Fprintf(s.env.stderr, "mcpcall: warning: the server answered a %s request but does not list %s among its supportedVersions (%s); other requests may be refused with -32022\n",
				ProtocolVersion, ProtocolVersion, termLine(strings.Join(d.SupportedVersions, ", ")))
		}
		return exitOK
	}
	c, err := client.Connect(ctx, s.tr, s.copts...)
	if err != nil {
		return s.failed(cmd, err)
	}
	defer c.Close()
	s.c = c
	switch cmd.method {
	case wire.MethodToolsList, wire.MethodPromptsList, wire.MethodResourcesList, wire.MethodTemplatesList:
		return s.list(ctx, cmd)
	case mrtr.MethodTasksGet, mrtr.MethodTasksCancel:
		return s.taskCommand(ctx, cmd)
	}
	return s.callRounds(ctx, cmd)
}

// checkComplete checks the resultType of a result that must be complete;
// it returns -1 when the result may be printed, or an exit status.
func (s *session) checkComplete(method string, result json.RawMessage) int {
	var h resultHead
	if err := json.Unmarshal(result, &h); err != nil {
		return s.fail(transportErr("%s: the result is not a JSON object: %v", method, err))
	}
	switch h.ResultType {
	case "", wire.ResultComplete:
		return -1
	case wire.ResultInputRequired:
		return s.fail(transportErr("%s: the server answered input_required, which only tools/call, prompts/get and resources/read may", method))
	}
	return s.fail(transportErr("%s: unrecognised resultType %q", method, h.ResultType))
}

// list prints every page of a list. The pages are asked for with
// client.Call, not ListTools and its kin, because mcpcall shows each
// page as the server sent it: its cacheScope and ttlMs, and tools whose
// x-mcp-header declarations a conforming client would drop, with a
// warning.
func (s *session) list(ctx context.Context, cmd command) int {
	var cursor *string
	for page := 1; ; page++ {
		var params any
		if cursor != nil {
			params = map[string]string{"cursor": *cursor}
		}
		res, err := s.c.Call(ctx, cmd.method, params)
		if err != nil {
			return s.failed(cmd, err)
		}
		if code := s.checkComplete(cmd.method, res); code >= 0 {
			return code
		}
		var h resultHead
		_ = json.Unmarshal(res, &h)
		s.out.final(cmd, res, 0, page)
		if h.NextCursor == nil {
			return exitOK
		}
		if page >= maxPages {
			fmt.Fprintf(s.env.stderr, "mcpcall: stopped after %d pages; the list goes on\n", maxPages)
			return exitOK
		}
		if cursor != nil && *cursor == *h.NextCursor {
			return s.fail(transportErr("%s: the server returned the same cursor again", cmd.method))
		}
		cursor = h.NextCursor
	}
}

// callRounds runs tools/call, prompts/get or resources/read with the
// client's CallTool, GetPrompt or ReadResource, which answer the
// input_required rounds with the answerer; the rounds are printed as
// they go, and the result as the server sent it.
func (s *session) callRounds(ctx context.Context, cmd command) int {
	opts := []client.CallOption{client.WithRoundWatch(s.roundWatch(cmd)), client.WithMeta(wire.MetaProgressToken, "mcpcall")}
	var raw json.RawMessage
	var ex client.Exchange
	var err error
	switch cmd.method {
	case wire.MethodToolsCall:
		// The listing teaches the client the tool's x-mcp-header
		// declarations (it lists again, once, when the server refuses
		// the headers) and lets mcpcall warn about the arguments.
		s.findTool(ctx, cmd.target)
		var args any
		if s.args != nil {
			args = s.args
		}
		if s.opts.task {
			return s.callTask(ctx, cmd, args, opts)
		}
		var r *client.ToolResult
		if r, err = s.c.CallTool(ctx, cmd.target, args, opts...); err == nil {
			raw, ex = r.Raw, r.Exchange
		}
	case wire.MethodPromptsGet:
		var args map[string]string // checked to be strings (checkPromptArgs)
		if s.args != nil {
			if err := json.Unmarshal(s.args, &args); err != nil {
				return s.fail(err)
			}
		}
		var r *client.PromptResult
		if r, err = s.c.GetPrompt(ctx, cmd.target, args, opts...); err == nil {
			raw, ex = r.Raw, r.Exchange
		}
	default:
		var r *client.ResourceResult
		if r, err = s.c.ReadResource(ctx, cmd.target, opts...); err == nil {
			raw, ex = r.Raw, r.Exchange
		}
	}
	if err != nil {
		return s.callFailed(cmd, err)
	}
	return s.result(cmd, raw, ex.Rounds)
}

// callFailed reports the error of a call.
func (s *session) callFailed(cmd command, err error) int {
	if errors.Is(err, client.ErrTooManyRounds) {
		fmt.Fprintf(s.env.stderr, "mcpcall: the server still asks for input after %d rounds; stopped (--max-rounds %d)\n", s.opts.maxRounds, s.opts.maxRounds)
		return exitUsage
	}
	return s.failed(cmd, err)
}

// result prints the complete result of a call after its rounds.
func (s *session) result(cmd command, raw json.RawMessage, rounds int) int {
	s.out.final(cmd, raw, rounds, 0)
	var h resultHead
	_ = json.Unmarshal(raw, &h)
	if cmd.method == wire.MethodToolsCall && h.IsError {
		fmt.Fprintln(s.env.stderr, "mcpcall: the tool reported an error (result with isError: true)")
		return exitRPCError
	}
	return exitOK
}

// roundWatch prints the rounds of a call (and a task's questions) as
// the client answers them.
func (s *session) roundWatch(cmd command) *client.RoundWatch {
	record := func(r *client.Round) *roundRecord {
		return &roundRecord{Type: "round", Round: r.N, Method: cmd.method, Target: cmd.target, RequestState: r.RequestState}
	}
	return &client.RoundWatch{
		Asked: func(r *client.Round) {
			s.round = r
			clear(s.sources)
			if r.N > s.opts.maxRounds {
				return // not answered: Done reports it
			}
			if len(r.RequestState) > 0 && r.RequestState[0] != '"' {
				fmt.Fprintf(s.env.stderr, "mcpcall: warning: requestState is %s, not a string; sent back as received\n", jsonKind(r.RequestState))
			}
			s.out.roundStart(record(r), len(r.Requests))
		},
		Answered: func(r *client.Round, i int) {
			q := r.Requests[i]
			req := inputRequest{Method: q.Method, Params: q.Params}
			s.out.asked(q.Key, req)
			for _, w := range answerWarnings(req, r.Answers[i]) {
				fmt.Fprintf(s.env.stderr, "mcpcall: warning: [%s] %s; sent anyway\n", termLine(q.Key), termLine(w))
			}
			s.out.answered(q.Key, req, answer{r.Answers[i], s.sources[q.Key]})
		},
		Done: func(r *client.Round, err error) {
			defer func() { s.round = nil }()
			if errors.Is(err, client.ErrTooManyRounds) {
				s.out.roundLimit(cmd, r)
				return
			}
			if n := len(r.Answers); err != nil && n < len(r.Requests) {
				q := r.Requests[n]
				s.out.asked(q.Key, inputRequest{Method: q.Method, Params: q.Params})
			}
			rec := record(r)
			rec.seal(r, s.sources)
			s.out.roundEnd(rec)
		},
	}
}

// transportError is a failure below JSON-RPC found by mcpcall itself: a
// result that is not what the method answers.
type transportError struct{ msg string }

func (e *transportError) Error() string { return e.msg }

func transportErr(format string, args ...any) error {
	return &transportError{fmt.Sprintf(format, args...)}
}

// failed reports what a client call returned: a JSON-RPC error (exit 1),
// a question mcpcall cannot answer, or a transport error (exit 2).
func (s *session) failed(cmd command, err error) int {
	var rpc *client.RPCError
	var ue *unansweredError
	var ce *client.Error
	errors.As(err, &ce)
	switch {
	case errors.As(err, &ue):
		return s.fail(ue)
	case errors.As(err, &rpc) && ce != nil:
		return s.rpcError(cmd, ce, rpc)
	case ce != nil:
		cause := ce.Err.Error()
		if s.watch.expired() {
			cause = fmt.Sprintf("the server sent nothing for %v (-timeout)", s.opts.timeout)
		}
		msg := ce.Method + ": " + cause
		if ce.HTTPStatus == http.StatusUnauthorized {
			msg += " (give a bearer token with -token or $" + EnvToken + ")"
		}
		return s.fail(&transportError{msg})
	}
	return s.fail(err)
}

// fail reports an error that is not a JSON-RPC error and returns its
// exit status.
func (s *session) fail(err error) int {
	var te *transportError
	var ue *unansweredError
	switch {
	case errors.As(err, &te):
		s.out.failure("transport_error", te.msg)
		fmt.Fprintf(s.env.stderr, "mcpcall: transport error: %s\n", termText(te.msg))
	case errors.As(err, &ue):
		s.out.failure("unanswered", ue.msg)
		fmt.Fprintf(s.env.stderr, "mcpcall: cannot answer: %s\n", termText(ue.msg))
	default:
		s.out.failure("error", err.Error())
		fmt.Fprintf(s.env.stderr, "mcpcall: %s\n", termText(err.Error()))
	}
	return exitUsage
}

// rpcError reports a JSON-RPC error response.
func (s *session) rpcError(cmd command, ce *client.Error, e *client.RPCError) int {
	s.out.rpcError(cmd, ce.HTTPStatus, e, ce.Round)
	w := s.env.stderr
	fmt.Fprintf(w, "mcpcall: JSON-RPC error %d: %s", e.Code, termLine(e.Message))
	if ce.HTTPStatus != 0 && ce.HTTPStatus != 200 {
		fmt.Fprintf(w, " (HTTP %d)", ce.HTTPStatus)
	}
	fmt.Fprintln(w)
	if len(e.Data) > 0 && !s.opts.jsonOut {
		fmt.Fprintf(w, "  data: %s\n", termLine(string(e.Data)))
	}
	if hint := errorHint(e); hint != "" {
		fmt.Fprintf(w, "  %s\n", hint)
	}
	return exitRPCError
}

// errorHint explains the errors of 2026-07-28 a user can act on.
func errorHint(e *client.RPCError) string {
	switch e.Code {
	case int(mrtr.CodeMissingCapability):
		var d struct {
			Required map[string]json.RawMessage `json:"requiredCapabilities"`
		}
		_ = json.Unmarshal(e.Data, &d)
		var how []string
		for _, c := range sortedKeys(d.Required) {
			switch c {
			case "elicitation":
				how = append(how, "elicitation: run at a terminal or give --elicit-answers FILE")
			case "sampling":
				how = append(how, "sampling: give --sampling-answers FILE or --model-url URL")
			case "roots":
				how = append(how, "roots: give --root file:///PATH")
			default:
				how = append(how, termLine(c)+": mcpcall cannot answer it (try --capabilities to declare it anyway)")
			}
		}
		if len(how) == 0 {
			return "the server needs a client capability this request did not declare"
		}
		return "the server needs client capabilities this request did not declare; " + strings.Join(how, "; ")
	case int(mrtr.CodeUnsupportedVersion):
		var d struct {
			Supported []string `json:"supported"`
		}
		_ = json.Unmarshal(e.Data, &d)
		return fmt.Sprintf("mcpcall speaks %s only; the server supports %s", ProtocolVersion, termLine(strings.Join(d.Supported, ", ")))
	case int(mrtr.CodeHeaderMismatch):
		return "a request header disagrees with the body (SEP-2243 header mirroring)"
	}
	return ""
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// roundRecord is one round as -json prints it.
type roundRecord struct {
	Type           string          `json:"type"`
	Round          int             `json:"round"`
	Method         string          `json:"method"`
	Target         string          `json:"target,omitempty"`
	InputRequests  json.RawMessage `json:"inputRequests"`
	InputResponses json.RawMessage `json:"inputResponses"`
	AnsweredBy     json.RawMessage `json:"answeredBy"`
	RequestState   json.RawMessage `json:"requestState,omitempty"`
}

// seal fills in the round's requests, the answers sent so far and where
// they came from, each an object by key.
func (rec *roundRecord) seal(r *client.Round, sources map[string]string) {
	asks := map[string]json.RawMessage{}
	answers := map[string]json.RawMessage{}
	by := map[string]string{}
	for i, q := range r.Requests {
		asks[q.Key] = q.Raw
		if i < len(r.Answers) {
			answers[q.Key] = r.Answers[i]
			by[q.Key] = sources[q.Key]
		}
	}
	rec.InputRequests, _ = encodeJSON(asks)
	rec.InputResponses, _ = encodeJSON(answers)
	rec.AnsweredBy, _ = encodeJSON(by)
}

// textOf joins the text blocks of sampling content (one block or a
// list), other blocks named.
func textOf(content json.RawMessage) string {
	var r mrtr.SamplingResult // reads content as one block or a list
	_ = json.Unmarshal([]byte(`{"content":`+string(bytes.TrimSpace(content))+`}`), &r)
	return samplingText(r.Content)
}
