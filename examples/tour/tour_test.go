package main

import (
	"context"
	"encoding/json"
	"go/scanner"
	"go/token"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mrtrkit/mrtrkit/mrtr"
	"github.com/mrtrkit/mrtrkit/mrtr/mrtrtest"
)

// maxCodeLines is the most lines of Go code the tour may hold, blank and
// comment lines excluded: the tour's promise (issue 19).
const maxCodeLines = 80

// tour returns the tour's server, registered by main.go's register, on a
// keyed, quiet test server.
func tour(t *testing.T) *mrtr.Server {
	t.Helper()
	srv := mrtrtest.NewServer(t, "tour")
	require.NoError(t, register(srv))
	return srv
}

// answer returns an elicitation handler that gives r and records what it
// was asked.
func answer(r *mrtr.ElicitResult, asked *[]*mrtr.ElicitRequest) mrtrtest.Option {
	return mrtrtest.OnElicitation(func(_ context.Context, q *mrtr.ElicitRequest) (*mrtr.ElicitResult, error) {
		*asked = append(*asked, q)
		return r, nil
	})
}

// model answers every sampling request with text and records the requests.
func model(text string, asked *[]*mrtr.SamplingRequest) mrtrtest.Option {
	return mrtrtest.OnSampling(func(_ context.Context, q *mrtr.SamplingRequest) (*mrtr.SamplingResult, error) {
		*asked = append(*asked, q)
		return &mrtr.SamplingResult{Role: mrtr.RoleAssistant, Model: "test-model", StopReason: "endTurn",
			Content: []mrtr.SamplingContent{{Type: "text", Text: text}}}, nil
	})
}

func TestToolsResourceAndPromptAreListed(t *testing.T) {
	c := mrtrtest.NewClient(tour(t))
	ctx := context.Background()

	raw, err := c.Call(ctx, "tools/list", nil)
	require.NoError(t, err)
	var tools struct {
		Tools []struct {
			Name         string          `json:"name"`
			InputSchema  json.RawMessage `json:"inputSchema"`
			OutputSchema json.RawMessage `json:"outputSchema"`
		} `json:"tools"`
	}
	require.NoError(t, json.Unmarshal(raw, &tools))
	require.Len(t, tools.Tools, 3)
	byName := map[string]int{}
	for i, tool := range tools.Tools {
		byName[tool.Name] = i
	}
	require.Contains(t, byName, "sum")
	require.Contains(t, byName, "greet")
	require.Contains(t, byName, "haiku")
	sum := tools.Tools[byName["sum"]]
	assert.JSONEq(t, `{"type":"object","additionalProperties":false,"required":["a","b"],
		"properties":{"a":{"type":"number","description":"the first number"},"b":{"type":"number","description":"the second number"}}}`,
		string(sum.InputSchema))
	assert.JSONEq(t, `{"type":"object","additionalProperties":false,"required":["total"],"properties":{"total":{"type":"number"}}}`,
		string(sum.OutputSchema))

	raw, err = c.Call(ctx, "resources/list", nil)
	require.NoError(t, err)
	assert.Contains(t, string(raw), `"uri":"tour://about"`)
	raw, err = c.Call(ctx, "prompts/list", nil)
	require.NoError(t, err)
	assert.Contains(t, string(raw), `"name":"review"`)
}

func TestSum(t *testing.T) {
	c := mrtrtest.NewClient(tour(t))
	res, err := c.CallTool(context.Background(), "sum", map[string]any{"a": 2, "b": 3.5})
	require.NoError(t, err)
	assert.False(t, res.IsError)
	assert.JSONEq(t, `{"total":5.5}`, string(res.StructuredContent))
	assert.JSONEq(t, `{"total":5.5}`, res.Text())
	assert.Equal(t, 0, res.Rounds)
}

// A wrong argument type is an isError result naming the argument, for the
// model to fix; sum does not run.
func TestSumWrongArgumentType(t *testing.T) {
	c := mrtrtest.NewClient(tour(t))
	res, err := c.CallTool(context.Background(), "sum", map[string]any{"a": "two", "b": 3})
	require.NoError(t, err)
	assert.True(t, res.IsError)
	assert.Contains(t, res.Text(), "a must be a number")
	assert.NotContains(t, res.Text(), "b ")
	assert.Empty(t, res.StructuredContent)

	res, err = c.CallTool(context.Background(), "sum", map[string]any{"a": 1})
	require.NoError(t, err)
	assert.True(t, res.IsError)
	assert.Contains(t, res.Text(), "b is required")
}

func TestGreetAsksTheName(t *testing.T) {
	var asked []*mrtr.ElicitRequest
	c := mrtrtest.NewClient(tour(t), answer(&mrtr.ElicitResult{Action: "accept", Content: map[string]any{"name": "Ada"}}, &asked))
	res, err := c.CallTool(context.Background(), "greet", nil)
	require.NoError(t, err)
	assert.Equal(t, "Hello, Ada!", res.Text())
	assert.Equal(t, 1, res.Rounds)
	assert.Equal(t, [][]string{{"name"}}, res.Asked)
	require.Len(t, asked, 1)
	assert.Equal(t, "What is your name?", asked[0].Message)
	schema, err := json.Marshal(asked[0].RequestedSchema)
	require.NoError(t, err)
	assert.JSONEq(t, `{"type":"object","required":["name"],"properties":{"name":{"type":"string","title":"Your name","minLength":1,"maxLength":100}}}`, string(schema))
}

// Declining or cancelling the form ends the call with a greeting, not an
// error, and the user is not asked again.
func TestGreetDeclinedOrCancelled(t *testing.T) {
	for _, action := range []mrtr.Action{mrtr.Declined, mrtr.Cancelled} {
		t.Run(string(action), func(t *testing.T) {
			var asked []*mrtr.ElicitRequest
			c := mrtrtest.NewClient(tour(t), answer(&mrtr.ElicitResult{Action: action}, &asked))
			res, err := c.CallTool(context.Background(), "greet", nil)
			require.NoError(t, err)
			assert.False(t, res.IsError)
			assert.Equal(t, "Hello, whoever you are!", res.Text())
			assert.Equal(t, 1, res.Rounds)
			assert.Len(t, asked, 1)
		})
	}
}

// An answer that breaks the form's rules is asked again, saying why.
func TestGreetReasksAnInvalidName(t *testing.T) {
	var asked []*mrtr.ElicitRequest
	answers := []map[string]any{{"name": strings.Repeat("a", 101)}, {"name": "Grace"}}
	c := mrtrtest.NewClient(tour(t), mrtrtest.OnElicitation(func(_ context.Context, q *mrtr.ElicitRequest) (*mrtr.ElicitResult, error) {
		asked = append(asked, q)
		return &mrtr.ElicitResult{Action: "accept", Content: answers[len(asked)-1]}, nil
	}))
	res, err := c.CallTool(context.Background(), "greet", nil)
	require.NoError(t, err)
	assert.Equal(t, "Hello, Grace!", res.Text())
	assert.Equal(t, 2, res.Rounds)
	require.Len(t, asked, 2)
	assert.Contains(t, asked[1].Message, "at most 100 characters")
}

// A client that does not declare elicitation cannot be asked: -32021.
func TestGreetWithoutElicitation(t *testing.T) {
	c := mrtrtest.NewClient(tour(t), mrtrtest.WithCapabilities(mrtr.ClientCapabilities{}))
	_, err := c.CallTool(context.Background(), "greet", nil)
	var me *mrtr.Error
	require.ErrorAs(t, err, &me)
	assert.Equal(t, mrtr.Code(-32021), me.Code)
}

func TestHaiku(t *testing.T) {
	var asked []*mrtr.SamplingRequest
	poem := "Leaves let go of light\nthe maple counts its red coins\nwind keeps none of them"
	c := mrtrtest.NewClient(tour(t), model(poem, &asked))
	res, err := c.CallTool(context.Background(), "haiku", nil)
	require.NoError(t, err)
	assert.False(t, res.IsError)
	assert.Equal(t, poem, res.Text())
	assert.Equal(t, 1, res.Rounds)
	assert.Equal(t, [][]string{{"haiku"}}, res.Asked)
	require.Len(t, asked, 1)
	require.Len(t, asked[0].Messages, 1)
	assert.Equal(t, mrtr.RoleUser, asked[0].Messages[0].Role)
	assert.Equal(t, 100, asked[0].MaxTokens)
}

// A client that does not declare sampling is told so with -32021, naming
// the capability it lacks; nothing is asked.
func TestHaikuWithoutSampling(t *testing.T) {
	var asked []*mrtr.SamplingRequest
	c := mrtrtest.NewClient(tour(t), model("never", &asked),
		mrtrtest.WithCapabilities(mrtr.ClientCapabilities{Elicitation: &mrtr.ElicitCapability{}}))
	res, err := c.CallTool(context.Background(), "haiku", nil)
	var me *mrtr.Error
	require.ErrorAs(t, err, &me, "%+v", res)
	assert.Equal(t, mrtr.Code(-32021), me.Code)
	data, err := json.Marshal(me.Data)
	require.NoError(t, err)
	assert.Contains(t, string(data), `"sampling"`)
	assert.Empty(t, asked)
}

func TestAboutResource(t *testing.T) {
	c := mrtrtest.NewClient(tour(t))
	res, err := c.ReadResource(context.Background(), "tour://about")
	require.NoError(t, err)
	require.Len(t, res.Contents, 1)
	got := res.Contents[0]
	assert.Equal(t, "tour://about", got.URI)
	assert.Equal(t, "text/plain", got.MIMEType)
	require.NotNil(t, got.Text)
	assert.Contains(t, *got.Text, "tour")

	_, err = c.ReadResource(context.Background(), "tour://nothing")
	var me *mrtr.Error
	require.ErrorAs(t, err, &me)
}

func TestReviewPrompt(t *testing.T) {
	c := mrtrtest.NewClient(tour(t))
	res, err := c.GetPrompt(context.Background(), "review", map[string]string{"code": "x := 1"})
	require.NoError(t, err)
	require.Len(t, res.Messages, 1)
	assert.Equal(t, "user", res.Messages[0].Role)
	assert.Equal(t, "text", res.Messages[0].Content.Type)
	assert.Equal(t, "Please review this Go code:\n\nx := 1", res.Messages[0].Content.Text)

	// The argument is required: without it the prompt is refused.
	_, err = c.GetPrompt(context.Background(), "review", nil)
	var me *mrtr.Error
	require.ErrorAs(t, err, &me)
	assert.Equal(t, mrtr.CodeInvalidParams, me.Code)
	assert.Contains(t, me.Message, "code")
}

// The tour's Go files (main.go and doc.go, tests excluded) hold at most
// maxCodeLines lines of Go code: lines with a token that is not a comment
// (blank lines, // lines and the lines of /* */ comments are not counted;
// a raw string counts every line it spans).
func TestMainIsAtMost80LinesOfCode(t *testing.T) {
	files, err := filepath.Glob("*.go")
	require.NoError(t, err)
	n := 0
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		src, err := os.ReadFile(name)
		require.NoError(t, err)
		n += codeLines(t, src)
	}
	t.Logf("%d lines of Go code in %v", n, files)
	assert.LessOrEqual(t, n, maxCodeLines, "the tour has %d lines of Go code, more than %d", n, maxCodeLines)
}

// codeLines counts the lines of src that hold a token other than a comment.
func codeLines(t *testing.T, src []byte) int {
	t.Helper()
	fset := token.NewFileSet()
	file := fset.AddFile("main.go", -1, len(src))
	var s scanner.Scanner
	s.Init(file, src, func(pos token.Position, msg string) { t.Errorf("%s: %s", pos, msg) }, scanner.ScanComments)
	lines := map[int]bool{}
	for {
		pos, tok, lit := s.Scan()
		if tok == token.EOF {
			break
		}
		if tok == token.COMMENT || (tok == token.SEMICOLON && lit == "\n") { // "\n": a semicolon the scanner inserted
			continue
		}
		first := file.Line(pos)
		for l := first; l <= first+strings.Count(lit, "\n"); l++ {
			lines[l] = true
		}
	}
	return len(lines)
}

// The counter counts what it should.
func TestCodeLines(t *testing.T) {
	for src, want := range map[string]int{
		"package main\n":                                  1,
		"package main\n\n// a comment\n":                  1,
		"package main\n/* a\nblock\n*/\nvar x = 1\n":      2,
		"package main\nvar x = 1 // trailing\n":           2,
		"package main\nvar s = `a\nb\nc`\n":               4,
		"package main\n\t/* x */ var y = 2 /* z\n*/\n":    2,
		"package main\nfunc f() {\n\treturn\n}\n\n\n\n":   4,
		"package main\n/*\nvar x = 1\n*/\n// var y = 2\n": 1,
	} {
		assert.Equal(t, want, codeLines(t, []byte(src)), "%q", src)
	}
}
