package wire

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestHeaderDeclsValid(t *testing.T) {
	schema := []byte(`{"type":"object","properties":{
		"b":{"type":"object","properties":{"n":{"type":"integer","x-mcp-header":"N"}}},
		"a":{"type":"string","x-mcp-header":"A"},
		"c":{"type":"string"}}}`)
	for _, strict := range []bool{true, false} {
		decls, problems := HeaderDecls(schema, strict)
		require.Empty(t, problems)
		assert.Equal(t, []HeaderDecl{
			{Name: "A", Path: []string{"a"}, Type: "string"},
			{Name: "N", Path: []string{"b", "n"}, Type: "integer"},
		}, decls, "declarations in sorted order, strict=%v", strict)
	}
	decls, problems := HeaderDecls([]byte(`{"type":"object"}`), true)
	assert.Nil(t, decls)
	assert.Nil(t, problems)
}

func TestHeaderDeclsProblems(t *testing.T) {
	schema := []byte(`{"type":"object","x-mcp-header":"Root","properties":{
		"a":{"type":"string","x-mcp-header":"a b"},
		"b":{"type":"string","x-mcp-header":"Dup"},
		"c":{"type":"string","x-mcp-header":"dup"},
		"d":{"type":"number","x-mcp-header":"D"},
		"e":{"type":"array","items":{"type":"string","x-mcp-header":"Item"}}}}`)
	_, strict := HeaderDecls(schema, true)
	require.Len(t, strict, 1, "a strict walk stops at the first problem")
	assert.Equal(t, HeaderUnreachable, strict[0].Kind)
	assert.Equal(t, "/", strict[0].Where)

	decls, lenient := HeaderDecls(schema, false)
	assert.Equal(t, []HeaderDecl{{Name: "Dup", Path: []string{"b"}, Type: "string"}}, decls)
	kinds := make([]HeaderProblemKind, 0, len(lenient))
	for _, p := range lenient {
		kinds = append(kinds, p.Kind)
	}
	assert.Equal(t, []HeaderProblemKind{HeaderUnreachable, HeaderNotToken, HeaderDuplicate, HeaderBadType, HeaderUnreachable}, kinds)
	assert.Equal(t, "/e/items", lenient[4].Where)
	assert.Equal(t, "number", lenient[3].Type)
}

func TestHeaderDeclsPropertiesNotAnObject(t *testing.T) {
	schema := []byte(`{"type":"object","properties":[{"type":"string","x-mcp-header":"X"}]}`)
	decls, problems := HeaderDecls(schema, true)
	assert.Empty(t, decls)
	assert.Empty(t, problems, "a strict walk does not look inside it")
	_, problems = HeaderDecls(schema, false)
	require.Len(t, problems, 1, "a lenient walk does")
	assert.Equal(t, HeaderUnreachable, problems[0].Kind)
}

func TestHeaderDeclsSchemaInvalid(t *testing.T) {
	_, problems := HeaderDecls([]byte(`{"x-mcp-header":`), true)
	require.Len(t, problems, 1)
	assert.Equal(t, HeaderSchemaInvalid, problems[0].Kind)
	assert.Error(t, problems[0].Err)
}

func TestIsToken(t *testing.T) {
	assert.True(t, IsToken("Region-1_x.y~"))
	assert.False(t, IsToken(""))
	assert.False(t, IsToken("a b"))
	assert.False(t, IsToken("é"))
}
