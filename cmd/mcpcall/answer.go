package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/mrtrkit/mrtrkit/client"
	"github.com/mrtrkit/mrtrkit/internal/wire"
	"github.com/mrtrkit/mrtrkit/mrtr"
)

// answerer answers the requests a server embeds in input_required results.
type answerer struct {
	terminal bool        // elicitations may be typed
	in       *lineReader // the terminal's input
	prompt   io.Writer   // where questions to the user go

	elicit    map[string]elicitAnswer // from --elicit-answers, by key or "*"
	elicitSrc string
	sampling  *samplingAnswers // from --sampling-answers
	model     *modelGate       // --model-url
	roots     []mrtr.Root      // --root
}

// inputRequest is one request embedded in an input_required result (or
// a task's): its method and its params, verbatim.
type inputRequest struct {
	Method string          `json:"method"`
	Params json.RawMessage `json:"params"`
}

// capabilities are the client capabilities the run declares: --capabilities
// when given (raw), else those the answerer can serve. The client adds
// the Tasks extension to the requests that need it (--task, tasks).
func (s *session) capabilities(raw string) (mrtr.ClientCapabilities, error) {
	var caps mrtr.ClientCapabilities
	if raw != "" {
		obj, err := parseJSONObject([]byte(raw), "--capabilities")
		if err != nil {
			return caps, err
		}
		if err := json.Unmarshal(obj, &caps); err != nil {
			return caps, &usageError{fmt.Sprintf("--capabilities: %v", err)}
		}
	} else {
		a := s.answers
		if a.terminal || a.elicit != nil {
			caps.Elicitation = &mrtr.ElicitCapability{Form: mrtr.Object{}, URL: mrtr.Object{}}
		}
		if len(a.roots) > 0 {
			caps.Roots = &mrtr.Object{}
		}
		if a.sampling != nil || a.model != nil {
			caps.Sampling = &mrtr.SamplingCapability{}
		}
	}
	return caps, nil
}

// answerOptions registers the answerer with the client: every kind of
// question reaches it (what the run declares is WithCapabilities'
// business), so that one it cannot answer fails with its own message.
func (s *session) answerOptions() []client.Option {
	caps, _ := s.capabilities("")
	return []client.Option{
		client.WithCapabilities(caps),
		client.OnElicitation(func(ctx context.Context, req *mrtr.ElicitRequest) (*mrtr.ElicitResult, error) {
			var r mrtr.ElicitResult
			return &r, s.answerTyped(ctx, wire.MethodElicit, req, &r)
		}),
		client.OnSampling(func(ctx context.Context, req *mrtr.SamplingRequest) (*mrtr.SamplingResult, error) {
			var r mrtr.SamplingResult
			return &r, s.answerTyped(ctx, wire.MethodCreateMessage, req, &r)
		}),
		client.OnRoots(func(ctx context.Context) (*mrtr.RootsResult, error) {
			var r mrtr.RootsResult
			return &r, s.answerTyped(ctx, wire.MethodListRoots, nil, &r)
		}),
	}
}

// answerTyped answers the input request the client is answering (its key
// from client.InputKey, its params as the server wrote them from the
// round) and decodes the answer into out.
func (s *session) answerTyped(ctx context.Context, method string, req, out any) error {
	key := client.InputKey(ctx)
	q := inputRequest{Method: method}
	if s.round != nil {
		for _, r := range s.round.Requests {
			if r.Key == key {
				q.Params = r.Params
			}
		}
	}
	if q.Params == nil && req != nil {
		q.Params, _ = json.Marshal(req)
	}
	a, err := s.answers.answer(ctx, key, q)
	if err != nil {
		return err
	}
	s.sources[key] = a.source
	if err := json.Unmarshal(a.value, out); err != nil {
		return &unansweredError{fmt.Sprintf("the answer to %q from %s does not decode: %v", key, a.source, err)}
	}
	return nil
}

// unansweredError is a question mcpcall has no way to answer.
type unansweredError struct{ msg string }

func (e *unansweredError) Error() string { return e.msg }

// answer is one answer and where it came from.
type answer struct {
	value  json.RawMessage
	source string
}

// answer answers the embedded request key.
func (a *answerer) answer(ctx context.Context, key string, req inputRequest) (answer, error) {
	switch req.Method {
	case wire.MethodElicit:
		return a.answerElicit(key, req.Params)
	case wire.MethodCreateMessage:
		return a.answerSampling(ctx, key, req.Params)
	case wire.MethodListRoots:
		if len(a.roots) == 0 {
			return answer{}, &unansweredError{fmt.Sprintf("the server asked for the client's roots (%q), but no --root was given", key)}
		}
		v, err := json.Marshal(mrtr.RootsResult{Roots: a.roots})
		return answer{v, "--root"}, err
	}
	return answer{}, &unansweredError{fmt.Sprintf("the server embedded a request mcpcall does not know: %q (%s)", key, req.Method)}
}

// elicitAnswer is one entry of an --elicit-answers file.
type elicitAnswer struct {
	result  json.RawMessage // an ElicitResult as written
	content json.RawMessage // or form content, sent with action accept
}

// loadElicitAnswers reads an --elicit-answers file: an object from input
// key (or "*") to an ElicitResult ({"action":…}), to form content (any
// other object), or to "accept", "decline" or "cancel".
func loadElicitAnswers(path string) (map[string]elicitAnswer, error) {
	raw, err := readJSONFile(path, "--elicit-answers")
	if err != nil {
		return nil, err
	}
	what := "--elicit-answers " + path
	if raw[0] != '{' {
		return nil, fmt.Errorf("%s: must be a JSON object from input key (or \"*\") to an answer, not %s", what, jsonKind(raw))
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(raw, &m); err != nil {
		return nil, fmt.Errorf("%s: %v", what, err)
	}
	out := make(map[string]elicitAnswer, len(m))
	for k, v := range m {
		switch v[0] {
		case '"':
			var s string
			_ = json.Unmarshal(v, &s)
			if s != "accept" && s != "decline" && s != "cancel" {
				return nil, fmt.Errorf("%s: %q: a string answer must be \"accept\", \"decline\" or \"cancel\"", what, k)
			}
			out[k] = elicitAnswer{result: actionJSON(s)}
		case '{':
			var probe map[string]json.RawMessage
			if err := json.Unmarshal(v, &probe); err != nil {
				return nil, fmt.Errorf("%s: %q: %v", what, k, err)
			}
			if act, ok := probe["action"]; ok && isElicitResult(probe, act) {
				out[k] = elicitAnswer{result: v}
			} else {
				out[k] = elicitAnswer{content: v}
			}
		default:
			return nil, fmt.Errorf("%s: %q: an answer is an ElicitResult, form content (an object) or an action, not %s", what, k, jsonKind(v))
		}
	}
	return out, nil
}

// isElicitResult tells an ElicitResult from form content that happens to
// have a field named action: an ElicitResult has a string action and
// nothing but content and _meta besides.
func isElicitResult(probe map[string]json.RawMessage, act json.RawMessage) bool {
	if len(act) == 0 || act[0] != '"' {
		return false
	}
	for k := range probe {
		if k != "action" && k != "content" && k != "_meta" {
			return false
		}
	}
	return true
}

// elicitParams is the part of an elicitation request mcpcall reads.
type elicitParams struct {
	Mode            string          `json:"mode"`
	Message         string          `json:"message"`
	URL             string          `json:"url"`
	RequestedSchema json.RawMessage `json:"requestedSchema"`
}

func (a *answerer) answerElicit(key string, params json.RawMessage) (answer, error) {
	var p elicitParams
	if len(params) > 0 {
		if err := json.Unmarshal(params, &p); err != nil {
			return answer{}, &unansweredError{fmt.Sprintf("the elicitation request %q does not decode: %v", key, err)}
		}
	}
	if p.Mode == "url" {
		if _, problem := checkElicitURL(p.URL); problem != "" {
			fmt.Fprintf(a.prompt, "mcpcall: warning: elicitation %q asks the user to open a URL that %s: declined\n", key, problem)
			return answer{actionJSON("decline"), "mcpcall (URL refused)"}, nil
		}
	}
	if ea, ok := a.elicit[key]; ok {
		return ea.answer(key, p, a.elicitSrc)
	}
	if ea, ok := a.elicit["*"]; ok {
		return ea.answer(key, p, a.elicitSrc+` ("*")`)
	}
	if a.terminal {
		v, err := a.askUser(key, p)
		return answer{v, "terminal"}, err
	}
	if a.elicit != nil {
		return answer{}, &unansweredError{fmt.Sprintf("the server asked the user (elicitation %q), and %s has no answer for %q nor \"*\"", key, a.elicitSrc, key)}
	}
	return answer{}, &unansweredError{fmt.Sprintf("the server asked the user (elicitation %q), but stdin is not a terminal and no --elicit-answers file was given", key)}
}

func (ea elicitAnswer) answer(key string, p elicitParams, src string) (answer, error) {
	if ea.result != nil {
		return answer{ea.result, src}, nil
	}
	if p.Mode == "url" {
		return answer{}, &unansweredError{fmt.Sprintf("elicitation %q is in url mode, which takes an action, but the answer in %s is form content; write {\"action\":\"accept\"} for it", key, src)}
	}
	v, err := json.Marshal(map[string]json.RawMessage{"action": json.RawMessage(`"accept"`), "content": ea.content})
	return answer{v, src}, err
}

func (a *answerer) answerSampling(ctx context.Context, key string, params json.RawMessage) (answer, error) {
	if a.sampling != nil {
		v, ok, err := a.sampling.next(key)
		if err != nil {
			return answer{}, err
		}
		if ok {
			return answer{v, a.sampling.source(key)}, nil
		}
	}
	if a.model != nil {
		var r mrtr.SamplingRequest
		if err := json.Unmarshal(params, &r); err != nil {
			return answer{}, &unansweredError{fmt.Sprintf("the sampling request %q does not decode: %v", key, err)}
		}
		res, err := a.model.complete(ctx, key, &r)
		var ue *unansweredError
		if errors.As(err, &ue) {
			return answer{}, err
		}
		if err != nil {
			return answer{}, &unansweredError{fmt.Sprintf("sampling request %q: the model at --model-url failed: %v", key, err)}
		}
		v, err := json.Marshal(res)
		src := "--model-url"
		if res.Model != "" {
			src += " (" + res.Model + ")"
		}
		return answer{v, src}, err
	}
	if a.sampling != nil {
		return answer{}, &unansweredError{fmt.Sprintf("the server asked for a model completion (%q), and %s has no answer left for it", key, a.sampling.path)}
	}
	return answer{}, &unansweredError{fmt.Sprintf("the server asked for a model completion (%q), but neither --sampling-answers nor --model-url was given", key)}
}

// samplingAnswers are the answers of a --sampling-answers file.
type samplingAnswers struct {
	path  string
	byKey map[string]*answerQueue // by input key or "*"
	list  *answerQueue            // a top-level list
}

// answerQueue is a list used in order, or one answer used every time.
type answerQueue struct {
	items  []json.RawMessage
	repeat bool
	next   int
}

func (q *answerQueue) take() (json.RawMessage, bool) {
	if q.repeat {
		return q.items[0], true
	}
	if q.next >= len(q.items) {
		return nil, false
	}
	q.next++
	return q.items[q.next-1], true
}

// loadSamplingAnswers reads a --sampling-answers file: a list of answers
// used in order, or an object from input key (or "*") to an answer (used
// every time that key is asked) or a list of answers (used in order). An
// answer is a CreateMessageResult, or a string: the text of an assistant
// answer.
func loadSamplingAnswers(path string) (*samplingAnswers, error) {
	raw, err := readJSONFile(path, "--sampling-answers")
	if err != nil {
		return nil, err
	}
	what := "--sampling-answers " + path
	sa := &samplingAnswers{path: path}
	switch raw[0] {
	case '[':
		q, err := queueOf(raw, what, true)
		if err != nil {
			return nil, err
		}
		sa.list = q
	case '{':
		var m map[string]json.RawMessage
		if err := json.Unmarshal(raw, &m); err != nil {
			return nil, fmt.Errorf("%s: %v", what, err)
		}
		sa.byKey = make(map[string]*answerQueue, len(m))
		for k, v := range m {
			q, err := queueOf(v, fmt.Sprintf("%s: %q", what, k), false)
			if err != nil {
				return nil, err
			}
			sa.byKey[k] = q
		}
	default:
		return nil, fmt.Errorf("%s: must be a JSON object (input key → answer) or a list of answers, not %s", what, jsonKind(raw))
	}
	return sa, nil
}

// queueOf reads one answer or a list of them.
func queueOf(v json.RawMessage, what string, top bool) (*answerQueue, error) {
	if v[0] != '[' {
		a, err := samplingAnswer(v, what)
		if err != nil {
			return nil, err
		}
		return &answerQueue{items: []json.RawMessage{a}, repeat: true}, nil
	}
	var items []json.RawMessage
	if err := json.Unmarshal(v, &items); err != nil {
		return nil, fmt.Errorf("%s: %v", what, err)
	}
	if len(items) == 0 && !top {
		return nil, fmt.Errorf("%s: an empty list of answers", what)
	}
	q := &answerQueue{}
	for i, it := range items {
		a, err := samplingAnswer(it, fmt.Sprintf("%s[%d]", what, i))
		if err != nil {
			return nil, err
		}
		q.items = append(q.items, a)
	}
	return q, nil
}

// samplingAnswer checks one answer; a string becomes an assistant text
// answer. An object that decodes as a CreateMessageResult but is not a
// valid one is sent all the same (a server must cope with bad answers),
// with a warning; one that does not decode stops the call.
func samplingAnswer(v json.RawMessage, what string) (json.RawMessage, error) {
	switch v[0] {
	case '"':
		var s string
		_ = json.Unmarshal(v, &s)
		return json.Marshal(mrtr.SamplingResult{
			Role:       mrtr.RoleAssistant,
			Content:    []mrtr.SamplingContent{{Type: "text", Text: s}},
			Model:      "mcpcall-answers",
			StopReason: "endTurn",
		})
	case '{':
		return v, nil
	}
	return nil, fmt.Errorf("%s: an answer is a CreateMessageResult object or a string, not %s", what, jsonKind(v))
}

// next returns the answer to key, if the file has one left.
func (sa *samplingAnswers) next(key string) (json.RawMessage, bool, error) {
	if q, ok := sa.byKey[key]; ok {
		if v, ok := q.take(); ok {
			return v, true, nil
		}
		return nil, false, &unansweredError{fmt.Sprintf("--sampling-answers %s: all %d answers for %q are used", sa.path, len(q.items), key)}
	}
	if q, ok := sa.byKey["*"]; ok {
		if v, ok := q.take(); ok {
			return v, true, nil
		}
	}
	if sa.list != nil {
		if v, ok := sa.list.take(); ok {
			return v, true, nil
		}
	}
	return nil, false, nil
}

func (sa *samplingAnswers) source(key string) string {
	if _, ok := sa.byKey[key]; ok {
		return "--sampling-answers"
	}
	if _, ok := sa.byKey["*"]; ok {
		return `--sampling-answers ("*")`
	}
	return fmt.Sprintf("--sampling-answers (#%d of the list)", sa.list.next)
}

// answerWarnings lists what looks wrong in an answer: such answers are
// sent anyway (a server must cope with them), with a warning.
func answerWarnings(req inputRequest, v json.RawMessage) []string {
	switch req.Method {
	case wire.MethodCreateMessage:
		var r mrtr.SamplingResult
		if err := json.Unmarshal(v, &r); err != nil {
			return []string{"the answer is not a CreateMessageResult: " + err.Error()}
		}
		if err := r.Validate(); err != nil {
			return []string{"the answer is not a valid CreateMessageResult: " + err.Error()}
		}
	case wire.MethodElicit:
		var r struct {
			Action  string                     `json:"action"`
			Content map[string]json.RawMessage `json:"content"`
		}
		if err := json.Unmarshal(v, &r); err != nil {
			return []string{"the answer is not an ElicitResult: " + err.Error()}
		}
		if r.Action != "accept" && r.Action != "decline" && r.Action != "cancel" {
			return []string{fmt.Sprintf("the answer's action %q is not accept, decline or cancel", r.Action)}
		}
		var p elicitParams
		_ = json.Unmarshal(req.Params, &p)
		if p.Mode == "url" || r.Action != "accept" {
			if r.Content != nil {
				return []string{"content is sent only when a form is accepted"}
			}
			return nil
		}
		fields, err := formFields(p.RequestedSchema)
		if err != nil {
			return nil
		}
		var warns []string
		known := map[string]bool{}
		for _, f := range fields {
			known[f.name] = true
			val, ok := r.Content[f.name]
			if !ok {
				if f.required {
					warns = append(warns, fmt.Sprintf("the required field %q is missing", f.name))
				}
				continue
			}
			if msg := checkValue(f.schema, val); msg != "" {
				warns = append(warns, fmt.Sprintf("field %q: %s", f.name, msg))
			}
		}
		for _, k := range sortedKeys(r.Content) {
			if !known[k] {
				warns = append(warns, fmt.Sprintf("field %q is not in the form", k))
			}
		}
		return warns
	}
	return nil
}

// checkValue says what is wrong with a form value, or "".
func checkValue(s fieldSchema, v json.RawMessage) string {
	if len(v) == 0 {
		return ""
	}
	kind := jsonKind(v)
	switch s.Type {
	case "string":
		var str string
		if json.Unmarshal(v, &str) != nil {
			return "expected a string, got " + kind
		}
		if cs := s.choices(); len(cs) > 0 {
			for _, c := range cs {
				if c.value == str {
					return ""
				}
			}
			return fmt.Sprintf("%q is not one of the choices", str)
		}
	case "number", "integer":
		var f float64
		if json.Unmarshal(v, &f) != nil {
			return "expected a number, got " + kind
		}
		if s.Type == "integer" && f != float64(int64(f)) {
			return "expected an integer"
		}
	case "boolean":
		if kind != "a boolean" {
			return "expected a boolean, got " + kind
		}
	case "array":
		if kind != "an array" {
			return "expected a list, got " + kind
		}
	}
	return ""
}

// actionJSON is an ElicitResult that only says what the user did.
func actionJSON(action string) json.RawMessage {
	return json.RawMessage(`{"action":"` + action + `"}`)
}

// oneLine shortens s to one line of at most n characters, white space
// folded and unsafe characters escaped (termLine).
func oneLine(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	r := []rune(s)
	if len(r) > n {
		return termLine(string(r[:n])) + "…"
	}
	return termLine(s)
}
