package mrtr

import (
	"errors"
	"fmt"
	"regexp"
	"strings"
)

// uriTemplate matches URIs against a resource template's simple {name}
// expressions, each standing for one or more characters other than '/'.
type uriTemplate struct {
	re   *regexp.Regexp
	vars []string
}

var templateVarRE = regexp.MustCompile(`\{([A-Za-z0-9_]+)\}`)

func compileTemplate(tmpl string) (*uriTemplate, error) {
	if strings.ContainsAny(tmpl, "+#./;?&") && strings.Contains(tmpl, "{") {
		for _, op := range []string{"{+", "{#", "{.", "{/", "{;", "{?", "{&"} {
			if strings.Contains(tmpl, op) {
				return nil, fmt.Errorf("operator %q expressions are not supported; use simple {name} expressions", op[1:])
			}
		}
	}
	var b strings.Builder
	var vars []string
	b.WriteString("^")
	last := 0
	for _, m := range templateVarRE.FindAllStringSubmatchIndex(tmpl, -1) {
		b.WriteString(regexp.QuoteMeta(tmpl[last:m[0]]))
		b.WriteString("([^/]+)")
		vars = append(vars, tmpl[m[2]:m[3]])
		last = m[1]
	}
	b.WriteString(regexp.QuoteMeta(tmpl[last:]))
	b.WriteString("$")
	if strings.ContainsAny(tmpl[last:], "{}") {
		return nil, errors.New("unbalanced braces")
	}
	re, err := regexp.Compile(b.String())
	if err != nil {
		return nil, err
	}
	return &uriTemplate{re: re, vars: vars}, nil
}

// match returns the values the template's variables take in uri.
func (t *uriTemplate) match(uri string) (map[string]string, bool) {
	m := t.re.FindStringSubmatch(uri)
	if m == nil {
		return nil, false
	}
	vars := make(map[string]string, len(t.vars))
	for i, v := range t.vars {
		vars[v] = m[i+1]
	}
	return vars, true
}
