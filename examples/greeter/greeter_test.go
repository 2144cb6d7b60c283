package main

import (
	"context"
	"encoding/json"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mrtrkit/mrtrkit/mrtr"
	"github.com/mrtrkit/mrtrkit/mrtr/mrtrtest"
	"github.com/mrtrkit/mrtrkit/mrtr/typed"
)

// TestGreet is the README's second block, as it stands there.
func TestGreet(t *testing.T) {
	srv := mrtrtest.NewServer(t, "greeter")
	typed.AddTool(srv, mrtr.Tool{Name: "greet"}, greet)
	c := mrtrtest.NewClient(srv, mrtrtest.OnElicitation(
		func(ctx context.Context, r *mrtr.ElicitRequest) (*mrtr.ElicitResult, error) {
			return &mrtr.ElicitResult{Action: mrtr.Accepted, Content: map[string]any{"name": "Ada"}}, nil
		}))
	res, err := c.CallTool(context.Background(), "greet", nil)
	if err != nil || res.Text() != "Hello, Ada!" || res.Rounds != 1 {
		t.Fatalf("got %+v, %v", res, err)
	}
}

// greeter serves greet as the README's main does, to a client that gives
// the answers in turn (the last one again when they run out), and records
// the questions.
func greeter(t *testing.T, answers ...*mrtr.ElicitResult) (*mrtrtest.ToolResult, []*mrtr.ElicitRequest, error) {
	t.Helper()
	srv := mrtrtest.NewServer(t, "greeter")
	require.NoError(t, typed.AddTool(srv, mrtr.Tool{Name: "greet", Description: "Greets the user by name"}, greet))
	var asked []*mrtr.ElicitRequest
	c := mrtrtest.NewClient(srv, mrtrtest.OnElicitation(func(_ context.Context, r *mrtr.ElicitRequest) (*mrtr.ElicitResult, error) {
		asked = append(asked, r)
		a := answers[0]
		if len(answers) > 1 {
			answers = answers[1:]
		}
		return a, nil
	}))
	res, err := c.CallTool(context.Background(), "greet", nil)
	return res, asked, err
}

func accept(content string) *mrtr.ElicitResult {
	var m map[string]any
	if err := json.Unmarshal([]byte(content), &m); err != nil {
		panic(err)
	}
	return &mrtr.ElicitResult{Action: "accept", Content: m}
}

func TestGreetAsksATypedForm(t *testing.T) {
	res, asked, err := greeter(t, accept(`{"name":"Grace Hopper"}`))
	require.NoError(t, err)
	assert.Equal(t, "Hello, Grace Hopper!", res.Text())
	require.Len(t, asked, 1)
	assert.Equal(t, "What is your name?", asked[0].Message)
	schema, _ := json.Marshal(asked[0].RequestedSchema)
	assert.JSONEq(t, `{"type":"object","required":["name"],"properties":{"name":{"type":"string","title":"Your name","minLength":1,"maxLength":100}}}`, string(schema))
}

// Decline and cancel end the call at once with a clear text: the user is
// not asked again.
func TestGreetDeclinedOrCancelled(t *testing.T) {
	res, asked, err := greeter(t, &mrtr.ElicitResult{Action: "decline"})
	require.NoError(t, err)
	assert.Equal(t, "Hello, whoever you are! (You chose not to give your name.)", res.Text())
	assert.False(t, res.IsError)
	assert.Equal(t, 1, res.Rounds, "asked once")
	assert.Len(t, asked, 1)

	res, asked, err = greeter(t, &mrtr.ElicitResult{Action: "cancel"})
	require.NoError(t, err)
	assert.Equal(t, "Greeting cancelled.", res.Text())
	assert.Equal(t, 1, res.Rounds, "asked once")
	assert.Len(t, asked, 1)
}

// A bad answer is asked again, saying what was wrong; never greeted as
// "Hello, <nil>!" or "Hello, !".
func TestGreetReasksABadAnswer(t *testing.T) {
	for content, problem := range map[string]string{
		`{}`:             "Your name is required.",
		`{"name":5}`:     "Your name must be a string.",
		`{"name":""}`:    "Your name must be at least 1 character long.",
		`{"name":true}`:  "Your name must be a string.",
		`{"nom":"Ada"}`:  "Your name is required.",
		`{"Name":"Ada"}`: "Name is not allowed: names are case-sensitive (did you mean name?); Your name is required.",
		`{"name":"` + strings.Repeat("a", 101) + `"}`: "Your name must be at most 100 characters long.",
	} {
		res, asked, err := greeter(t, accept(content), accept(`{"name":"Ada"}`))
		require.NoError(t, err, content)
		assert.Equal(t, "Hello, Ada!", res.Text(), content)
		assert.Equal(t, 2, res.Rounds, content)
		require.Len(t, asked, 2, content)
		assert.Equal(t, "What is your name?\n\nYour last answer could not be used: "+problem, asked[1].Message, content)
		assert.Equal(t, asked[0].RequestedSchema, asked[1].RequestedSchema, "the same form")
	}
}

// Answers that keep failing are refused with -32602 naming the problem,
// after the third asking.
func TestGreetRefusesAfterThreeBadAnswers(t *testing.T) {
	res, asked, err := greeter(t, accept(`{"name":5}`))
	var me *mrtr.Error
	require.ErrorAs(t, err, &me, "%+v", res)
	assert.Equal(t, mrtr.CodeInvalidParams, me.Code)
	assert.Equal(t, `Invalid input response "name": name must be a string`, me.Message)
	assert.Len(t, asked, 3)
}

// A value no form field can hold is refused by the server before greet
// runs.
func TestGreetNullName(t *testing.T) {
	_, _, err := greeter(t, &mrtr.ElicitResult{Action: "accept", Content: map[string]any{"name": nil}})
	var me *mrtr.Error
	require.ErrorAs(t, err, &me)
	assert.Equal(t, mrtr.CodeInvalidParams, me.Code)
	assert.Contains(t, me.Message, "name")
}

// The README's section "A server in a few lines" shows this package's
// main.go (after its imports) and TestGreet above, as they are.
func TestReadmeShowsThisCode(t *testing.T) {
	readme, err := os.ReadFile("../../README.md")
	require.NoError(t, err)
	blocks := goBlocks(t, string(readme), "## A server in a few lines")
	require.Len(t, blocks, 2, "the section has the server and its test")

	src, err := os.ReadFile("main.go")
	require.NoError(t, err)
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, "main.go", src, 0)
	require.NoError(t, err)
	afterImports := fset.Position(f.Decls[0].End()).Offset // the import block comes first
	assert.Equal(t, normalize(string(src[afterImports:])), normalize(blocks[0]), "README's server block and main.go differ")

	src, err = os.ReadFile("greeter_test.go")
	require.NoError(t, err)
	f, err = parser.ParseFile(fset, "greeter_test.go", src, parser.ParseComments)
	require.NoError(t, err)
	var test string
	for _, d := range f.Decls {
		if fd, ok := d.(*ast.FuncDecl); ok && fd.Name.Name == "TestGreet" {
			test = string(src[fset.Position(fd.Pos()).Offset:fset.Position(fd.End()).Offset])
		}
	}
	require.NotEmpty(t, test)
	assert.Equal(t, normalize(test), normalize(blocks[1]), "README's test block and TestGreet differ")
}

// goBlocks returns the ```go blocks of the section that starts with
// heading, up to the next heading of its level.
func goBlocks(t *testing.T, md, heading string) []string {
	t.Helper()
	i := strings.Index(md, "\n"+heading+"\n")
	require.GreaterOrEqual(t, i, 0, "README has no section %q", heading)
	section := md[i+len(heading)+2:]
	if j := strings.Index(section, "\n## "); j >= 0 {
		section = section[:j]
	}
	var out []string
	for _, m := range regexp.MustCompile("(?s)```go\n(.*?)\n```").FindAllStringSubmatch(section, -1) {
		out = append(out, m[1])
	}
	return out
}

// normalize makes every run of white space one space, so that tabs,
// indentation and line breaks do not count.
func normalize(s string) string { return strings.Join(strings.Fields(s), " ") }
