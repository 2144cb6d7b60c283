package discover

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func marshal(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	require.NoError(t, err)
	return string(b)
}

func TestCapabilitiesJSON(t *testing.T) {
	tests := []struct {
		name string
		caps Capabilities
		want string
	}{
		{"empty", Capabilities{}, `{}`},
		{"empty maps are absent", Capabilities{
			Experimental: map[string]map[string]any{},
			Extensions:   map[string]map[string]any{},
		}, `{}`},
		{"present but empty", Capabilities{Tools: &ListChanged{}}, `{"tools":{}}`},
		{"every empty capability", Capabilities{
			Logging:     &Empty{},
			Completions: &Empty{},
			Prompts:     &ListChanged{},
			Resources:   &ResourcesCapability{},
			Tools:       &ListChanged{},
		}, `{"logging":{},"completions":{},"prompts":{},"resources":{},"tools":{}}`},
		{"flags", Capabilities{
			Prompts:   &ListChanged{ListChanged: true},
			Resources: &ResourcesCapability{Subscribe: true, ListChanged: true},
			Tools:     &ListChanged{ListChanged: true},
		}, `{"prompts":{"listChanged":true},"resources":{"subscribe":true,"listChanged":true},"tools":{"listChanged":true}}`},
		{"one resource flag", Capabilities{
			Resources: &ResourcesCapability{Subscribe: true},
		}, `{"resources":{"subscribe":true}}`},
		{"nil option maps render as objects", Capabilities{
			Experimental: map[string]map[string]any{"x": nil, "y": {"level": 2}},
			Extensions:   map[string]map[string]any{"io.example/ext": nil},
		}, `{"experimental":{"x":{},"y":{"level":2}},"extensions":{"io.example/ext":{}}}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.JSONEq(t, tt.want, marshal(t, tt.caps))
			// A pointer marshals the same way.
			assert.JSONEq(t, tt.want, marshal(t, &tt.caps))
		})
	}
}

func TestCapabilitiesMarshalDoesNotMutate(t *testing.T) {
	c := Capabilities{Experimental: map[string]map[string]any{"x": nil}}
	_ = marshal(t, c)
	assert.Nil(t, c.Experimental["x"])
}

func TestCapabilitiesRoundTrip(t *testing.T) {
	in := `{"logging":{},"prompts":{"listChanged":true},"resources":{"subscribe":true},"tools":{},"extensions":{"io.example/ext":{"v":1}}}`
	var c Capabilities
	require.NoError(t, json.Unmarshal([]byte(in), &c))
	require.NotNil(t, c.Logging)
	assert.Nil(t, c.Completions)
	require.NotNil(t, c.Tools)
	assert.False(t, c.Tools.ListChanged)
	assert.True(t, c.Prompts.ListChanged)
	assert.True(t, c.Resources.Subscribe)
	assert.JSONEq(t, in, marshal(t, c))
}

func TestCapabilitiesMerge(t *testing.T) {
	t.Run("empty with empty", func(t *testing.T) {
		assert.Equal(t, Capabilities{}, Capabilities{}.Merge(Capabilities{}))
	})

	t.Run("present in either", func(t *testing.T) {
		a := Capabilities{Tools: &ListChanged{}, Logging: &Empty{}}
		b := Capabilities{Prompts: &ListChanged{}, Completions: &Empty{}}
		got := a.Merge(b)
		assert.JSONEq(t, `{"logging":{},"completions":{},"prompts":{},"tools":{}}`, marshal(t, got))
		assert.Equal(t, got, b.Merge(a), "merge is symmetric without map conflicts")
	})

	t.Run("flags are OR-ed", func(t *testing.T) {
		a := Capabilities{
			Tools:     &ListChanged{ListChanged: true},
			Prompts:   &ListChanged{},
			Resources: &ResourcesCapability{Subscribe: true},
		}
		b := Capabilities{
			Tools:     &ListChanged{},
			Prompts:   &ListChanged{ListChanged: true},
			Resources: &ResourcesCapability{ListChanged: true},
		}
		assert.JSONEq(t,
			`{"prompts":{"listChanged":true},"resources":{"subscribe":true,"listChanged":true},"tools":{"listChanged":true}}`,
			marshal(t, a.Merge(b)))
	})

	t.Run("maps merged, other wins", func(t *testing.T) {
		a := Capabilities{
			Experimental: map[string]map[string]any{"a": {"v": 1}, "shared": {"from": "a"}},
			Extensions:   map[string]map[string]any{"io.example/one": nil},
		}
		b := Capabilities{
			Experimental: map[string]map[string]any{"b": {"v": 2}, "shared": {"from": "b"}},
			Extensions:   map[string]map[string]any{"io.example/two": {"k": true}},
		}
		assert.JSONEq(t,
			`{"experimental":{"a":{"v":1},"b":{"v":2},"shared":{"from":"b"}},"extensions":{"io.example/one":{},"io.example/two":{"k":true}}}`,
			marshal(t, a.Merge(b)))
	})

	t.Run("result shares nothing with inputs", func(t *testing.T) {
		a := Capabilities{
			Tools:        &ListChanged{},
			Resources:    &ResourcesCapability{},
			Experimental: map[string]map[string]any{"a": {"v": 1}},
		}
		got := a.Merge(Capabilities{})
		got.Tools.ListChanged = true
		got.Resources.Subscribe = true
		got.Experimental["a"]["v"] = 9
		got.Experimental["new"] = nil
		assert.False(t, a.Tools.ListChanged)
		assert.False(t, a.Resources.Subscribe)
		assert.Equal(t, map[string]map[string]any{"a": {"v": 1}}, a.Experimental)
	})
}
