package typed_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mrtrkit/mrtrkit/internal/testkit"
	"github.com/mrtrkit/mrtrkit/mrtr"
	"github.com/mrtrkit/mrtrkit/mrtr/mrtrtest"
	"github.com/mrtrkit/mrtrkit/mrtr/typed"
)

type payment struct {
	Cents int    `json:"cents"`
	Kind  string `json:"kind,omitempty"`
}

type order struct {
	Payment payment `json:"payment"`
}

// Hand-written schemas that declare their limits behind $ref, $defs and
// allOf, without additionalProperties false: a JSON Schema validator
// ignores a member it does not know, so only the declared-name rule stands
// between {"CENTS": 1000000} and a handler that decodes it as Cents.
var foldSchemas = map[string]string{
	"allOf $ref": `{"type":"object","$defs":{"Amount":{"type":"object","properties":{"cents":{"type":"integer","maximum":100},"kind":{"type":"string"}}}},"allOf":[{"$ref":"#/$defs/Amount"}]}`,
	"$ref root":  `{"type":"object","$ref":"#/$defs/Amount","$defs":{"Amount":{"type":"object","properties":{"cents":{"type":"integer","maximum":100},"kind":{"type":"string"}}}}}`,
	"allOf":      `{"type":"object","allOf":[{"properties":{"cents":{"type":"integer","maximum":100}}},{"properties":{"kind":{"type":"string"}}}]}`,
	"anyOf":      `{"type":"object","anyOf":[{"properties":{"cents":{"type":"integer","maximum":100},"kind":{"type":"string"}}}]}`,
}

func TestCaseVariantsBehindRefAndAllOfAreRefused(t *testing.T) {
	for name, schema := range foldSchemas {
		t.Run(name, func(t *testing.T) {
			srv := testkit.Server(t, testkit.Desc("fold", "1"), mrtr.WithCodec(testkit.Codec(t)))
			var got []int
			require.NoError(t, typed.AddTool(srv, mrtr.Tool{Name: "pay", InputSchema: json.RawMessage(schema)},
				func(ctx context.Context, req *mrtr.Request, in payment) (*mrtr.CallToolResult, error) {
					got = append(got, in.Cents)
					return mrtr.TextResult("paid"), nil
				}))
			c := mrtrtest.NewClient(srv)
			for _, args := range []string{
				`{"CENTS":1000000}`,
				`{"Cents":1000000}`,
				`{"centſ":1000000}`,                 // U+017F folds to s
				"{\"cents\":5,\"\u212aind\":\"x\"}", // the Kelvin sign folds to k
			} {
				res, err := c.CallTool(context.Background(), "pay", json.RawMessage(args))
				require.NoError(t, err, args)
				assert.True(t, res.IsError, args)
				assert.Contains(t, res.Text(), "names are case-sensitive", args)
			}
			res, err := c.CallTool(context.Background(), "pay", json.RawMessage(`{"cents":1000000}`))
			require.NoError(t, err)
			assert.True(t, res.IsError, "the declared name is held to its maximum")
			res, err = c.CallTool(context.Background(), "pay", json.RawMessage(`{"cents":50,"kind":"card"}`))
			require.NoError(t, err)
			assert.False(t, res.IsError, res.Text())
			assert.Equal(t, []int{50}, got, "only the valid call reached the handler")
		})
	}
}

func TestCaseVariantsInNestedRefs(t *testing.T) {
	schema := `{"type":"object","properties":{"payment":{"$ref":"#/$defs/Amount"}},"required":["payment"],
		"$defs":{"Amount":{"type":"object","properties":{"cents":{"type":"integer","maximum":100}}}}}`
	srv := testkit.Server(t, testkit.Desc("fold", "1"), mrtr.WithCodec(testkit.Codec(t)))
	var got []int
	require.NoError(t, typed.AddTool(srv, mrtr.Tool{Name: "order", InputSchema: json.RawMessage(schema)},
		func(ctx context.Context, req *mrtr.Request, in order) (*mrtr.CallToolResult, error) {
			got = append(got, in.Payment.Cents)
			return mrtr.TextResult("ok"), nil
		}))
	c := mrtrtest.NewClient(srv)
	res, err := c.CallTool(context.Background(), "order", json.RawMessage(`{"payment":{"CENTS":1000000}}`))
	require.NoError(t, err)
	assert.True(t, res.IsError)
	assert.Contains(t, res.Text(), "payment.CENTS is not allowed: names are case-sensitive (did you mean cents?)")
	res, err = c.CallTool(context.Background(), "order", json.RawMessage(`{"payment":{"cents":7}}`))
	require.NoError(t, err)
	assert.False(t, res.IsError, res.Text())
	assert.Equal(t, []int{7}, got)
}

// A recursive schema compiles and its declared names hold at every level.
func TestCaseVariantsInRecursiveSchema(t *testing.T) {
	type node struct {
		Name     string  `json:"name"`
		Children []*node `json:"children,omitempty"`
	}
	schema := `{"$ref":"#/$defs/node","$defs":{"node":{"type":"object","properties":{"name":{"type":"string"},"children":{"type":"array","items":{"$ref":"#/$defs/node"}}}}}}`
	b, err := typed.NewBinder[node](&typed.BindOptions{Schema: mustSchema(t, schema)})
	require.NoError(t, err)
	_, err = b.Bind(json.RawMessage(`{"name":"a","children":[{"name":"b","children":[{"NAME":"c"}]}]}`))
	var ae *typed.ArgumentError
	require.ErrorAs(t, err, &ae)
	assert.Equal(t, "children[0].children[0].NAME", ae.Problems[0].Field)
	v, err := b.Bind(json.RawMessage(`{"name":"a","children":[{"name":"b"}]}`))
	require.NoError(t, err)
	assert.Equal(t, "b", v.Children[0].Name)
}

// The generated schema's own rule: a struct's fields by their JSON names,
// case variants refused whatever the folding.
func TestCaseVariantsOfGeneratedSchema(t *testing.T) {
	b, err := typed.NewBinder[payment](nil)
	require.NoError(t, err)
	for _, args := range []string{`{"cents":1,"KIND":"x"}`, `{"centſ":1}`, "{\"cents\":1,\"\u212aind\":\"x\"}"} {
		_, err := b.Bind(json.RawMessage(args))
		var ae *typed.ArgumentError
		require.ErrorAs(t, err, &ae, args)
		assert.Equal(t, "unknown", ae.Problems[0].Rule, args)
		assert.Contains(t, ae.Problems[0].Message, "names are case-sensitive", args)
	}
}

func mustSchema(t *testing.T, raw string) *jsonschema.Schema {
	t.Helper()
	var s jsonschema.Schema
	require.NoError(t, json.Unmarshal([]byte(raw), &s))
	return &s
}

func TestProblemsQuoteAShortPrefixOfNames(t *testing.T) {
	b, err := typed.NewBinder[payment](nil)
	require.NoError(t, err)
	long := strings.Repeat("n", 64<<10)
	_, err = b.Bind(json.RawMessage(`{"cents":1,"` + long + `":2}`))
	var ae *typed.ArgumentError
	require.ErrorAs(t, err, &ae)
	assert.Less(t, len(ae.Error()), 200)
	assert.Contains(t, ae.Problems[0].Field, `"nnnn`)
}
