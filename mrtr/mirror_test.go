package mrtr_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mrtrkit/mrtrkit/mrtr"
)

func TestParamHeaderDeclarations(t *testing.T) {
	tests := []struct {
		name   string
		schema string
		ok     bool
	}{
		{"string", `{"type":"object","properties":{"a":{"type":"string","x-mcp-header":"A"}}}`, true},
		{"integer", `{"type":"object","properties":{"a":{"type":"integer","x-mcp-header":"A"}}}`, true},
		{"boolean", `{"type":"object","properties":{"a":{"type":"boolean","x-mcp-header":"A"}}}`, true},
		{"several", `{"type":"object","properties":{"a":{"type":"string","x-mcp-header":"A"},"b":{"type":"integer","x-mcp-header":"B-2"}}}`, true},
		{"nested property", `{"type":"object","properties":{"o":{"type":"object","properties":{"a":{"type":"string","x-mcp-header":"A"}}}}}`, true},
		{"token punctuation", `{"type":"object","properties":{"a":{"type":"string","x-mcp-header":"a!#$%&'*+-.^_|~9"}}}`, true},
		{"property named properties", `{"type":"object","properties":{"properties":{"type":"string","x-mcp-header":"P"}}}`, true},
		{"no declarations", `{"type":"object","properties":{"a":{"type":"string"}}}`, true},

		{"number property", `{"type":"object","properties":{"a":{"type":"number","x-mcp-header":"A"}}}`, false},
		{"object property", `{"type":"object","properties":{"a":{"type":"object","x-mcp-header":"A"}}}`, false},
		{"array property", `{"type":"object","properties":{"a":{"type":"array","x-mcp-header":"A"}}}`, false},
		{"type list", `{"type":"object","properties":{"a":{"type":["string","null"],"x-mcp-header":"A"}}}`, false},
		{"no type", `{"type":"object","properties":{"a":{"x-mcp-header":"A"}}}`, false},
		{"inside items", `{"type":"object","properties":{"a":{"type":"array","items":{"type":"string","x-mcp-header":"A"}}}}`, false},
		{"inside items properties", `{"type":"object","properties":{"a":{"type":"array","items":{"type":"object","properties":{"b":{"type":"string","x-mcp-header":"A"}}}}}}`, false},
		{"inside oneOf", `{"type":"object","properties":{"a":{"oneOf":[{"type":"string","x-mcp-header":"A"},{"type":"integer"}]}}}`, false},
		{"inside anyOf", `{"type":"object","anyOf":[{"properties":{"a":{"type":"string","x-mcp-header":"A"}}}]}`, false},
		{"inside allOf", `{"type":"object","allOf":[{"properties":{"a":{"type":"string","x-mcp-header":"A"}}}]}`, false},
		{"inside additionalProperties", `{"type":"object","additionalProperties":{"type":"string","x-mcp-header":"A"}}`, false},
		{"inside patternProperties", `{"type":"object","patternProperties":{"^a":{"type":"string","x-mcp-header":"A"}}}`, false},
		{"inside $defs", `{"type":"object","$defs":{"a":{"type":"string","x-mcp-header":"A"}}}`, false},
		{"at the root", `{"type":"object","x-mcp-header":"A"}`, false},
		{"duplicate", `{"type":"object","properties":{"a":{"type":"string","x-mcp-header":"Region"},"b":{"type":"string","x-mcp-header":"Region"}}}`, false},
		{"duplicate ignoring case", `{"type":"object","properties":{"a":{"type":"string","x-mcp-header":"Region"},"b":{"type":"string","x-mcp-header":"REGION"}}}`, false},
		{"empty name", `{"type":"object","properties":{"a":{"type":"string","x-mcp-header":""}}}`, false},
		{"space in name", `{"type":"object","properties":{"a":{"type":"string","x-mcp-header":"My Region"}}}`, false},
		{"colon in name", `{"type":"object","properties":{"a":{"type":"string","x-mcp-header":"a:b"}}}`, false},
		{"slash in name", `{"type":"object","properties":{"a":{"type":"string","x-mcp-header":"a/b"}}}`, false},
		{"non-ASCII name", `{"type":"object","properties":{"a":{"type":"string","x-mcp-header":"Régión"}}}`, false},
		{"control character in name", `{"type":"object","properties":{"a":{"type":"string","x-mcp-header":"a\u0000"}}}`, false},
		{"name not a string", `{"type":"object","properties":{"a":{"type":"string","x-mcp-header":5}}}`, false},
		{"name null", `{"type":"object","properties":{"a":{"type":"string","x-mcp-header":null}}}`, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFixture(t)
			err := f.srv.AddTool(mrtr.Tool{Name: "t", InputSchema: json.RawMessage(tt.schema)}, mrtr.HandlerFunc(noopTool))
			if tt.ok {
				require.NoError(t, err)
				return
			}
			require.Error(t, err)
			assert.Contains(t, err.Error(), "x-mcp-header")
			assert.Contains(t, err.Error(), `tool "t"`)
			// Nothing was registered.
			f.call("tools/call", obj{"name": "t"}).fail(t, mrtr.CodeMethodNotFound)
		})
	}
}

func TestParamHeaderChecks(t *testing.T) {
	f := newFixture(t)
	schema := `{"type":"object","properties":{
		"region":{"type":"string","x-mcp-header":"Region"},
		"count":{"type":"integer","x-mcp-header":"Count"},
		"dry":{"type":"boolean","x-mcp-header":"Dry-Run"},
		"opts":{"type":"object","properties":{"tier":{"type":"string","x-mcp-header":"Tier"}}},
		"free":{"type":"string"}
	}}`
	require.NoError(t, f.srv.AddTool(mrtr.Tool{Name: "deploy", InputSchema: json.RawMessage(schema)}, mrtr.HandlerFunc(noopTool)))

	tests := []struct {
		name    string
		args    any
		headers map[string]mrtr.HeaderValue
		ok      bool
	}{
		{"no arguments, no headers", nil, nil, true},
		{"unmirrored argument only", obj{"free": "x"}, nil, true},
		{"string matches", obj{"region": "eu-west-1"}, map[string]mrtr.HeaderValue{"region": hv("eu-west-1")}, true},
		{"non-ASCII string matches", obj{"region": "Zürich"}, map[string]mrtr.HeaderValue{"region": hv("Zürich")}, true},
		{"empty string matches", obj{"region": ""}, map[string]mrtr.HeaderValue{"region": hv("")}, true},
		{"string missing", obj{"region": "eu"}, nil, false},
		{"string mismatch", obj{"region": "eu"}, map[string]mrtr.HeaderValue{"region": hv("us")}, false},
		{"string differs in case", obj{"region": "eu"}, map[string]mrtr.HeaderValue{"region": hv("EU")}, false},
		{"string header invalid", obj{"region": "eu"}, map[string]mrtr.HeaderValue{"region": {Present: true, Invalid: "bad base64"}}, false},
		{"string argument is a number", obj{"region": 5}, map[string]mrtr.HeaderValue{"region": hv("5")}, false},
		{"header without argument", obj{}, map[string]mrtr.HeaderValue{"region": hv("eu")}, false},
		{"header with null argument", obj{"region": nil}, map[string]mrtr.HeaderValue{"region": hv("eu")}, false},
		{"null argument without header", obj{"region": nil}, nil, true},
		{"integer matches", obj{"count": 42}, map[string]mrtr.HeaderValue{"count": hv("42")}, true},
		{"integer written as float matches", rawJSON(`{"count":42.0}`), map[string]mrtr.HeaderValue{"count": hv("42")}, true},
		{"integer written with exponent matches", rawJSON(`{"count":4.2e1}`), map[string]mrtr.HeaderValue{"count": hv("42")}, true},
		{"negative integer matches", obj{"count": -7}, map[string]mrtr.HeaderValue{"count": hv("-7")}, true},
		{"largest safe integer matches", rawJSON(`{"count":9007199254740991}`), map[string]mrtr.HeaderValue{"count": hv("9007199254740991")}, true},
		{"integer mismatch", obj{"count": 42}, map[string]mrtr.HeaderValue{"count": hv("43")}, false},
		{"integer header not a number", obj{"count": 42}, map[string]mrtr.HeaderValue{"count": hv("forty-two")}, false},
		{"integer header with exponent", obj{"count": 42}, map[string]mrtr.HeaderValue{"count": hv("4.2e1")}, false},
		{"integer header with a plus sign", obj{"count": 42}, map[string]mrtr.HeaderValue{"count": hv("+42")}, false},
		{"integer header with a leading zero", obj{"count": 42}, map[string]mrtr.HeaderValue{"count": hv("042")}, false},
		{"negative integer matches", obj{"count": -7}, map[string]mrtr.HeaderValue{"count": hv("-7")}, true},
		{"fractional argument", obj{"count": 1.5}, map[string]mrtr.HeaderValue{"count": hv("1")}, false},
		{"unsafe integer", rawJSON(`{"count":9007199254740993}`), map[string]mrtr.HeaderValue{"count": hv("9007199254740993")}, false},
		{"case-variant duplicate of a mirrored argument", rawJSON(`{"region":"eu","REGION":"us"}`), map[string]mrtr.HeaderValue{"region": hv("eu")}, false},
		{"integer argument is a string", obj{"count": "42"}, map[string]mrtr.HeaderValue{"count": hv("42")}, false},
		{"integer missing", obj{"count": 1}, nil, false},
		{"boolean true matches", obj{"dry": true}, map[string]mrtr.HeaderValue{"dry-run": hv("true")}, true},
		{"boolean false matches", obj{"dry": false}, map[string]mrtr.HeaderValue{"dry-run": hv("false")}, true},
		{"boolean mismatch", obj{"dry": true}, map[string]mrtr.HeaderValue{"dry-run": hv("false")}, false},
		{"boolean capitalised", obj{"dry": true}, map[string]mrtr.HeaderValue{"dry-run": hv("True")}, false},
		{"boolean as 1", obj{"dry": true}, map[string]mrtr.HeaderValue{"dry-run": hv("1")}, false},
		{"boolean argument is a string", obj{"dry": "true"}, map[string]mrtr.HeaderValue{"dry-run": hv("true")}, false},
		{"nested matches", obj{"opts": obj{"tier": "gold"}}, map[string]mrtr.HeaderValue{"tier": hv("gold")}, true},
		{"nested parent absent", obj{"opts": nil}, nil, true},
		{"nested mismatch", obj{"opts": obj{"tier": "gold"}}, map[string]mrtr.HeaderValue{"tier": hv("silver")}, false},
		{"nested parent not an object", obj{"opts": "gold"}, map[string]mrtr.HeaderValue{"tier": hv("gold")}, false},
		{"all at once", obj{"region": "eu", "count": 3, "dry": true, "opts": obj{"tier": "gold"}},
			map[string]mrtr.HeaderValue{"region": hv("eu"), "count": hv("3"), "dry-run": hv("true"), "tier": hv("gold"), "unrelated": hv("x")}, true},
		{"all but one", obj{"region": "eu", "count": 3, "dry": true},
			map[string]mrtr.HeaderValue{"region": hv("eu"), "count": hv("3")}, false},
	}
	// Without a Mirror, the strict door refuses these arguments.
	doorRefuses := map[string]bool{"unsafe integer": true, "case-variant duplicate of a mirrored argument": true}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := mirror("tools/call", "deploy")
			m.Params = tt.headers
			p := obj{"name": "deploy"}
			if tt.args != nil {
				p["arguments"] = tt.args
			}
			r := f.call("tools/call", p, withMirror(m))
			if tt.ok {
				r.complete(t)
				return
			}
			e := r.fail(t, mrtr.CodeHeaderMismatch)
			assert.True(t, r.Envelope)
			assert.Contains(t, e.Message, "Mcp-Param-")

			// Without a Mirror (stdio) no header is checked; the strict
			// door still is.
			res := f.call("tools/call", p)
			if doorRefuses[tt.name] {
				e := res.fail(t, mrtr.CodeInvalidParams)
				assert.Contains(t, e.Message, "Invalid arguments: arguments.")
			} else {
				assert.Nil(t, res.Error, "without headers: %s", res.Raw)
			}
		})
	}
}

func TestParamHeaderNamedInError(t *testing.T) {
	f := newFixture(t)
	require.NoError(t, f.srv.AddTool(mrtr.Tool{Name: "t", InputSchema: json.RawMessage(`{"type":"object","properties":{"a":{"type":"string","x-mcp-header":"Tenant-ID"}}}`)}, mrtr.HandlerFunc(noopTool)))
	m := mirror("tools/call", "t")
	e := f.call("tools/call", obj{"name": "t", "arguments": obj{"a": "x"}}, withMirror(m)).fail(t, mrtr.CodeHeaderMismatch)
	assert.Equal(t, "Header mismatch: Mcp-Param-Tenant-ID header is required", e.Message)
	m.Params = map[string]mrtr.HeaderValue{"tenant-id": hv("y")}
	e = f.call("tools/call", obj{"name": "t", "arguments": obj{"a": "x"}}, withMirror(m)).fail(t, mrtr.CodeHeaderMismatch)
	assert.Equal(t, "Header mismatch: Mcp-Param-Tenant-ID header value does not match the argument", e.Message)
}

// addDeployTool registers the tool "deploy", whose region argument is
// mirrored in the Mcp-Param-Region header, and returns the regions its
// handler bound, as Go's JSON decoding binds them, in call order.
func addDeployTool(t *testing.T, f *fixture) *[]string {
	var bound []string
	schema := `{"type":"object","properties":{"region":{"type":"string","x-mcp-header":"Region"}}}`
	require.NoError(t, f.srv.AddTool(mrtr.Tool{Name: "deploy", InputSchema: json.RawMessage(schema)},
		mrtr.HandlerFunc(func(ctx context.Context, req *mrtr.Request) (mrtr.Result, error) {
			var args struct {
				Region string `json:"region"`
			}
			if err := json.Unmarshal(req.Arguments, &args); err != nil {
				return nil, err
			}
			bound = append(bound, args.Region)
			return mrtr.TextResult(args.Region), nil
		})))
	return &bound
}

// Regression: the Mcp-Param-* check read the declared argument with an
// exact-name lookup, while handlers decoded the arguments with
// encoding/json, which matches struct fields ignoring case with the last
// member winning. Arguments {"region":"us","REGION":"eu"} passed the check
// against "Mcp-Param-Region: us" while the handler bound region = "eu", so
// an intermediary that routed or authorised on the header was bypassed.
// Now checkParamHeaders matches names exactly and the strict door
// (strictArguments), which runs right after it on every call, refuses two
// names that Go's decoding folds together, with or without a Mirror.
func TestRegressionParamHeaderBypassThroughCaseVariantArgument(t *testing.T) {
	f := newFixture(t)
	bound := addDeployTool(t, f)
	m := mirror("tools/call", "deploy")
	m.Params = map[string]mrtr.HeaderValue{"region": hv("us")}
	for _, tt := range []struct{ args, path string }{
		{`{"region":"us","REGION":"eu"}`, "arguments.REGION"},
		{`{"REGION":"eu","region":"us"}`, "arguments.region"},
		{`{"region":"us","Region":"eu"}`, "arguments.Region"},
	} {
		// With the header, the one Go's decoding keeps (the last) is
		// compared first: a mismatch is -32020; a match leaves the
		// arguments to the strict door. Either way no handler runs.
		r := f.call("tools/call", obj{"name": "deploy", "arguments": rawJSON(tt.args)}, withMirror(m))
		require.NotNil(t, r.Error, tt.args)
		assert.Contains(t, []int{int(mrtr.CodeHeaderMismatch), int(mrtr.CodeInvalidParams)}, int(r.Error.Code), tt.args)
		r = f.call("tools/call", obj{"name": "deploy", "arguments": rawJSON(tt.args)})
		e := r.fail(t, mrtr.CodeInvalidParams)
		assert.Equal(t, "Invalid arguments: "+tt.path+" repeats a member name: names that differ only in case are one name to Go's JSON decoding", e.Message)
		assert.False(t, r.Envelope)
	}
	assert.Empty(t, *bound, "the handler ran on ambiguous arguments")

	// The exact name is what the header vouches for.
	f.call("tools/call", obj{"name": "deploy", "arguments": obj{"region": "us"}}, withMirror(m)).complete(t)
	assert.Equal(t, []string{"us"}, *bound)
}

// A lone case variant of a mirrored argument ({"REGION":"eu"}) binds to
// the declared field in Go's decoding, as the pair above would: the
// Mcp-Param-* check must not let the handler read a value no header
// vouched for. (Before the reshape, the check found the argument by
// folded name and required the header.)
func TestRegressionParamHeaderLoneCaseVariant(t *testing.T) {
	f := newFixture(t)
	bound := addDeployTool(t, f)
	for _, name := range []string{"REGION", "Region"} {
		// No Mcp-Param-Region header: an intermediary saw no region.
		r := f.call("tools/call", obj{"name": "deploy", "arguments": obj{name: "eu"}}, withMirror(mirror("tools/call", "deploy")))
		if r.Error == nil {
			assert.Empty(t, (*bound)[len(*bound)-1], "no Mcp-Param-Region header was sent, the handler deployed to %q (arguments {%q:\"eu\"})", (*bound)[len(*bound)-1], name)
		}
		// A header naming another region.
		m := mirror("tools/call", "deploy")
		m.Params = map[string]mrtr.HeaderValue{"region": hv("us")}
		r = f.call("tools/call", obj{"name": "deploy", "arguments": obj{name: "eu"}}, withMirror(m))
		if r.Error == nil {
			assert.Equal(t, "us", (*bound)[len(*bound)-1], "Mcp-Param-Region said us, the handler deployed to %q (arguments {%q:\"eu\"})", (*bound)[len(*bound)-1], name)
		}
	}
}

// Regression: the fast path of the x-mcp-header scan looked for the
// keyword in the raw schema text, so a declaration whose key was written
// with a JSON escape ("x-mcp-h\u0065ader") was neither validated nor
// enforced, although every client decodes it as x-mcp-header (the schema
// is advertised verbatim in tools/list). Now paramHeaders takes the full
// walk whenever the schema holds an escape.
func TestRegressionEscapedParamHeaderKeyIgnored(t *testing.T) {
	f := newFixture(t)
	bad := `{"type":"object","properties":{"a":{"type":"number","x-mcp-h\u0065ader":"A"}}}`
	assert.Error(t, f.srv.AddTool(mrtr.Tool{Name: "bad", InputSchema: json.RawMessage(bad)}, mrtr.HandlerFunc(noopTool)),
		"an x-mcp-header on a number property must be refused")

	good := `{"type":"object","properties":{"a":{"type":"string","x-mcp-h\u0065ader":"A"}}}`
	require.NoError(t, f.srv.AddTool(mrtr.Tool{Name: "good", InputSchema: json.RawMessage(good)}, mrtr.HandlerFunc(noopTool)))
	r := f.call("tools/call", obj{"name": "good", "arguments": obj{"a": "x"}}, withMirror(mirror("tools/call", "good")))
	if assert.NotNil(t, r.Error, "missing Mcp-Param-A header was accepted") {
		assert.Equal(t, int(mrtr.CodeHeaderMismatch), r.Error.Code)
	}
}
