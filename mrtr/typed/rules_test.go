package typed_test

import (
	"context"
	"encoding/json"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mrtrkit/mrtrkit/mrtr"
	"github.com/mrtrkit/mrtrkit/mrtr/typed"
)

type Base struct {
	ID string `json:"id" validate:"len=4"`
}

type Extra struct {
	Note string `json:"note" validate:"max=3"`
}

type Tagged struct {
	Label string `json:"label" validate:"min=2"`
}

type Composite struct {
	Base                  // promoted plainly: its rules hold whenever Composite is checked
	*Extra                // promoted from a pointer: checked only when the pointer is set
	Tagged `validate:"-"` // promoted from a field validator skips
	Count  int            `json:"count" validate:"gte=1"`
}

func TestInputSchemaOfEmbeddedStructs(t *testing.T) {
	s, err := typed.InputSchemaFor[Composite](nil)
	require.NoError(t, err)
	b, _ := json.Marshal(s)
	assert.JSONEq(t, `{"type":"object","additionalProperties":false,"required":["id","note","label","count"],"properties":{
		"id":{"type":"string","minLength":4,"maxLength":4},
		"note":{"type":"string"},
		"label":{"type":"string"},
		"count":{"type":"integer","minimum":1}}}`, string(b))

	// SchemaFor is the shape alone, as output schemas are.
	s, err = typed.SchemaFor[Composite](nil)
	require.NoError(t, err)
	b, _ = json.Marshal(s.Properties["count"])
	assert.JSONEq(t, `{"type":"integer"}`, string(b))
}

type Colour struct {
	Hex string `json:"hex" validate:"colour_hex"`
}

// registerColour registers the rule once per process, however many times
// the test runs (go test -count).
var registerColour = sync.OnceValue(func() error {
	return typed.RegisterPattern("colour_hex", `^#[0-9a-f]{6}$`, "must be a colour such as #00ff7f")
})

func TestRegisterPattern(t *testing.T) {
	require.NoError(t, registerColour())
	assert.ErrorContains(t, typed.RegisterPattern("colour_hex", `^x$`, "must be x"), "already exists")
	assert.ErrorContains(t, typed.RegisterPattern("min", `^x$`, "must be x"), "already exists")
	assert.ErrorContains(t, typed.RegisterPattern("iscolor", `^x$`, "must be x"), "already exists")
	assert.ErrorContains(t, typed.RegisterPattern("Bad-Name", `^x$`, "must be x"), "lower-case")
	assert.ErrorContains(t, typed.RegisterPattern("broken", `^(x$`, "must be x"), "missing closing")
	assert.ErrorContains(t, typed.RegisterPattern("quiet", `^x$`, ""), "say what the rule asks")

	srv, _ := newServer(t)
	require.NoError(t, typed.AddTool(srv, mrtr.Tool{Name: "paint"}, func(_ context.Context, _ *mrtr.Request, in Colour) (*mrtr.CallToolResult, error) {
		return mrtr.TextResult("painted " + in.Hex), nil
	}))
	in := listedTool(t, srv, "paint")["inputSchema"].(map[string]any)
	assert.Equal(t, `^#[0-9a-f]{6}$`, in["properties"].(map[string]any)["hex"].(map[string]any)["pattern"])

	r, e := callTool(t, srv, "paint", map[string]any{"hex": "red"}, nil)
	require.Nil(t, e)
	assert.True(t, r.IsError)
	assert.Equal(t, "Invalid arguments:\n- hex must be a colour such as #00ff7f (rule \"colour_hex\")", r.Content[0].Text)
	r, e = callTool(t, srv, "paint", map[string]any{"hex": "#00ff7f"}, nil)
	require.Nil(t, e)
	assert.Equal(t, "painted #00ff7f", r.Content[0].Text)
}

// The published schema and the Binder agree on a tool's arguments: what
// one refuses the other refuses, with the tag named in the message.
func TestToolSchemaCarriesTagRules(t *testing.T) {
	type In struct {
		Email string   `json:"email" validate:"email"`
		Tags  []string `json:"tags,omitempty" validate:"max=2,dive,oneof=a b c"`
		Size  *int     `json:"size,omitempty" validate:"omitempty,gt=0,lt=10"`
	}
	srv, _ := newServer(t)
	require.NoError(t, typed.AddTool(srv, mrtr.Tool{Name: "t"}, func(_ context.Context, _ *mrtr.Request, in In) (*mrtr.CallToolResult, error) {
		return mrtr.TextResult("ok"), nil
	}))
	b, _ := json.Marshal(listedTool(t, srv, "t")["inputSchema"])
	assert.JSONEq(t, `{"type":"object","additionalProperties":false,"required":["email"],"properties":{
		"email":{"type":"string","format":"email"},
		"tags":{"type":["null","array"],"items":{"type":"string","enum":["a","b","c"]},"maxItems":2},
		"size":{"type":["null","integer"],"exclusiveMinimum":0,"exclusiveMaximum":10}}}`, string(b))
	for args, want := range map[string]string{
		`{"email":"x"}`:                          `email must be a valid email (rule "email")`,
		`{"email":"a@example.com","tags":["d"]}`: `tags[0] must be one of: a, b, c (rule "oneof=a b c")`,
		`{"email":"a@example.com","size":10}`:    `size must be less than 10 (rule "lt=10")`,
	} {
		r, e := callTool(t, srv, "t", json.RawMessage(args), nil)
		require.Nil(t, e)
		assert.True(t, r.IsError, args)
		assert.Contains(t, r.Content[0].Text, want, args)
	}
}
