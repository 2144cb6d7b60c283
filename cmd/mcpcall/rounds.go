package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/mrtrkit/mrtrkit/internal/wire"
	"github.com/mrtrkit/mrtrkit/mrtr"
)

// maxPages bounds how many pages of a list are fetched.
const maxPages = 100

// loadSheddingPause is the wait before retrying an input_required result
// that asks nothing (state only).
const loadSheddingPause = 250 * time.Millisecond

// inputRequest is one request embedded in an input_required result.
type inputRequest struct {
	Method string          `json:"method"`
	Params json.RawMessage `json:"params"`
}

// resultHead is what mcpcall reads of every result first.
type resultHead struct {
	ResultType    string          `json:"resultType"`
	InputRequests json.RawMessage `json:"inputRequests"`
	RequestState  json.RawMessage `json:"requestState"`
	IsError       bool            `json:"isError"`
	NextCursor    *string         `json:"nextCursor"`
}

// execute runs the command and returns the exit status.
func (s *session) execute(ctx context.Context, cmd command) int {
	switch cmd.method {
	case wire.MethodDiscover:
		resp, err := s.client.call(ctx, cmd.method, "", nil, nil)
		if err != nil {
			return s.fail(err)
		}
		if resp.Error != nil {
			return s.rpcError(cmd, resp, 0)
		}
		if code := s.checkComplete(cmd.method, resp.Result); code >= 0 {
			return code
		}
		var d struct {
			SupportedVersions []string `json:"supportedVersions"`
		}
		_ = json.Unmarshal(resp.Result, &d)
		s.out.final(cmd, resp.Result, 0, 0)
		if !slices.Contains(d.SupportedVersions, ProtocolVersion) {
			fmt.Fprintf(s.env.stderr, "mcpcall: warning: the server answered a %s request but does not list %s among its supportedVersions (%s); other requests may be refused with -32022\n",
				ProtocolVersion, ProtocolVersion, termLine(strings.Join(d.SupportedVersions, ", ")))
		}
		return exitOK
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

// list fetches every page of a list.
func (s *session) list(ctx context.Context, cmd command) int {
	var cursor *string
	for page := 1; ; page++ {
		var params []member
		if cursor != nil {
			params = []member{{"cursor", mustJSON(*cursor)}}
		}
		resp, err := s.client.call(ctx, cmd.method, "", params, nil)
		if err != nil {
			return s.fail(err)
		}
		if resp.Error != nil {
			return s.rpcError(cmd, resp, 0)
		}
		if code := s.checkComplete(cmd.method, resp.Result); code >= 0 {
			return code
		}
		var h resultHead
		_ = json.Unmarshal(resp.Result, &h)
		s.out.final(cmd, resp.Result, 0, page)
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

// callRounds runs tools/call, prompts/get or resources/read, answering
// input_required rounds until the result is complete.
func (s *session) callRounds(ctx context.Context, cmd command) int {
	var base []member
	var headers map[string]string
	var tool *toolInfo
	switch cmd.method {
	case wire.MethodResourcesRead:
		base = []member{{"uri", mustJSON(cmd.target)}}
	default:
		base = []member{{"name", mustJSON(cmd.target)}}
		if s.args != nil {
			base = append(base, member{"arguments", s.args})
		}
	}
	if cmd.method == wire.MethodToolsCall {
		tool = s.findTool(ctx, cmd.target, false)
		headers = s.paramHeaders(tool)
	}
	var responses, state json.RawMessage
	refreshed := false
	for round := 0; ; {
		params := append([]member(nil), base...)
		if responses != nil {
			params = append(params, member{"inputResponses", responses})
		}
		if state != nil {
			params = append(params, member{"requestState", state})
		}
		resp, err := s.client.call(ctx, cmd.method, cmd.target, params, headers)
		if err != nil {
			return s.fail(err)
		}
		if resp.Error != nil {
			// A header mismatch on Mcp-Param-* means the tool's definition
			// changed: list the tools again and retry once.
			if resp.Error.Code == int(mrtr.CodeHeaderMismatch) && cmd.method == wire.MethodToolsCall &&
				strings.Contains(resp.Error.Message, "Mcp-Param-") && !refreshed {
				refreshed = true
				fresh := s.findTool(ctx, cmd.target, true)
				if h := s.paramHeaders(fresh); !sameHeaders(h, headers) {
					fmt.Fprintf(s.env.stderr, "mcpcall: %s; the tool's x-mcp-header declarations changed, retrying\n", termLine(resp.Error.Message))
					headers = h
					continue
				}
			}
			return s.rpcError(cmd, resp, round)
		}
		var h resultHead
		if err := json.Unmarshal(resp.Result, &h); err != nil {
			return s.fail(transportErr("%s: the result is not a JSON object: %v", cmd.method, err))
		}
		switch h.ResultType {
		case "", wire.ResultComplete:
			s.out.final(cmd, resp.Result, round, 0)
			if cmd.method == wire.MethodToolsCall && h.IsError {
				fmt.Fprintln(s.env.stderr, "mcpcall: the tool reported an error (result with isError: true)")
				return exitRPCError
			}
			return exitOK
		case wire.ResultInputRequired:
		case "task":
			if !s.opts.task { // not declared: a server may not answer so
				return s.fail(transportErr("%s: unrecognised resultType %q", cmd.method, h.ResultType))
			}
			var v taskView
			if err := json.Unmarshal(resp.Result, &v); err != nil || v.TaskID == "" {
				return s.fail(transportErr("%s: a task result without taskId", cmd.method))
			}
			return s.followTask(ctx, cmd, v.TaskID, round)
		default:
			return s.fail(transportErr("%s: unrecognised resultType %q", cmd.method, h.ResultType))
		}
		names, values, err := orderedMembers(h.InputRequests)
		if err != nil {
			return s.fail(transportErr("%s: inputRequests is not an object: %v", cmd.method, err))
		}
		if len(names) == 0 && len(h.RequestState) == 0 {
			return s.fail(transportErr("%s: input_required with neither inputRequests nor requestState", cmd.method))
		}
		if len(h.RequestState) > 0 && h.RequestState[0] != '"' {
			fmt.Fprintf(s.env.stderr, "mcpcall: warning: requestState is %s, not a string; sent back as received\n", jsonKind(h.RequestState))
		}
		if round >= s.opts.maxRounds {
			s.out.roundLimit(cmd, round+1, names, values)
			fmt.Fprintf(s.env.stderr, "mcpcall: the server still asks for input after %d rounds; stopped (--max-rounds %d)\n", round, s.opts.maxRounds)
			return exitUsage
		}
		round++
		rec := &roundRecord{Type: "round", Round: round, Method: cmd.method, Target: cmd.target, RequestState: h.RequestState}
		s.out.roundStart(rec, len(names))
		answers := make([]member, 0, len(names))
		for i, key := range names {
			var req inputRequest
			if err := json.Unmarshal(values[i], &req); err != nil || req.Method == "" {
				return s.fail(transportErr("%s: inputRequests[%q] is not a {method, params} request", cmd.method, key))
			}
			rec.asked(key, values[i])
			s.out.asked(key, req)
			a, err := s.answers.answer(ctx, key, req)
			if err != nil {
				s.out.roundEnd(rec)
				return s.fail(err)
			}
			warns := answerWarnings(req, a.value)
			for _, w := range warns {
				fmt.Fprintf(s.env.stderr, "mcpcall: warning: [%s] %s; sent anyway\n", termLine(key), termLine(w))
			}
			rec.answered(key, a)
			s.out.answered(key, req, a)
			answers = append(answers, member{key, a.value})
		}
		s.out.roundEnd(rec)
		if len(names) == 0 {
			// Load shedding: nothing asked, retry with the state after a pause.
			select {
			case <-ctx.Done():
				return s.fail(transportErr("%s: %v", cmd.method, ctx.Err()))
			case <-time.After(loadSheddingPause):
			}
			responses = nil
		} else {
			responses, err = objectOf(answers)
			if err != nil {
				return s.fail(err)
			}
		}
		state = h.RequestState
	}
}

func sameHeaders(a, b map[string]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if w, ok := b[k]; !ok || w != v {
			return false
		}
	}
	return true
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
func (s *session) rpcError(cmd command, resp *response, rounds int) int {
	s.out.rpcError(cmd, resp, rounds)
	e := resp.Error
	w := s.env.stderr
	fmt.Fprintf(w, "mcpcall: JSON-RPC error %d: %s", e.Code, termLine(e.Message))
	if resp.HTTPStatus != 0 && resp.HTTPStatus != 200 {
		fmt.Fprintf(w, " (HTTP %d)", resp.HTTPStatus)
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
func errorHint(e *rpcError) string {
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

	asks, answers, sources []member
}

func (r *roundRecord) asked(key string, v json.RawMessage) {
	r.asks = append(r.asks, member{key, v})
}

func (r *roundRecord) answered(key string, a answer) {
	r.answers = append(r.answers, member{key, a.value})
	r.sources = append(r.sources, member{key, mustJSON(a.source)})
}

func (r *roundRecord) seal() {
	r.InputRequests, _ = objectOf(r.asks)
	r.InputResponses, _ = objectOf(r.answers)
	r.AnsweredBy, _ = objectOf(r.sources)
}

// textOf joins the text blocks of sampling content (one block or a list).
func textOf(content json.RawMessage) string {
	content = bytes.TrimSpace(content)
	var blocks []struct {
		Type string `json:"type"`
		Text string `json:"text"`
	}
	if len(content) > 0 && content[0] == '{' {
		content = append(append([]byte{'['}, content...), ']')
	}
	_ = json.Unmarshal(content, &blocks)
	var parts []string
	for _, b := range blocks {
		if b.Type == "text" {
			parts = append(parts, b.Text)
		} else {
			parts = append(parts, "["+b.Type+"]")
		}
	}
	return strings.Join(parts, " ")
}
