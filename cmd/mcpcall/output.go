package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"strings"

	"github.com/mrtrkit/mrtrkit/client"
	"github.com/mrtrkit/mrtrkit/internal/wire"
	"github.com/mrtrkit/mrtrkit/mrtr"
)

// printer writes what a run does: readable text, or with -json one JSON
// object per line (each round, then the result or the error) on stdout.
// Notifications go to stderr either way.
type printer struct {
	json bool
	w    io.Writer // stdout
	errw io.Writer // stderr
}

// line prints one JSON object on its own line.
func (p *printer) line(v any) {
	b, err := encodeJSON(v)
	if err != nil {
		fmt.Fprintf(p.errw, "mcpcall: cannot encode output: %v\n", err)
		return
	}
	p.w.Write(append(b, '\n'))
}

// encodeJSON encodes v for output: no HTML escaping, no newline.
func encodeJSON(v any) ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	err := enc.Encode(v)
	return bytes.TrimSuffix(b.Bytes(), []byte("\n")), err
}

// pretty indents JSON for reading.
func pretty(raw json.RawMessage, indent string) string {
	var b bytes.Buffer
	if err := json.Indent(&b, raw, indent, "  "); err != nil {
		return string(raw)
	}
	return b.String()
}

// notification reports a notification as it arrives.
func (p *printer) notification(method string, params json.RawMessage) {
	if p.json {
		p.lineTo(p.errw, struct {
			Type   string          `json:"type"`
			Method string          `json:"method"`
			Params json.RawMessage `json:"params"`
		}{"notification", method, rawOrNull(params)})
		return
	}
	switch method {
	case "notifications/progress":
		var n struct {
			Progress float64  `json:"progress"`
			Total    *float64 `json:"total"`
			Message  string   `json:"message"`
		}
		_ = json.Unmarshal(params, &n)
		s := fmt.Sprintf("%g", n.Progress)
		if n.Total != nil {
			s += fmt.Sprintf("/%g", *n.Total)
		}
		if n.Message != "" {
			s += " " + termLine(n.Message)
		}
		fmt.Fprintf(p.errw, "progress: %s\n", s)
	case "notifications/message":
		var n struct {
			Level  string          `json:"level"`
			Logger string          `json:"logger"`
			Data   json.RawMessage `json:"data"`
		}
		_ = json.Unmarshal(params, &n)
		data := string(n.Data)
		var s string
		if json.Unmarshal(n.Data, &s) == nil {
			data = s
		}
		if n.Logger != "" {
			fmt.Fprintf(p.errw, "log [%s] %s: %s\n", termLine(n.Level), termLine(n.Logger), termLine(data))
		} else {
			fmt.Fprintf(p.errw, "log [%s] %s\n", termLine(n.Level), termLine(data))
		}
	default:
		fmt.Fprintf(p.errw, "notification %s %s\n", termLine(method), termLine(string(params)))
	}
}

func (p *printer) lineTo(w io.Writer, v any) {
	b, err := encodeJSON(v)
	if err == nil {
		w.Write(append(b, '\n'))
	}
}

func rawOrNull(r json.RawMessage) json.RawMessage {
	if len(r) == 0 {
		return json.RawMessage("null")
	}
	return r
}

// roundStart opens the report of a round.
func (p *printer) roundStart(r *roundRecord, n int) {
	if p.json {
		return
	}
	what := fmt.Sprintf("%d request", n)
	if n != 1 {
		what += "s"
	}
	if n == 0 {
		what = "no request: retrying with the state (load shedding)"
	}
	fmt.Fprintf(p.w, "── round %d: the server needs input (%s) ──\n", r.Round, what)
}

// asked reports one embedded request.
func (p *printer) asked(key string, req inputRequest) {
	if p.json {
		return
	}
	w := p.w
	key = termLine(key)
	switch req.Method {
	case wire.MethodCreateMessage:
		var r struct {
			Messages []struct {
				Role    string          `json:"role"`
				Content json.RawMessage `json:"content"`
			} `json:"messages"`
			SystemPrompt     string          `json:"systemPrompt"`
			MaxTokens        int             `json:"maxTokens"`
			ModelPreferences json.RawMessage `json:"modelPreferences"`
		}
		_ = json.Unmarshal(req.Params, &r)
		fmt.Fprintf(w, "[%s] sampling/createMessage (maxTokens %d)\n", key, r.MaxTokens)
		if len(r.ModelPreferences) > 0 {
			fmt.Fprintf(w, "  modelPreferences: %s\n", termLine(string(r.ModelPreferences)))
		}
		if r.SystemPrompt != "" {
			fmt.Fprintf(w, "  system: %s\n", clip(r.SystemPrompt))
		}
		for _, m := range r.Messages {
			fmt.Fprintf(w, "  %s: %s\n", termLine(m.Role), clip(textOf(m.Content)))
		}
	case wire.MethodElicit:
		var e elicitParams
		_ = json.Unmarshal(req.Params, &e)
		if e.Mode == "url" {
			fmt.Fprintf(w, "[%s] elicitation/create (url): %s\n  url: %s\n", key, oneLine(e.Message, 200), termLine(e.URL))
			return
		}
		fmt.Fprintf(w, "[%s] elicitation/create (form): %s\n", key, oneLine(e.Message, 200))
		if fields, err := formFields(e.RequestedSchema); err == nil {
			var fs []string
			for _, f := range fields {
				s := termLine(f.name) + " (" + termLine(f.schema.Type)
				if f.required {
					s += ", required"
				}
				fs = append(fs, s+")")
			}
			fmt.Fprintf(w, "  fields: %s\n", strings.Join(fs, ", "))
		}
	case wire.MethodListRoots:
		fmt.Fprintf(w, "[%s] roots/list\n", key)
	default:
		fmt.Fprintf(w, "[%s] %s %s\n", key, termLine(req.Method), termLine(string(req.Params)))
	}
}

// clip shortens a prompt for the round report.
func clip(s string) string {
	const n = 160
	one := oneLine(s, n)
	if r := []rune(strings.Join(strings.Fields(s), " ")); len(r) > n {
		return fmt.Sprintf("%s (%d characters)", one, len([]rune(s)))
	}
	return one
}

// answered reports the answer to one embedded request.
func (p *printer) answered(key string, req inputRequest, a answer) {
	if p.json {
		return
	}
	var what string
	switch req.Method {
	case wire.MethodCreateMessage:
		var r struct {
			Role       string          `json:"role"`
			Model      string          `json:"model"`
			StopReason string          `json:"stopReason"`
			Content    json.RawMessage `json:"content"`
		}
		_ = json.Unmarshal(a.value, &r)
		what = fmt.Sprintf("%s (model %s", termLine(r.Role), termLine(r.Model))
		if r.StopReason != "" {
			what += ", " + termLine(r.StopReason)
		}
		what += "): " + clip(textOf(r.Content))
	case wire.MethodElicit:
		var r struct {
			Action  string          `json:"action"`
			Content json.RawMessage `json:"content"`
		}
		_ = json.Unmarshal(a.value, &r)
		what = termLine(r.Action)
		if len(r.Content) > 0 {
			what += " " + oneLine(string(r.Content), 200)
		}
	case wire.MethodListRoots:
		var r mrtr.RootsResult
		_ = json.Unmarshal(a.value, &r)
		var uris []string
		for _, root := range r.Roots {
			uris = append(uris, root.URI)
		}
		what = termLine(strings.Join(uris, ", "))
	default:
		what = termLine(string(a.value))
	}
	fmt.Fprintf(p.w, "  → answered from %s: %s\n", termLine(a.source), what)
}

// roundEnd closes the report of a round.
func (p *printer) roundEnd(r *roundRecord) {
	if p.json {
		p.line(r)
		return
	}
	if len(r.RequestState) > 0 {
		fmt.Fprintf(p.w, "requestState: %d bytes, sent back unchanged\n", len(r.RequestState))
	}
}

// roundLimit reports the round that was not answered.
func (p *printer) roundLimit(cmd command, r *client.Round) {
	keys := make([]string, len(r.Requests))
	asks := map[string]json.RawMessage{}
	for i, q := range r.Requests {
		keys[i] = q.Key
		asks[q.Key] = q.Raw
	}
	if p.json {
		obj, _ := encodeJSON(asks)
		p.line(struct {
			Type          string          `json:"type"`
			Round         int             `json:"round"`
			Method        string          `json:"method"`
			Target        string          `json:"target,omitempty"`
			InputRequests json.RawMessage `json:"inputRequests"`
		}{"round_limit", r.N, cmd.method, cmd.target, obj})
		return
	}
	fmt.Fprintf(p.w, "── round %d: the server needs input again: %s; not answered (round limit) ──\n", r.N, termLine(strings.Join(keys, ", ")))
}

// failure reports a failure that is not a JSON-RPC error (-json only; the
// message goes to stderr in both modes).
func (p *printer) failure(kind, msg string) {
	if p.json {
		p.line(struct {
			Type    string `json:"type"`
			Message string `json:"message"`
		}{kind, msg})
	}
}

// rpcError reports a JSON-RPC error (-json only; the message goes to
// stderr in both modes).
func (p *printer) rpcError(cmd command, status int, e *client.RPCError, rounds int) {
	if !p.json {
		return
	}
	p.line(struct {
		Type       string           `json:"type"`
		Method     string           `json:"method"`
		Target     string           `json:"target,omitempty"`
		Rounds     int              `json:"rounds"`
		HTTPStatus int              `json:"httpStatus"`
		Error      *client.RPCError `json:"error"`
	}{"error", cmd.method, cmd.target, rounds, status, e})
}

// final prints a complete result. page numbers the pages of a list (0
// for other methods).
func (p *printer) final(cmd command, result json.RawMessage, rounds, page int) {
	if p.json {
		v := struct {
			Type   string          `json:"type"`
			Method string          `json:"method"`
			Target string          `json:"target,omitempty"`
			Rounds int             `json:"rounds"`
			Page   int             `json:"page,omitempty"`
			Result json.RawMessage `json:"result"`
		}{"result", cmd.method, cmd.target, rounds, page, result}
		p.line(v)
		return
	}
	if rounds > 0 {
		fmt.Fprintf(p.w, "── result (after %d round", rounds)
		if rounds != 1 {
			fmt.Fprint(p.w, "s")
		}
		fmt.Fprintln(p.w, ") ──")
	}
	switch cmd.method {
	case wire.MethodDiscover:
		p.discover(result)
	case wire.MethodToolsList:
		p.toolsList(result)
	case wire.MethodPromptsList:
		p.promptsList(result)
	case wire.MethodResourcesList:
		p.resourcesList(result)
	case wire.MethodTemplatesList:
		p.templatesList(result)
	case wire.MethodToolsCall:
		p.toolResult(result)
	case wire.MethodPromptsGet:
		p.promptResult(result)
	case wire.MethodResourcesRead:
		p.resourceResult(result)
	default:
		fmt.Fprintln(p.w, termText(pretty(result, "")))
	}
}

type implementation struct {
	Name    string `json:"name"`
	Version string `json:"version"`
	Title   string `json:"title"`
}

func (p *printer) discover(result json.RawMessage) {
	var r struct {
		SupportedVersions []string        `json:"supportedVersions"`
		Capabilities      json.RawMessage `json:"capabilities"`
		Instructions      string          `json:"instructions"`
		TTLMs             *int64          `json:"ttlMs"`
		CacheScope        string          `json:"cacheScope"`
		Meta              struct {
			ServerInfo *implementation `json:"io.modelcontextprotocol/serverInfo"`
		} `json:"_meta"`
	}
	_ = json.Unmarshal(result, &r)
	w := p.w
	if si := r.Meta.ServerInfo; si != nil {
		fmt.Fprintf(w, "server:       %s %s", termLine(si.Name), termLine(si.Version))
		if si.Title != "" {
			fmt.Fprintf(w, " (%s)", termLine(si.Title))
		}
		fmt.Fprintln(w)
	} else {
		fmt.Fprintln(w, "server:       (no serverInfo in _meta)")
	}
	fmt.Fprintf(w, "versions:     %s\n", termLine(strings.Join(r.SupportedVersions, ", ")))
	var caps map[string]json.RawMessage
	_ = json.Unmarshal(r.Capabilities, &caps)
	var cs []string
	for _, k := range sortedKeys(caps) {
		if v := string(caps[k]); v != "{}" {
			cs = append(cs, k+" "+v)
		} else {
			cs = append(cs, k)
		}
	}
	fmt.Fprintf(w, "capabilities: %s\n", termLine(strings.Join(cs, ", ")))
	p.cache(r.TTLMs, r.CacheScope)
	if r.Instructions != "" {
		fmt.Fprintf(w, "instructions:\n%s\n", indentText(r.Instructions, "  "))
	}
}

func (p *printer) cache(ttl *int64, scope string) {
	if ttl == nil && scope == "" {
		return
	}
	t := "?"
	if ttl != nil {
		t = fmt.Sprintf("%d ms", *ttl)
	}
	fmt.Fprintf(p.w, "cache:        ttl %s, scope %s\n", t, termLine(scope))
}

// indentText renders multi-line server text (termText), each line
// indented.
func indentText(s, indent string) string {
	lines := strings.Split(strings.TrimRight(termText(s), "\n"), "\n")
	for i, l := range lines {
		lines[i] = indent + l
	}
	return strings.Join(lines, "\n")
}

func (p *printer) toolsList(result json.RawMessage) {
	var r struct {
		Tools []struct {
			Name        string          `json:"name"`
			Title       string          `json:"title"`
			Description string          `json:"description"`
			InputSchema json.RawMessage `json:"inputSchema"`
			Annotations *struct {
				Title           string `json:"title"`
				ReadOnlyHint    *bool  `json:"readOnlyHint"`
				DestructiveHint *bool  `json:"destructiveHint"`
				IdempotentHint  *bool  `json:"idempotentHint"`
				OpenWorldHint   *bool  `json:"openWorldHint"`
			} `json:"annotations"`
			OutputSchema json.RawMessage `json:"outputSchema"`
		} `json:"tools"`
		TTLMs      *int64 `json:"ttlMs"`
		CacheScope string `json:"cacheScope"`
	}
	_ = json.Unmarshal(result, &r)
	w := p.w
	for _, t := range r.Tools {
		title := t.Title
		if title == "" && t.Annotations != nil {
			title = t.Annotations.Title
		}
		fmt.Fprint(w, termLine(t.Name))
		if title != "" {
			fmt.Fprintf(w, " — %s", termLine(title))
		}
		fmt.Fprintln(w)
		if t.Description != "" {
			fmt.Fprintf(w, "%s\n", indentText(t.Description, "    "))
		}
		for _, a := range schemaArgs(t.InputSchema) {
			fmt.Fprintf(w, "    · %s\n", a)
		}
		decls, problems := headerDecls(t.InputSchema)
		for _, d := range decls {
			fmt.Fprintf(w, "    header Mcp-Param-%s ← %s\n", termLine(d.Name), termLine(strings.Join(d.Path, ".")))
		}
		for _, pr := range problems {
			fmt.Fprintf(w, "    warning: %s (a conforming client would not offer this tool)\n", termLine(pr))
		}
		if a := t.Annotations; a != nil {
			var hints []string
			for _, h := range []struct {
				name string
				v    *bool
			}{{"readOnly", a.ReadOnlyHint}, {"destructive", a.DestructiveHint}, {"idempotent", a.IdempotentHint}, {"openWorld", a.OpenWorldHint}} {
				if h.v != nil {
					hints = append(hints, fmt.Sprintf("%s=%v", h.name, *h.v))
				}
			}
			if len(hints) > 0 {
				fmt.Fprintf(w, "    hints: %s\n", strings.Join(hints, ", "))
			}
		}
		if len(t.OutputSchema) > 0 {
			fmt.Fprintf(w, "    output: %s\n", oneLine(string(t.OutputSchema), 120))
		}
	}
	if len(r.Tools) == 0 {
		fmt.Fprintln(w, "(no tools)")
	}
	p.cache(r.TTLMs, r.CacheScope)
}

// schemaArgs describes the top-level properties of an input schema.
func schemaArgs(schema json.RawMessage) []string {
	var s struct {
		Properties json.RawMessage `json:"properties"`
		Required   []string        `json:"required"`
	}
	if json.Unmarshal(schema, &s) != nil {
		return nil
	}
	req := map[string]bool{}
	for _, r := range s.Required {
		req[r] = true
	}
	names, values, err := orderedMembers(s.Properties)
	if err != nil {
		return nil
	}
	var out []string
	for i, n := range names {
		var f struct {
			Type        any    `json:"type"`
			Description string `json:"description"`
			Enum        []any  `json:"enum"`
			Ref         string `json:"$ref"`
			Default     any    `json:"default"`
		}
		_ = json.Unmarshal(values[i], &f)
		typ := ""
		switch t := f.Type.(type) {
		case string:
			typ = t
		case []any:
			var ts []string
			for _, x := range t {
				ts = append(ts, fmt.Sprint(x))
			}
			typ = strings.Join(ts, "|")
		}
		if typ == "" && f.Ref != "" {
			typ = f.Ref
		}
		var facts []string
		if typ != "" {
			facts = append(facts, typ)
		}
		if req[n] {
			facts = append(facts, "required")
		}
		if len(f.Enum) > 0 {
			b, _ := json.Marshal(f.Enum)
			facts = append(facts, "one of "+string(b))
		}
		d := n
		if len(facts) > 0 {
			d += " (" + strings.Join(facts, ", ") + ")"
		}
		if f.Description != "" {
			d += ": " + oneLine(f.Description, 120)
		}
		out = append(out, termLine(d))
	}
	return out
}

func (p *printer) promptsList(result json.RawMessage) {
	var r struct {
		Prompts []struct {
			Name        string `json:"name"`
			Title       string `json:"title"`
			Description string `json:"description"`
			Arguments   []struct {
				Name        string `json:"name"`
				Description string `json:"description"`
				Required    bool   `json:"required"`
			} `json:"arguments"`
		} `json:"prompts"`
		TTLMs      *int64 `json:"ttlMs"`
		CacheScope string `json:"cacheScope"`
	}
	_ = json.Unmarshal(result, &r)
	for _, pr := range r.Prompts {
		fmt.Fprint(p.w, termLine(pr.Name))
		if pr.Title != "" {
			fmt.Fprintf(p.w, " — %s", termLine(pr.Title))
		}
		fmt.Fprintln(p.w)
		if pr.Description != "" {
			fmt.Fprintf(p.w, "%s\n", indentText(pr.Description, "    "))
		}
		for _, a := range pr.Arguments {
			s := termLine(a.Name)
			if a.Required {
				s += " (required)"
			}
			if a.Description != "" {
				s += ": " + oneLine(a.Description, 120)
			}
			fmt.Fprintf(p.w, "    · %s\n", s)
		}
	}
	if len(r.Prompts) == 0 {
		fmt.Fprintln(p.w, "(no prompts)")
	}
	p.cache(r.TTLMs, r.CacheScope)
}

func (p *printer) resourcesList(result json.RawMessage) {
	var r struct {
		Resources []struct {
			URI         string `json:"uri"`
			Name        string `json:"name"`
			Title       string `json:"title"`
			Description string `json:"description"`
			MIMEType    string `json:"mimeType"`
			Size        *int64 `json:"size"`
		} `json:"resources"`
		TTLMs      *int64 `json:"ttlMs"`
		CacheScope string `json:"cacheScope"`
	}
	_ = json.Unmarshal(result, &r)
	for _, res := range r.Resources {
		fmt.Fprintf(p.w, "%s  %s", termLine(res.URI), termLine(res.Name))
		if res.Title != "" {
			fmt.Fprintf(p.w, " — %s", termLine(res.Title))
		}
		if res.MIMEType != "" {
			fmt.Fprintf(p.w, " (%s)", termLine(res.MIMEType))
		}
		if res.Size != nil {
			fmt.Fprintf(p.w, " %d bytes", *res.Size)
		}
		fmt.Fprintln(p.w)
		if res.Description != "" {
			fmt.Fprintf(p.w, "%s\n", indentText(res.Description, "    "))
		}
	}
	if len(r.Resources) == 0 {
		fmt.Fprintln(p.w, "(no resources)")
	}
	p.cache(r.TTLMs, r.CacheScope)
}

func (p *printer) templatesList(result json.RawMessage) {
	var r struct {
		Templates []struct {
			URITemplate string `json:"uriTemplate"`
			Name        string `json:"name"`
			Title       string `json:"title"`
			Description string `json:"description"`
			MIMEType    string `json:"mimeType"`
		} `json:"resourceTemplates"`
		TTLMs      *int64 `json:"ttlMs"`
		CacheScope string `json:"cacheScope"`
	}
	_ = json.Unmarshal(result, &r)
	for _, t := range r.Templates {
		fmt.Fprintf(p.w, "%s  %s", termLine(t.URITemplate), termLine(t.Name))
		if t.Title != "" {
			fmt.Fprintf(p.w, " — %s", termLine(t.Title))
		}
		if t.MIMEType != "" {
			fmt.Fprintf(p.w, " (%s)", termLine(t.MIMEType))
		}
		fmt.Fprintln(p.w)
		if t.Description != "" {
			fmt.Fprintf(p.w, "%s\n", indentText(t.Description, "    "))
		}
	}
	if len(r.Templates) == 0 {
		fmt.Fprintln(p.w, "(no resource templates)")
	}
	p.cache(r.TTLMs, r.CacheScope)
}

// block is a content block of a result.
type block struct {
	Type     string          `json:"type"`
	Text     string          `json:"text"`
	Data     string          `json:"data"`
	MIMEType string          `json:"mimeType"`
	URI      string          `json:"uri"`
	Name     string          `json:"name"`
	Resource json.RawMessage `json:"resource"`
}

// resourceContents is one entry of a read result or an embedded resource.
type resourceContents struct {
	URI      string  `json:"uri"`
	MIMEType string  `json:"mimeType"`
	Text     *string `json:"text"`
	Blob     *string `json:"blob"`
}

func (p *printer) printBlock(b block, indent string) {
	w := p.w
	switch b.Type {
	case "text":
		fmt.Fprintln(w, indentText(b.Text, indent))
	case "image", "audio":
		fmt.Fprintf(w, "%s[%s %s, %d bytes of base64]\n", indent, b.Type, termLine(b.MIMEType), len(b.Data))
	case "resource_link":
		fmt.Fprintf(w, "%s[resource link %s", indent, termLine(b.URI))
		if b.Name != "" {
			fmt.Fprintf(w, " %q", b.Name)
		}
		if b.MIMEType != "" {
			fmt.Fprintf(w, " (%s)", termLine(b.MIMEType))
		}
		fmt.Fprintln(w, "]")
	case "resource":
		var rc resourceContents
		_ = json.Unmarshal(b.Resource, &rc)
		p.printContents(rc, indent)
	default:
		fmt.Fprintf(w, "%s[%s block]\n", indent, termLine(b.Type))
	}
}

func (p *printer) printContents(rc resourceContents, indent string) {
	w := p.w
	fmt.Fprintf(w, "%s[resource %s", indent, termLine(rc.URI))
	if rc.MIMEType != "" {
		fmt.Fprintf(w, " (%s)", termLine(rc.MIMEType))
	}
	switch {
	case rc.Text != nil:
		fmt.Fprintln(w, "]")
		fmt.Fprintln(w, indentText(*rc.Text, indent))
	case rc.Blob != nil:
		fmt.Fprintf(w, ", %d bytes of base64]\n", len(*rc.Blob))
	default:
		fmt.Fprintln(w, "]")
	}
}

func (p *printer) toolResult(result json.RawMessage) {
	var r struct {
		Content           []block         `json:"content"`
		StructuredContent json.RawMessage `json:"structuredContent"`
		IsError           bool            `json:"isError"`
	}
	_ = json.Unmarshal(result, &r)
	if r.IsError {
		fmt.Fprintln(p.w, "error result (isError: true):")
	}
	for _, b := range r.Content {
		p.printBlock(b, "")
	}
	if len(r.StructuredContent) > 0 && string(r.StructuredContent) != "null" {
		fmt.Fprintf(p.w, "structuredContent:\n%s\n", termText(pretty(r.StructuredContent, "")))
	}
}

func (p *printer) promptResult(result json.RawMessage) {
	var r struct {
		Description string `json:"description"`
		Messages    []struct {
			Role    string `json:"role"`
			Content block  `json:"content"`
		} `json:"messages"`
	}
	_ = json.Unmarshal(result, &r)
	if r.Description != "" {
		fmt.Fprintf(p.w, "description: %s\n", termLine(r.Description))
	}
	for _, m := range r.Messages {
		fmt.Fprintf(p.w, "[%s]\n", termLine(m.Role))
		p.printBlock(m.Content, "  ")
	}
}

func (p *printer) resourceResult(result json.RawMessage) {
	var r struct {
		Contents   []resourceContents `json:"contents"`
		TTLMs      *int64             `json:"ttlMs"`
		CacheScope string             `json:"cacheScope"`
	}
	_ = json.Unmarshal(result, &r)
	for _, c := range r.Contents {
		p.printContents(c, "")
	}
	p.cache(r.TTLMs, r.CacheScope)
}
