package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"net/mail"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"
)

// lineReader reads the user's answers line by line.
type lineReader struct{ r *bufio.Reader }

func newLineReader(r io.Reader) *lineReader {
	if r == nil {
		r = strings.NewReader("")
	}
	return &lineReader{bufio.NewReader(r)}
}

// readLine returns the next line without its end; io.EOF when the input
// ended before any character of it.
func (l *lineReader) readLine() (string, error) {
	s, err := l.r.ReadString('\n')
	if err == io.EOF && s != "" {
		err = nil
	}
	return strings.TrimRight(s, "\r\n"), err
}

// choice is one option of an enum field.
type choice struct {
	value string
	title string
}

// fieldSchema is a primitive schema of an elicitation form field.
type fieldSchema struct {
	Type        string          `json:"type"`
	Title       string          `json:"title"`
	Description string          `json:"description"`
	Enum        []string        `json:"enum"`
	EnumNames   []string        `json:"enumNames"`
	OneOf       []constTitle    `json:"oneOf"`
	AnyOf       []constTitle    `json:"anyOf"`
	Items       *fieldSchema    `json:"items"`
	Default     json.RawMessage `json:"default"`
	MinLength   *int            `json:"minLength"`
	MaxLength   *int            `json:"maxLength"`
	Minimum     *float64        `json:"minimum"`
	Maximum     *float64        `json:"maximum"`
	MinItems    *int            `json:"minItems"`
	MaxItems    *int            `json:"maxItems"`
	Format      string          `json:"format"`
	Pattern     string          `json:"pattern"`
}

type constTitle struct {
	Const string `json:"const"`
	Title string `json:"title"`
}

// choices lists the options of an enum schema, nil for other schemas.
func (f *fieldSchema) choices() []choice {
	var cs []choice
	switch {
	case len(f.OneOf) > 0:
		for _, o := range f.OneOf {
			cs = append(cs, choice{o.Const, o.Title})
		}
	case len(f.AnyOf) > 0:
		for _, o := range f.AnyOf {
			cs = append(cs, choice{o.Const, o.Title})
		}
	case len(f.Enum) > 0:
		for i, v := range f.Enum {
			c := choice{value: v}
			if i < len(f.EnumNames) {
				c.title = f.EnumNames[i]
			}
			cs = append(cs, c)
		}
	}
	return cs
}

// field is one field of the form, in schema order.
type field struct {
	name     string
	schema   fieldSchema
	raw      json.RawMessage
	required bool
}

// formFields reads the requested schema's properties in the order the
// server wrote them.
func formFields(schema json.RawMessage) ([]field, error) {
	var s struct {
		Properties json.RawMessage `json:"properties"`
		Required   []string        `json:"required"`
	}
	if len(schema) == 0 {
		return nil, errors.New("the form has no requestedSchema")
	}
	if err := json.Unmarshal(schema, &s); err != nil {
		return nil, fmt.Errorf("requestedSchema: %v", err)
	}
	req := map[string]bool{}
	for _, r := range s.Required {
		req[r] = true
	}
	names, values, err := orderedMembers(s.Properties)
	if err != nil {
		return nil, fmt.Errorf("requestedSchema.properties: %v", err)
	}
	fields := make([]field, 0, len(names))
	for i, n := range names {
		f := field{name: n, raw: values[i], required: req[n]}
		if err := json.Unmarshal(values[i], &f.schema); err != nil {
			return nil, fmt.Errorf("requestedSchema.properties.%s: %v", n, err)
		}
		fields = append(fields, f)
	}
	return fields, nil
}

// orderedMembers returns the members of a JSON object in order.
func orderedMembers(obj json.RawMessage) ([]string, []json.RawMessage, error) {
	if len(bytes.TrimSpace(obj)) == 0 || string(bytes.TrimSpace(obj)) == "null" {
		return nil, nil, nil
	}
	dec := json.NewDecoder(bytes.NewReader(obj))
	t, err := dec.Token()
	if err != nil {
		return nil, nil, err
	}
	if d, ok := t.(json.Delim); !ok || d != '{' {
		return nil, nil, errors.New("not an object")
	}
	var names []string
	var values []json.RawMessage
	for dec.More() {
		t, err := dec.Token()
		if err != nil {
			return nil, nil, err
		}
		name, _ := t.(string)
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return nil, nil, err
		}
		names = append(names, name)
		values = append(values, v)
	}
	return names, values, nil
}

// askUser answers an elicitation at the terminal.
func (a *answerer) askUser(key string, p elicitParams) (json.RawMessage, error) {
	w := a.prompt
	eof := func() error {
		return &unansweredError{fmt.Sprintf("stdin ended while answering elicitation %q", key)}
	}
	if p.Mode == "url" {
		// answerElicit declined the URLs checkElicitURL refuses, so this
		// one parses, has a host, and holds no space, control or
		// invisible character: the host line below always prints, and
		// is the CLI's own.
		host, _ := checkElicitURL(p.URL)
		fmt.Fprintf(w, "\n? The server asks you to open a URL (elicitation %q):\n", key)
		fmt.Fprintf(w, "  %s\n  URL: %s\n", oneLine(p.Message, 1000), termLine(p.URL))
		fmt.Fprintf(w, "  (it goes to %s; mcpcall does not open it — check the address, then open it yourself)\n", termLine(host))
		if !isASCII(host) {
			fmt.Fprintln(w, "  (the host name is not plain ASCII, and such letters can imitate others: check it letter by letter)")
		}
		act, err := a.askAction("  [a]ccept (I will open it) / [d]ecline / [c]ancel: ")
		if err != nil {
			return nil, eof()
		}
		return actionJSON(act), nil
	}
	fields, err := formFields(p.RequestedSchema)
	if err != nil {
		return nil, &unansweredError{fmt.Sprintf("elicitation %q: %v", key, err)}
	}
	if msg := strings.TrimSpace(p.Message); strings.Contains(msg, "\n") {
		fmt.Fprintf(w, "\n? The server asks (elicitation %q):\n%s\n", key, indentText(msg, "  "))
	} else {
		fmt.Fprintf(w, "\n? The server asks (elicitation %q): %s\n", key, termLine(msg))
	}
	act, err := a.askAction("  Answer? [a]ccept and fill in the form / [d]ecline / [c]ancel (default a): ")
	if err != nil {
		return nil, eof()
	}
	if act != "accept" {
		return actionJSON(act), nil
	}
	content := map[string]json.RawMessage{}
	for _, f := range fields {
		v, err := a.askField(f)
		if err != nil {
			return nil, eof()
		}
		if v != nil {
			content[f.name] = v
		}
	}
	return json.Marshal(map[string]any{"action": "accept", "content": content})
}

func (a *answerer) askAction(prompt string) (string, error) {
	for {
		fmt.Fprint(a.prompt, prompt)
		s, err := a.in.readLine()
		if err != nil {
			return "", err
		}
		switch strings.ToLower(strings.TrimSpace(s)) {
		case "", "a", "accept", "y", "yes":
			return "accept", nil
		case "d", "decline", "n", "no":
			return "decline", nil
		case "c", "cancel":
			return "cancel", nil
		}
		fmt.Fprintln(a.prompt, "  ! answer a, d or c")
	}
}

// describe renders what the user is asked for one field.
func describe(f field) string {
	var b strings.Builder
	s := f.schema
	b.WriteString("  ")
	if s.Title != "" {
		fmt.Fprintf(&b, "%s (%s)", termLine(s.Title), termLine(f.name))
	} else {
		b.WriteString(termLine(f.name))
	}
	var facts []string
	typ := termLine(s.Type)
	if typ == "" {
		typ = "JSON value"
	}
	if typ == "array" {
		typ = "list: several of the choices, separated by commas"
	}
	facts = append(facts, typ)
	if f.required {
		facts = append(facts, "required")
	} else {
		facts = append(facts, "optional")
	}
	if s.Format != "" {
		facts = append(facts, "format "+termLine(s.Format))
	}
	if s.MinLength != nil {
		facts = append(facts, fmt.Sprintf("at least %d characters", *s.MinLength))
	}
	if s.MaxLength != nil {
		facts = append(facts, fmt.Sprintf("at most %d characters", *s.MaxLength))
	}
	if s.Minimum != nil {
		facts = append(facts, "≥ "+strconv.FormatFloat(*s.Minimum, 'g', -1, 64))
	}
	if s.Maximum != nil {
		facts = append(facts, "≤ "+strconv.FormatFloat(*s.Maximum, 'g', -1, 64))
	}
	if s.MinItems != nil {
		facts = append(facts, fmt.Sprintf("at least %d", *s.MinItems))
	}
	if s.MaxItems != nil {
		facts = append(facts, fmt.Sprintf("at most %d", *s.MaxItems))
	}
	fmt.Fprintf(&b, " [%s]", strings.Join(facts, ", "))
	if s.Description != "" {
		fmt.Fprintf(&b, "\n%s", indentText(s.Description, "    "))
	}
	cs := s.choices()
	if s.Type == "array" && s.Items != nil {
		cs = s.Items.choices()
	}
	for i, c := range cs {
		fmt.Fprintf(&b, "\n    %d) %s", i+1, termLine(c.value))
		if c.title != "" && c.title != c.value {
			fmt.Fprintf(&b, " — %s", termLine(c.title))
		}
	}
	if len(s.Default) > 0 {
		fmt.Fprintf(&b, "\n    default: %s (press Enter)", termLine(string(s.Default)))
	} else if !f.required {
		b.WriteString("\n    (press Enter to leave it out)")
	}
	return b.String()
}

// askField asks for one field until the answer is valid. It returns the
// value as JSON, or nil to leave an optional field out.
func (a *answerer) askField(f field) (json.RawMessage, error) {
	fmt.Fprintln(a.prompt, describe(f))
	for {
		fmt.Fprint(a.prompt, "  > ")
		s, err := a.in.readLine()
		if err != nil {
			return nil, err
		}
		if strings.TrimSpace(s) == "" {
			switch {
			case len(f.schema.Default) > 0:
				return f.schema.Default, nil
			case !f.required:
				return nil, nil
			}
			fmt.Fprintln(a.prompt, "  ! this field is required")
			continue
		}
		v, err := parseField(f.schema, s)
		if err != nil {
			fmt.Fprintf(a.prompt, "  ! %v\n", err)
			continue
		}
		return v, nil
	}
}

// parseField validates what the user typed against a field's schema and
// returns it as JSON.
func parseField(s fieldSchema, in string) (json.RawMessage, error) {
	switch s.Type {
	case "string":
		if cs := s.choices(); len(cs) > 0 {
			c, err := pick(cs, strings.TrimSpace(in))
			if err != nil {
				return nil, err
			}
			return mustJSON(c), nil
		}
		if err := checkString(s, in); err != nil {
			return nil, err
		}
		return mustJSON(in), nil
	case "number", "integer":
		t := strings.TrimSpace(in)
		f, err := strconv.ParseFloat(t, 64)
		if err != nil || math.IsInf(f, 0) || math.IsNaN(f) {
			return nil, fmt.Errorf("%q is not a number", t)
		}
		if s.Type == "integer" && (f != math.Trunc(f) || math.Abs(f) > 1<<53-1) {
			return nil, fmt.Errorf("%q is not an integer", t)
		}
		if s.Minimum != nil && f < *s.Minimum {
			return nil, fmt.Errorf("must be at least %v", *s.Minimum)
		}
		if s.Maximum != nil && f > *s.Maximum {
			return nil, fmt.Errorf("must be at most %v", *s.Maximum)
		}
		if s.Type == "integer" {
			return json.RawMessage(strconv.FormatInt(int64(f), 10)), nil
		}
		return mustJSON(f), nil
	case "boolean":
		switch strings.ToLower(strings.TrimSpace(in)) {
		case "y", "yes", "true", "t", "1":
			return json.RawMessage("true"), nil
		case "n", "no", "false", "f", "0":
			return json.RawMessage("false"), nil
		}
		return nil, errors.New("answer yes or no")
	case "array":
		var cs []choice
		if s.Items != nil {
			cs = s.Items.choices()
		}
		var out []string
		for _, part := range strings.Split(in, ",") {
			part = strings.TrimSpace(part)
			if part == "" {
				continue
			}
			v := part
			if len(cs) > 0 {
				c, err := pick(cs, part)
				if err != nil {
					return nil, err
				}
				v = c
			}
			for _, o := range out {
				if o == v {
					return nil, fmt.Errorf("%q is chosen twice", v)
				}
			}
			out = append(out, v)
		}
		if s.MinItems != nil && len(out) < *s.MinItems {
			return nil, fmt.Errorf("choose at least %d", *s.MinItems)
		}
		if s.MaxItems != nil && len(out) > *s.MaxItems {
			return nil, fmt.Errorf("choose at most %d", *s.MaxItems)
		}
		if out == nil {
			out = []string{}
		}
		return mustJSON(out), nil
	}
	// A type mcpcall does not know: JSON if it parses, else a string.
	if json.Valid([]byte(in)) {
		return json.RawMessage(strings.TrimSpace(in)), nil
	}
	return mustJSON(in), nil
}

// pick resolves a typed choice: its number, its value or its title.
func pick(cs []choice, in string) (string, error) {
	if n, err := strconv.Atoi(in); err == nil && n >= 1 && n <= len(cs) {
		return cs[n-1].value, nil
	}
	for _, c := range cs {
		if c.value == in {
			return c.value, nil
		}
	}
	for _, c := range cs {
		if c.title != "" && strings.EqualFold(c.title, in) {
			return c.value, nil
		}
	}
	return "", fmt.Errorf("%q is not one of the choices; type its number or value", in)
}

// checkString applies a string schema's length, format and pattern.
func checkString(s fieldSchema, v string) error {
	n := utf8.RuneCountInString(v)
	if s.MinLength != nil && n < *s.MinLength {
		return fmt.Errorf("at least %d characters, please", *s.MinLength)
	}
	if s.MaxLength != nil && n > *s.MaxLength {
		return fmt.Errorf("at most %d characters, please", *s.MaxLength)
	}
	switch s.Format {
	case "email":
		if a, err := mail.ParseAddress(v); err != nil || a.Address != v {
			return errors.New("not an email address")
		}
	case "uri":
		if u, err := url.Parse(v); err != nil || u.Scheme == "" {
			return errors.New("not an absolute URI")
		}
	case "date":
		if _, err := time.Parse(time.DateOnly, v); err != nil {
			return errors.New("not a date (YYYY-MM-DD)")
		}
	case "date-time":
		if _, err := time.Parse(time.RFC3339, v); err != nil {
			return errors.New("not a date-time (RFC 3339, e.g. 2026-07-28T12:00:00Z)")
		}
	}
	if s.Pattern != "" {
		if re, err := regexp.Compile(s.Pattern); err == nil && !re.MatchString(v) {
			return fmt.Errorf("does not match the pattern %s", termLine(s.Pattern))
		}
	}
	return nil
}

// checkElicitURL checks the URL of a url-mode elicitation before the
// user sees it. It returns the host (with its port, if any), or a reason
// to refuse the URL: one that does not parse, is not https (http only to
// this machine), has no host, names a user before the host (a classic
// disguise: https://bank.example@evil.example/), or holds spaces,
// control or invisible characters (which could hide or fake part of it
// on a terminal).
func checkElicitURL(raw string) (host, problem string) {
	if raw == "" {
		return "", "is empty"
	}
	for _, r := range raw {
		if unsafeRune(r) || unicode.IsSpace(r) || r == utf8.RuneError {
			return "", "holds spaces, control or invisible characters"
		}
	}
	u, err := url.Parse(raw)
	switch {
	case err != nil:
		return "", "does not parse"
	case u.Host == "" || u.Hostname() == "":
		return "", "has no host"
	case u.User != nil:
		return "", "names a user before the host (user@host)"
	case strings.ContainsFunc(u.Host, func(r rune) bool { return unsafeRune(r) || unicode.IsSpace(r) }):
		// %-escapes in the host are decoded by url.Parse.
		return "", "holds spaces, control or invisible characters in its host"
	case strings.EqualFold(u.Scheme, "https"):
	case strings.EqualFold(u.Scheme, "http") && loopbackHost(u.Hostname()):
	default:
		return "", "is not https"
	}
	return u.Host, ""
}

func isASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf {
			return false
		}
	}
	return true
}

// mustJSON encodes a value the CLI built itself.
func mustJSON(v any) json.RawMessage {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return b
}
