package mrtr

import (
	"strings"

	"github.com/yosida95/uritemplate/v3"
)

// uriTemplate matches URIs against a resource template: an RFC 6570 URI
// template (levels 1 to 4: {var}, {+var}, {#var}, {.var}, {/var}, {;var},
// {?var}, {&var}, prefixes and explode modifiers), matched by
// github.com/yosida95/uritemplate.
//
// A variable of a simple ({var}) or reserved ({+var}) expression must
// match at least one character: "db://{schema}/{table}" does not match
// db:///orders. Expressions with a separator of their own ({/var},
// {.var}, {;var}, {?var}, {&var}, {#var}) may match nothing.
type uriTemplate struct {
	t        *uritemplate.Template
	required []string
}

func compileTemplate(tmpl string) (*uriTemplate, error) {
	t, err := uritemplate.New(tmpl)
	if err != nil {
		return nil, err
	}
	u := &uriTemplate{t: t}
	for rest := tmpl; ; {
		i := strings.IndexByte(rest, '{')
		if i < 0 {
			break
		}
		j := strings.IndexByte(rest[i:], '}')
		if j < 0 {
			break
		}
		expr := rest[i+1 : i+j]
		rest = rest[i+j+1:]
		if expr == "" {
			continue
		}
		switch expr[0] {
		case '#', '.', '/', ';', '?', '&':
			continue
		case '+':
			expr = expr[1:]
		}
		for _, spec := range strings.Split(expr, ",") {
			name, _, _ := strings.Cut(strings.TrimSuffix(spec, "*"), ":")
			u.required = append(u.required, name)
		}
	}
	return u, nil
}

// match returns the values the template's variables take in uri, decoded.
// A list or an associative array (from an explode modifier) is joined
// with commas, as a simple expansion would show it.
func (t *uriTemplate) match(uri string) (map[string]string, bool) {
	vals := t.t.Match(uri)
	if vals == nil {
		return nil, false
	}
	for _, name := range t.required {
		if v := vals.Get(name); !v.Valid() || (v.String() == "" && len(v.List()) == 0 && len(v.KV()) == 0) {
			return nil, false
		}
	}
	vars := make(map[string]string, len(vals))
	for name, v := range vals {
		if !v.Valid() {
			continue
		}
		switch {
		case len(v.List()) > 0:
			vars[name] = strings.Join(v.List(), ",")
		case len(v.KV()) > 0:
			vars[name] = strings.Join(v.KV(), ",")
		default:
			vars[name] = v.String()
		}
	}
	return vars, true
}
