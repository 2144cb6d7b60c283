package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mrtrkit/mrtrkit/client"
	"github.com/mrtrkit/mrtrkit/mrtr"
	"github.com/mrtrkit/mrtrkit/transport/streamablehttp"
)

func TestDiscover(t *testing.T) {
	ts := newTestServer(t)
	r := runCLI(t, "-url", ts.url, "discover")
	require.Equal(t, 0, r.code, r.stderr)
	assert.Contains(t, r.stdout, "server:       mcpcall-test 1.2.3 (Test server)")
	assert.Contains(t, r.stdout, "versions:     2026-07-28")
	assert.Contains(t, r.stdout, "logging")
	assert.Contains(t, r.stdout, "Use greet to be greeted.")

	reqs := ts.rec.all("server/discover")
	require.Len(t, reqs, 1)
	h := reqs[0].Header
	assert.Equal(t, "2026-07-28", h.Get("MCP-Protocol-Version"))
	assert.Equal(t, "server/discover", h.Get("Mcp-Method"))
	assert.Empty(t, h.Values("Mcp-Name"))
	assert.Equal(t, "application/json", h.Get("Content-Type"))
	assert.Contains(t, h.Get("Accept"), "application/json")
	assert.Contains(t, h.Get("Accept"), "text/event-stream")
	meta := reqs[0].meta(t)
	assert.JSONEq(t, `"2026-07-28"`, string(meta["io.modelcontextprotocol/protocolVersion"]))
	assert.JSONEq(t, `{}`, string(meta["io.modelcontextprotocol/clientCapabilities"]), "no answer flags, no terminal: nothing declared")
	assert.JSONEq(t, `{"name":"mcpcall","version":"`+Version+`"}`, string(meta["io.modelcontextprotocol/clientInfo"]))
}

func TestToolsList(t *testing.T) {
	ts := newTestServer(t)
	r := runCLI(t, "tools", "list", "-url", ts.url) // flags after the command
	require.Equal(t, 0, r.code, r.stderr)
	for _, want := range []string{
		"greet — Greeter", "Greets you with a haiku.",
		"weather", "region (string, required): where",
		"header Mcp-Param-Region ← region", "header Mcp-Param-Days ← days",
		"boom", "nag", "cache:",
	} {
		assert.Contains(t, r.stdout, want)
	}

	r = runCLI(t, "-json", "-url", ts.url, "tools", "list")
	require.Equal(t, 0, r.code, r.stderr)
	lines := jsonLines(t, r.stdout)
	require.Len(t, lines, 1)
	assert.Equal(t, "result", str(t, lines[0]["type"]))
	assert.Equal(t, "tools/list", str(t, lines[0]["method"]))
	var res struct {
		Tools []struct{ Name string } `json:"tools"`
	}
	require.NoError(t, json.Unmarshal(lines[0]["result"], &res))
	assert.GreaterOrEqual(t, len(res.Tools), 6)
}

// greetFiles writes answer files for the greet tool.
func greetFiles(t *testing.T) (elicit, sampling string) {
	elicit = writeFile(t, "elicit.json", `{"name": {"name": "Ada"}}`)
	sampling = writeFile(t, "sampling.json", `{"haiku": {"role": "assistant", "model": "poet-1", "stopReason": "endTurn",
		"content": {"type": "text", "text": "Quiet servers wait / state sealed in every round / Ada, you are here"}}}`)
	return elicit, sampling
}

func TestMultiRoundFromFilesAndRoots(t *testing.T) {
	ts := newTestServer(t)
	elicit, sampling := greetFiles(t)
	dir := t.TempDir()
	r := runCLI(t, "-url", ts.url, "tools", "call", "greet",
		"--elicit-answers", elicit, "--sampling-answers", sampling,
		"--root", "file:///srv/project", "--root", dir)
	require.Equal(t, 0, r.code, "stdout:\n%s\nstderr:\n%s", r.stdout, r.stderr)
	out := r.stdout
	for _, want := range []string{
		"── round 1: the server needs input (2 requests) ──",
		"[name] elicitation/create (form): What is your name?",
		"fields: name (string, required)",
		`→ answered from --elicit-answers: accept {"name":"Ada"}`,
		"[roots] roots/list",
		"→ answered from --root: file:///srv/project, file://" + dir,
		"── round 2: the server needs input (1 request) ──",
		"[haiku] sampling/createMessage (maxTokens 60)",
		"system: You are a poet.",
		"user: Write a haiku for Ada",
		"→ answered from --sampling-answers: assistant (model poet-1, endTurn): Quiet servers wait",
		"requestState: ",
		"── result (after 2 rounds) ──",
		"Hello, Ada!\nQuiet servers wait / state sealed in every round / Ada, you are here",
		"structuredContent:\n{\n",
		`"model": "poet-1"`,
	} {
		assert.Contains(t, out, want)
	}

	// Three tools/call requests, each declaring what the flags can answer,
	// each with a new id; the retries echo the requestState of the answer
	// before them and carry only the latest round's answers.
	calls := ts.rec.all("tools/call")
	require.Len(t, calls, 3)
	ids := map[string]bool{}
	for i, c := range calls {
		assert.JSONEq(t, `{"elicitation":{"form":{},"url":{}},"roots":{},"sampling":{}}`,
			string(c.meta(t)["io.modelcontextprotocol/clientCapabilities"]))
		assert.Equal(t, "greet", c.Header.Get("Mcp-Name"))
		assert.Equal(t, "tools/call", c.Header.Get("Mcp-Method"))
		var body struct {
			ID     json.RawMessage `json:"id"`
			Params struct {
				InputResponses map[string]json.RawMessage `json:"inputResponses"`
				RequestState   *string                    `json:"requestState"`
			} `json:"params"`
		}
		require.NoError(t, json.Unmarshal(c.Body, &body))
		assert.False(t, ids[string(body.ID)], "request ids are never reused")
		ids[string(body.ID)] = true
		switch i {
		case 0:
			assert.Nil(t, body.Params.RequestState, "no requestState on the first call")
			assert.Nil(t, body.Params.InputResponses)
		case 1:
			require.NotNil(t, body.Params.RequestState, "mrtr seals a requestState in every round")
			assert.Len(t, body.Params.InputResponses, 2)
		case 2:
			require.NotNil(t, body.Params.RequestState)
			assert.Len(t, body.Params.InputResponses, 1, "only the latest round's answers")
			assert.Contains(t, body.Params.InputResponses, "haiku")
		}
	}
}

func TestJSONOutputShape(t *testing.T) {
	ts := newTestServer(t)
	elicit, sampling := greetFiles(t)
	r := runCLI(t, "-url", ts.url, "-json", "tools", "call", "greet",
		"--elicit-answers", elicit, "--sampling-answers", sampling, "--root", "file:///srv/project")
	require.Equal(t, 0, r.code, r.stderr)
	lines := jsonLines(t, r.stdout)
	require.Len(t, lines, 3, "two rounds and the result, one JSON object per line")

	for i, l := range lines[:2] {
		assert.Equal(t, "round", str(t, l["type"]))
		assert.JSONEq(t, fmt.Sprint(i+1), string(l["round"]))
		assert.Equal(t, "tools/call", str(t, l["method"]))
		assert.Equal(t, "greet", str(t, l["target"]))
		for _, k := range []string{"inputRequests", "inputResponses", "answeredBy"} {
			require.Contains(t, l, k)
		}
	}
	var asked map[string]struct {
		Method string `json:"method"`
	}
	require.NoError(t, json.Unmarshal(lines[0]["inputRequests"], &asked))
	assert.Equal(t, "elicitation/create", asked["name"].Method)
	assert.Equal(t, "roots/list", asked["roots"].Method)
	assert.JSONEq(t, `{"name":{"action":"accept","content":{"name":"Ada"}},"roots":{"roots":[{"uri":"file:///srv/project"}]}}`,
		string(lines[0]["inputResponses"]))
	assert.JSONEq(t, `{"name":"--elicit-answers","roots":"--root"}`, string(lines[0]["answeredBy"]))
	assert.Contains(t, lines[0], "requestState")
	assert.Contains(t, lines[1], "requestState")
	assert.JSONEq(t, `{"haiku":"--sampling-answers"}`, string(lines[1]["answeredBy"]))

	final := lines[2]
	assert.Equal(t, "result", str(t, final["type"]))
	assert.JSONEq(t, `2`, string(final["rounds"]))
	var res struct {
		ResultType        string          `json:"resultType"`
		StructuredContent json.RawMessage `json:"structuredContent"`
	}
	require.NoError(t, json.Unmarshal(final["result"], &res))
	assert.Equal(t, "complete", res.ResultType)
	assert.JSONEq(t, `{"name":"Ada","haiku":"Quiet servers wait / state sealed in every round / Ada, you are here","model":"poet-1","roots":["file:///srv/project"]}`,
		string(res.StructuredContent))
}

func TestJSONRPCErrorExitCode(t *testing.T) {
	ts := newTestServer(t)

	r := runCLI(t, "-url", ts.url, "tools", "call", "picky")
	assert.Equal(t, 1, r.code)
	assert.Contains(t, r.stderr, "JSON-RPC error -32602: picky refuses")
	assert.Contains(t, r.stderr, `data: {"why":"always"}`)

	r = runCLI(t, "-url", ts.url, "-json", "tools", "call", "no_such_tool")
	assert.Equal(t, 1, r.code)
	lines := jsonLines(t, r.stdout)
	require.Len(t, lines, 1)
	assert.Equal(t, "error", str(t, lines[0]["type"]))
	var e client.RPCError
	require.NoError(t, json.Unmarshal(lines[0]["error"], &e))
	assert.Equal(t, -32602, e.Code)
	assert.Contains(t, r.stderr, "tool \"no_such_tool\" is not in tools/list")

	// An isError result is exit 1 too, and says so.
	r = runCLI(t, "-url", ts.url, "tools", "call", "boom")
	assert.Equal(t, 1, r.code)
	assert.Contains(t, r.stdout, "error result (isError: true):\nthe boom tool always fails")
	assert.Contains(t, r.stderr, "the tool reported an error (result with isError: true)")
	assert.NotContains(t, r.stderr, "JSON-RPC error")

	// An envelope error keeps its HTTP status in the report.
	r = runCLI(t, "-url", ts.url, "--capabilities", `{}`, "tools", "call", "greet", "--elicit-answers", writeFile(t, "e.json", `{}`))
	assert.Equal(t, 1, r.code)
	assert.Contains(t, r.stderr, "JSON-RPC error -32021")
	assert.Contains(t, r.stderr, "(HTTP 400)")
}

func TestParamHeadersForXMcpHeader(t *testing.T) {
	ts := newTestServer(t)
	r := runCLI(t, "-url", ts.url, "tools", "call", "weather", "--args", `{"region":"Zürich","days":3,"metric":false,"city":"Oerlikon"}`)
	require.Equal(t, 0, r.code, r.stderr)
	assert.Contains(t, r.stdout, "sunny in Zürich for 3 days")

	calls := ts.rec.all("tools/call")
	require.Len(t, calls, 1)
	h := calls[0].Header
	assert.Equal(t, "=?base64?WsO8cmljaA==?=", h.Get("Mcp-Param-Region"), "non-ASCII values travel in the base64 form")
	v, err := streamablehttp.DecodeHeaderValue(h.Get("Mcp-Param-Region"))
	require.NoError(t, err)
	assert.Equal(t, "Zürich", v)
	assert.Equal(t, "3", h.Get("Mcp-Param-Days"))
	assert.Equal(t, "false", h.Get("Mcp-Param-Metric"))
	assert.Empty(t, h.Values("Mcp-Param-City"), "only declared arguments are mirrored")
	assert.Len(t, ts.rec.all("tools/list"), 1, "the tool's declarations come from one tools/list")

	// An absent argument has no header; the server accepts that too.
	r = runCLI(t, "-url", ts.url, "tools", "call", "weather", "--args", `{"region":"Bern","days":null}`)
	require.Equal(t, 0, r.code, r.stderr)
	calls = ts.rec.all("tools/call")
	assert.Equal(t, "Bern", calls[1].Header.Get("Mcp-Param-Region"))
	assert.Empty(t, calls[1].Header.Values("Mcp-Param-Days"))
	assert.Empty(t, calls[1].Header.Values("Mcp-Param-Metric"))
}

func TestElicitationWithoutTerminalFailsClearly(t *testing.T) {
	// mrtr refuses a call that would need a capability the request did
	// not declare: without a terminal or an answers file mcpcall declares
	// no elicitation, and says how to supply it.
	ts := newTestServer(t)
	r := runCLI(t, "-url", ts.url, "tools", "call", "greet")
	assert.Equal(t, 1, r.code)
	assert.Contains(t, r.stderr, "JSON-RPC error -32021")
	assert.Contains(t, r.stderr, "elicitation: run at a terminal or give --elicit-answers FILE")

	// A server that asks anyway: mcpcall cannot answer, and says why.
	fake := fakeServer(t, func(w http.ResponseWriter, id int64, _ int, _ []byte) {
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%d,"result":{"resultType":"input_required","inputRequests":{"who":{"method":"elicitation/create","params":{"mode":"form","message":"Who?","requestedSchema":{"type":"object","properties":{"n":{"type":"string"}}}}}}}}`, id)
	})
	r = runCLI(t, "-url", fake.URL, "tools", "call", "x")
	assert.Equal(t, 2, r.code)
	assert.Contains(t, r.stderr, `cannot answer: the server asked the user (elicitation "who"), but stdin is not a terminal and no --elicit-answers file was given`)

	// With an answers file lacking the key, the message names the file.
	r = runCLI(t, "-url", fake.URL, "tools", "call", "x", "--elicit-answers", writeFile(t, "e.json", `{"other":"decline"}`))
	assert.Equal(t, 2, r.code)
	assert.Contains(t, r.stderr, `--elicit-answers has no answer for "who" nor "*"`)
}

func TestInteractiveElicitation(t *testing.T) {
	ts := newTestServer(t)
	// The fields come in the order the server wrote them (mrtr sorts
	// them): accept; age: "old" (not a number), 200 (too big), 42;
	// colour: 3 (no such choice), Green (by title); email: bad, then
	// good; ok: Enter takes the default; tags: a,b,c (too many), 1,c.
	input := "a\nold\n200\n42\n3\nGreen\nnot-an-email\nada@example.com\n\na,b,c\n1,c\n"
	r := cli{stdin: input, terminal: true}.run(t, "-url", ts.url, "tools", "call", "form")
	require.Equal(t, 0, r.code, "stdout:\n%s\nstderr:\n%s", r.stdout, r.stderr)
	assert.Contains(t, r.stdout, `accept {"age":42,"colour":"g","email":"ada@example.com","ok":true,"tags":["a","c"]}`)
	for _, want := range []string{
		`? The server asks (elicitation "profile"): Your profile`,
		"Age (age) [integer, required, ≥ 0, ≤ 150]",
		`! "old" is not a number`, "! must be at most 150",
		"1) r — Red", "2) g — Green", `! "3" is not one of the choices`,
		"! choose at most 2",
		"default: true (press Enter)",
		"! not an email address",
	} {
		assert.Contains(t, r.stderr, want)
	}
	calls := ts.rec.all("tools/call")
	assert.JSONEq(t, `{"elicitation":{"form":{},"url":{}}}`, string(calls[0].meta(t)["io.modelcontextprotocol/clientCapabilities"]))

	// Declining sends no content.
	r = cli{stdin: "d\n", terminal: true}.run(t, "-url", ts.url, "tools", "call", "greet", "--root", "/tmp", "--sampling-answers", writeFile(t, "s.json", `["x"]`))
	require.Equal(t, 0, r.code, r.stderr)
	assert.Contains(t, r.stdout, "no name, no greeting (decline)")

	// The input ends before the form is filled: a clear failure.
	r = cli{stdin: "a\n", terminal: true}.run(t, "-url", ts.url, "tools", "call", "form")
	assert.Equal(t, 2, r.code)
	assert.Contains(t, r.stderr, `stdin ended while answering elicitation "profile"`)
}

func TestProgressAndLogNotificationsGoToStderr(t *testing.T) {
	ts := newTestServer(t)
	r := runCLI(t, "-url", ts.url, "--log-level", "info", "tools", "call", "slow")
	require.Equal(t, 0, r.code, r.stderr)
	assert.Equal(t, "done slowly\n", r.stdout)
	assert.Contains(t, r.stderr, "progress: 1/2 step 1\nprogress: 2/2 step 2\nlog [info] slow: halfway there\n")
	meta := ts.rec.all("tools/call")[0].meta(t)
	assert.JSONEq(t, `"info"`, string(meta["io.modelcontextprotocol/logLevel"]))
	assert.Contains(t, meta, "progressToken")

	// -json: notifications are JSON lines on stderr.
	r = runCLI(t, "-url", ts.url, "-json", "--log-level", "debug", "tools", "call", "slow")
	require.Equal(t, 0, r.code, r.stderr)
	notes := jsonLines(t, r.stderr)
	require.Len(t, notes, 3)
	assert.Equal(t, "notifications/progress", str(t, notes[0]["method"]))
	assert.Equal(t, "notifications/message", str(t, notes[2]["method"]))
}

func TestRoundLimit(t *testing.T) {
	ts := newTestServer(t)
	r := runCLI(t, "-url", ts.url, "--max-rounds", "3", "--elicit-answers", writeFile(t, "e.json", `{"*":"decline"}`), "tools", "call", "nag")
	assert.Equal(t, 2, r.code)
	assert.Contains(t, r.stdout, "── round 3:")
	assert.Contains(t, r.stdout, "── round 4: the server needs input again: again3; not answered (round limit) ──")
	assert.Contains(t, r.stderr, "still asks for input after 3 rounds; stopped (--max-rounds 3)")
	assert.Len(t, ts.rec.all("tools/call"), 4)
}

func TestPromptsAndResources(t *testing.T) {
	ts := newTestServer(t)
	r := runCLI(t, "-url", ts.url, "prompts", "list")
	require.Equal(t, 0, r.code, r.stderr)
	assert.Contains(t, r.stdout, "hello\n    Says hello.\n    · who (required): whom to greet")

	r = runCLI(t, "-url", ts.url, "prompts", "get", "hello", "--args", `{"who":"Ada"}`)
	require.Equal(t, 0, r.code, r.stderr)
	assert.Contains(t, r.stdout, "description: a greeting\n[user]\n  Say hello to Ada")
	assert.Equal(t, "hello", ts.rec.all("prompts/get")[0].Header.Get("Mcp-Name"))

	r = runCLI(t, "-url", ts.url, "prompts", "get", "hello", "--args", `{"who":7}`)
	assert.Equal(t, 2, r.code)
	assert.Contains(t, r.stderr, `prompt arguments are strings; "who" is a number`)

	r = runCLI(t, "-url", ts.url, "resources", "list")
	require.Equal(t, 0, r.code, r.stderr)
	assert.Contains(t, r.stdout, "test://readme  readme (text/plain)")

	r = runCLI(t, "-url", ts.url, "resources", "templates")
	require.Equal(t, 0, r.code, r.stderr)
	assert.Contains(t, r.stdout, "test://items/{id}  item")

	r = runCLI(t, "-url", ts.url, "resources", "read", "test://items/42")
	require.Equal(t, 0, r.code, r.stderr)
	assert.Contains(t, r.stdout, "[resource test://items/42 (text/plain)]\nitem 42")
	assert.Equal(t, "test://items/42", ts.rec.all("resources/read")[0].Header.Get("Mcp-Name"))
}

func TestUsageErrors(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"frobnicate"}, `unknown command "frobnicate"`},
		{nil, "no command given"},
		{[]string{"tools"}, "mcpcall tools needs a subcommand: list, call"},
		{[]string{"tools", "call"}, "missing argument: mcpcall tools call NAME"},
		{[]string{"tools", "list", "extra"}, `unexpected argument "extra"`},
		{[]string{"--no-such-flag", "discover"}, "flag provided but not defined: -no-such-flag"},
	} {
		r := runCLI(t, tc.args...)
		assert.Equal(t, 2, r.code, "%v", tc.args)
		assert.Contains(t, r.stderr, tc.want, "%v", tc.args)
		assert.Contains(t, r.stderr, "Usage: mcpcall [flags] COMMAND", "%v", tc.args)
	}

	r := runCLI(t, "-h")
	assert.Equal(t, 0, r.code)
	assert.Contains(t, r.stdout, "tools call NAME [--args JSON | --args-file FILE]")

	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"discover", "--args", "{}"}, "--args and --args-file apply only to tools call and prompts get"},
		{[]string{"-url", "ftp://x/mcp", "discover"}, "is not an absolute http or https URL"},
		{[]string{"--log-level", "loud", "discover"}, `--log-level "loud" is not one of`},
		{[]string{"--model", "m", "discover"}, "--model needs --model-url"},
		{[]string{"--root", "https://x/y", "discover"}, "roots are file:// URIs or paths"},
	} {
		r := runCLI(t, tc.args...)
		assert.Equal(t, 2, r.code, "%v", tc.args)
		assert.Contains(t, r.stderr, tc.want, "%v", tc.args)
	}
}

func TestBadArgsJSONNamesThePosition(t *testing.T) {
	r := runCLI(t, "tools", "call", "x", "--args", `{"a":1,}`)
	assert.Equal(t, 2, r.code)
	assert.Contains(t, r.stderr, "--args: invalid JSON at line 1, column 8 (byte 8)")
	assert.Contains(t, r.stderr, "    {\"a\":1,}\n           ^")

	f := writeFile(t, "args.json", "{\n  \"a\": 1,\n  \"b\": tru\n}\n")
	r = runCLI(t, "tools", "call", "x", "--args-file", f)
	assert.Equal(t, 2, r.code)
	assert.Contains(t, r.stderr, "invalid JSON at line 3, column 11")

	r = runCLI(t, "tools", "call", "x", "--args", `{"a":1`)
	assert.Equal(t, 2, r.code)
	assert.Contains(t, r.stderr, "invalid JSON at line 1, column 7 (byte 7): unexpected end of JSON input")

	r = runCLI(t, "tools", "call", "x", "--args", `[1,2]`)
	assert.Equal(t, 2, r.code)
	assert.Contains(t, r.stderr, "--args: must be a JSON object, not an array")

	r = runCLI(t, "tools", "call", "x", "--args", `{"a":1} {"b":2}`)
	assert.Equal(t, 2, r.code)
	assert.Contains(t, r.stderr, "invalid JSON at line 1, column 9")

	r = runCLI(t, "tools", "call", "x", "--sampling-answers", writeFile(t, "s.json", `{"k": 3}`))
	assert.Equal(t, 2, r.code)
	assert.Contains(t, r.stderr, `"k": an answer is a CreateMessageResult object or a string, not a number`)
}

func TestRequestStateCarriedByteForByte(t *testing.T) {
	// A raw server whose requestState holds escapes a re-encoding would
	// change (\/, \u00e9, \u003c, a literal <, &, U+2028).
	const state = `"s\/t\u00e9<&\u003c` + "\u2028" + `=="`
	var mu sync.Mutex
	var bodies [][]byte
	fake := fakeServer(t, func(w http.ResponseWriter, id int64, n int, body []byte) {
		mu.Lock()
		bodies = append(bodies, body)
		mu.Unlock()
		w.Header().Set("Content-Type", "text/event-stream")
		if n == 1 {
			fmt.Fprintf(w, "event: message\ndata: {\"jsonrpc\":\"2.0\",\"id\":%d,\"result\":{\"resultType\":\"input_required\",\"requestState\":%s,\n"+
				"data: \"inputRequests\":{\"r\":{\"method\":\"roots/list\"}}}}\n\n", id, state)
			return
		}
		fmt.Fprintf(w, ": keep-alive\n\ndata: {\"jsonrpc\":\"2.0\",\"id\":%d,\"result\":{\"content\":[{\"type\":\"text\",\"text\":\"ok\"}]}}\n\n", id)
	})
	r := runCLI(t, "-url", fake.URL, "--root", "file:///a", "tools", "call", "x", "--args", `{"n":1.50,"s":"<&>"}`)
	require.Equal(t, 0, r.code, r.stderr)
	assert.Contains(t, r.stdout, "ok")
	require.Len(t, bodies, 2)
	assert.Contains(t, string(bodies[1]), `"requestState":`+state, "requestState is echoed exactly")
	assert.Contains(t, string(bodies[1]), `"arguments":{"n":1.50,"s":"<&>"}`, "arguments are sent as written")
	assert.Contains(t, string(bodies[0]), `"arguments":{"n":1.50,"s":"<&>"}`)
}

func TestBearerToken(t *testing.T) {
	const token = "tok-s3cret-value"
	ts := newTestServer(t, streamablehttp.WithAuthenticator(streamablehttp.BearerAuthenticator(
		func(_ context.Context, tok string) (*mrtr.TokenInfo, error) {
			if tok != token {
				return nil, errors.New("bad token")
			}
			return &mrtr.TokenInfo{Subject: "ada"}, nil
		}, `Bearer resource_metadata="http://127.0.0.1/.well-known/oauth-protected-resource"`)))

	r := runCLI(t, "-url", ts.url, "discover")
	assert.Equal(t, 2, r.code)
	assert.Contains(t, r.stderr, "HTTP 401 Unauthorized")
	assert.Contains(t, r.stderr, `WWW-Authenticate: Bearer resource_metadata=`)

	elicit, sampling := greetFiles(t)
	r = cli{env: map[string]string{EnvToken: token}}.run(t, "-url", ts.url, "-v", "tools", "call", "greet",
		"--elicit-answers", elicit, "--sampling-answers", sampling, "--root", "/tmp")
	require.Equal(t, 0, r.code, r.stderr)
	assert.Contains(t, r.stderr, "> Authorization: [redacted]")
	assert.NotContains(t, r.stdout+r.stderr, token)
	for _, c := range ts.rec.all("tools/call") {
		assert.Equal(t, "Bearer "+token, c.Header.Get("Authorization"))
	}

	r = runCLI(t, "-url", ts.url, "-token", token, "discover")
	require.Equal(t, 0, r.code, r.stderr)
	assert.NotContains(t, r.stdout+r.stderr, token)
}

func TestSamplingByModelURL(t *testing.T) {
	const key = "sk-test-0123456789abcdef"
	var mu sync.Mutex
	var auth []string
	var prompts []string
	model := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var req struct {
			Model    string `json:"model"`
			Messages []struct {
				Role    string `json:"role"`
				Content string `json:"content"`
			} `json:"messages"`
		}
		_ = json.NewDecoder(r.Body).Decode(&req)
		mu.Lock()
		auth = append(auth, r.Header.Get("Authorization"))
		for _, m := range req.Messages {
			prompts = append(prompts, r.URL.Path+" "+req.Model+" "+m.Role+": "+m.Content)
		}
		mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprint(w, `{"model":"tiny-1","choices":[{"message":{"role":"assistant","content":"Servers keep no state"},"finish_reason":"stop"}]}`)
	}))
	defer model.Close()

	ts := newTestServer(t)
	r := cli{env: map[string]string{EnvModelAPIKey: key}}.run(t, "-url", ts.url, "tools", "call", "greet",
		"--elicit-answers", writeFile(t, "e.json", `{"*":{"name":"Bo"}}`), "--root", "/tmp",
		"--model-url", model.URL+"/v1", "--model", "tiny", "--model-yes")
	require.Equal(t, 0, r.code, r.stderr)
	assert.Contains(t, r.stdout, "→ answered from --model-url (tiny-1): assistant (model tiny-1, endTurn): Servers keep no state")
	assert.Contains(t, r.stdout, "Hello, Bo!\nServers keep no state")
	assert.NotContains(t, r.stdout+r.stderr, key)
	mu.Lock()
	defer mu.Unlock()
	assert.Equal(t, []string{"Bearer " + key}, auth)
	assert.Equal(t, []string{"/v1/chat/completions tiny system: You are a poet.", "/v1/chat/completions tiny user: Write a haiku for Bo"}, prompts)

	// With a key, plain http to a host that is not loopback is refused
	// before anything is sent.
	r = cli{env: map[string]string{EnvModelAPIKey: key}}.run(t, "-url", ts.url, "tools", "call", "greet",
		"--model-url", "http://models.example.com/v1", "--model", "m", "--model-yes")
	assert.Equal(t, 2, r.code)
	assert.Contains(t, r.stderr, "--model-url must be https unless its host is loopback")
	assert.NotContains(t, r.stderr, key)

	// The model's redirects are not followed.
	redirect := httptest.NewServer(http.RedirectHandler("http://models.example.com/steal", http.StatusTemporaryRedirect))
	defer redirect.Close()
	r = cli{env: map[string]string{EnvModelAPIKey: key}}.run(t, "-url", ts.url, "tools", "call", "greet",
		"--elicit-answers", writeFile(t, "e.json", `{"*":{"name":"Bo"}}`), "--root", "/tmp", "--model-url", redirect.URL, "--model", "m", "--model-yes")
	assert.Equal(t, 2, r.code)
	assert.Contains(t, r.stderr, "the model at --model-url failed: openai: HTTP 307")
	assert.NotContains(t, r.stderr, key)
}

func TestSamplingAnswersList(t *testing.T) {
	// A top-level list answers sampling requests in order, whatever key.
	ts := newTestServer(t)
	r := runCLI(t, "-url", ts.url, "-json", "tools", "call", "greet",
		"--elicit-answers", writeFile(t, "e.json", `{"name":{"action":"accept","content":{"name":"Cy"}}}`), "--root", "/tmp",
		"--sampling-answers", writeFile(t, "s.json", `["first answer", "second answer"]`))
	require.Equal(t, 0, r.code, r.stderr)
	lines := jsonLines(t, r.stdout)
	require.Len(t, lines, 3)
	assert.JSONEq(t, `{"haiku":"--sampling-answers (#1 of the list)"}`, string(lines[1]["answeredBy"]))
	assert.JSONEq(t, `{"haiku":{"role":"assistant","content":{"type":"text","text":"first answer"},"model":"mcpcall-answers","stopReason":"endTurn"}}`,
		string(lines[1]["inputResponses"]))
}

func TestTransportErrors(t *testing.T) {
	// Nothing listens: exit 2.
	dead := httptest.NewServer(http.NotFoundHandler())
	url := dead.URL + "/mcp"
	dead.Close()
	r := runCLI(t, "-url", url, "discover")
	assert.Equal(t, 2, r.code)
	assert.Contains(t, r.stderr, "transport error: server/discover:")

	// A redirect is reported, not followed.
	redirect := httptest.NewServer(http.RedirectHandler("/elsewhere", http.StatusPermanentRedirect))
	defer redirect.Close()
	r = runCLI(t, "-url", redirect.URL, "discover")
	assert.Equal(t, 2, r.code)
	assert.Contains(t, r.stderr, `HTTP 308 Permanent Redirect; a redirect to "/elsewhere", not followed`)

	// An unknown resultType is refused.
	odd := fakeServer(t, func(w http.ResponseWriter, id int64, _ int, _ []byte) {
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%d,"result":{"resultType":"task","task":{}}}`, id)
	})
	r = runCLI(t, "-url", odd.URL, "-json", "tools", "call", "x")
	assert.Equal(t, 2, r.code)
	assert.Contains(t, r.stderr, `unrecognised resultType "task"`)
	assert.Contains(t, r.stdout, `{"type":"transport_error","message":"tools/call: unrecognised resultType \"task\": the request did not declare the Tasks extension"}`)
}

func TestParseArgs(t *testing.T) {
	var o options
	fs := newFlagSet(&o, &env{getenv: func(string) string { return "" }})
	words, err := parseArgs(fs, []string{"-json", "tools", "call", "--args", `{}`, "x", "--", "-not-a-flag"})
	require.NoError(t, err)
	assert.Equal(t, []string{"tools", "call", "x", "-not-a-flag"}, words)
	assert.True(t, o.jsonOut)
	assert.Equal(t, "{}", o.args)
}

// A misspelt flag taken for the operand, with more words after it, is
// refused as the flag it most likely was, without echoing what follows.
func TestMisspeltFlagInOperandPlace(t *testing.T) {
	r := runCLI(t, "tools", "call", "-toekn", "SECRET", "x")
	assert.Equal(t, exitUsage, r.code)
	assert.Contains(t, r.stderr, "flag provided but not defined: -toekn (an operand that begins with - goes after --)")
	assert.NotContains(t, r.stderr, "SECRET")
}

// An operand that begins with "-" (one task id in 64 does) is read as the
// operand where the command expects one; anywhere else it is still a flag
// that does not exist.
func TestParseArgsOperandLikeAFlag(t *testing.T) {
	for _, tc := range []struct {
		args  []string
		words []string
		json  bool
		err   string
	}{
		{args: []string{"tasks", "get", "-K5hEuEnIRF5iRQ3RqNniA"}, words: []string{"tasks", "get", "-K5hEuEnIRF5iRQ3RqNniA"}},
		{args: []string{"-json", "tasks", "cancel", "--wLqcNlu", "-json"}, words: []string{"tasks", "cancel", "--wLqcNlu"}, json: true},
		{args: []string{"tasks", "wait", "-json", "-Kx"}, words: []string{"tasks", "wait", "-Kx"}, json: true},
		{args: []string{"tools", "call", "-dash", "--args", "{}"}, words: []string{"tools", "call", "-dash"}},
		{args: []string{"-args-file", "-", "tools", "call", "x"}, words: []string{"tools", "call", "x"}},
		{args: []string{"-task", "false", "x"}, words: []string{"false", "x"}},
		{args: []string{"-nope", "tools", "list"}, err: "flag provided but not defined: -nope"},
		{args: []string{"tasks", "get", "id", "-extra"}, err: "flag provided but not defined: -extra"},
		{args: []string{"tasks", "-K5h", "get"}, err: "flag provided but not defined: -K5h"},
		{args: []string{"tasks", "get", "-h"}, err: flag.ErrHelp.Error()},
		{args: []string{"tools", "list", "-url"}, err: "flag needs an argument: -url"},
		{args: []string{"tasks", "wait", "--timout=5m"}, err: "flag provided but not defined: -timout"},
	} {
		var o options
		fs := newFlagSet(&o, &env{getenv: func(string) string { return "" }})
		words, err := parseArgs(fs, tc.args)
		if tc.err != "" {
			assert.EqualError(t, err, tc.err, "%q", tc.args)
			continue
		}
		if assert.NoError(t, err, "%q", tc.args) {
			assert.Equal(t, tc.words, words, "%q", tc.args)
			assert.Equal(t, tc.json, o.jsonOut, "%q", tc.args)
		}
	}
}

func TestHeaderDecls(t *testing.T) {
	decls, problems := headerDecls(json.RawMessage(`{"type":"object","properties":{
		"a":{"type":"string","x-mcp-header":"A"},
		"n":{"type":"object","properties":{"b":{"type":"integer","x-mcp-header":"B"}}},
		"l":{"type":"array","items":{"type":"string","x-mcp-header":"L"}},
		"f":{"type":"number","x-mcp-header":"F"},
		"d":{"type":"string","x-mcp-header":"a"},
		"s":{"type":"string","x-mcp-header":"bad name"}}}`))
	require.Len(t, decls, 2)
	assert.Equal(t, headerDecl{Name: "A", Path: []string{"a"}, Type: "string"}, decls[0])
	assert.Equal(t, headerDecl{Name: "B", Path: []string{"n", "b"}, Type: "integer"}, decls[1])
	assert.Len(t, problems, 4)
	joined := strings.Join(problems, "\n")
	assert.Contains(t, joined, `"a" is declared twice`)
	assert.Contains(t, joined, `/f: property type must be string, integer or boolean, not "number"`)
	assert.Contains(t, joined, `/l/items: only properties reached from the root through "properties" may be mirrored`)
	assert.Contains(t, joined, `"bad name" is not a valid HTTP header token`)

	for _, tc := range []struct {
		typ, raw, want string
		ok             bool
	}{
		{"string", `"x y"`, "x y", true},
		{"string", `3`, "", false},
		{"integer", `1e2`, "100", true},
		{"integer", `1.5`, "", false},
		{"integer", `9007199254740992`, "", false},
		{"boolean", `true`, "true", true},
		{"boolean", `"true"`, "", false},
	} {
		got, ok := headerValue(tc.typ, json.RawMessage(tc.raw))
		assert.Equal(t, tc.ok, ok, "%s %s", tc.typ, tc.raw)
		assert.Equal(t, tc.want, got, "%s %s", tc.typ, tc.raw)
	}
}

func TestURLElicitation(t *testing.T) {
	ts := newTestServer(t)
	r := runCLI(t, "-url", ts.url, "tools", "call", "open_url", "--elicit-answers", writeFile(t, "e.json", `{"link":"accept"}`))
	require.Equal(t, 0, r.code, r.stderr)
	assert.Contains(t, r.stdout, "[link] elicitation/create (url): Sign in to continue\n  url: https://auth.example.com/start?x=1\n  → answered from --elicit-answers: accept\n")
	assert.Contains(t, r.stdout, "link accept")

	r = cli{stdin: "x\nd\n", terminal: true}.run(t, "-url", ts.url, "tools", "call", "open_url")
	require.Equal(t, 0, r.code, r.stderr)
	assert.Contains(t, r.stderr, "URL: https://auth.example.com/start?x=1\n  (it goes to auth.example.com; mcpcall does not open it")
	assert.Contains(t, r.stderr, "! answer a, d or c")
	assert.Contains(t, r.stdout, "link decline")

	// Form content cannot answer a url-mode request.
	r = runCLI(t, "-url", ts.url, "tools", "call", "open_url", "--elicit-answers", writeFile(t, "e.json", `{"*":{"name":"x"}}`))
	assert.Equal(t, 2, r.code)
	assert.Contains(t, r.stderr, `elicitation "link" is in url mode, which takes an action`)
}

func TestElicitAnswerWarnings(t *testing.T) {
	ts := newTestServer(t)
	r := runCLI(t, "-url", ts.url, "tools", "call", "form", "--elicit-answers",
		writeFile(t, "e.json", `{"profile":{"age":"old","colour":"blue","extra":1}}`))
	require.Equal(t, 0, r.code, r.stderr)
	for _, want := range []string{
		`warning: [profile] field "age": expected a number, got a string; sent anyway`,
		`warning: [profile] field "colour": "blue" is not one of the choices; sent anyway`,
		`warning: [profile] field "extra" is not in the form; sent anyway`,
	} {
		assert.Contains(t, r.stderr, want)
	}
}

func TestNonASCIINameIsEncoded(t *testing.T) {
	ts := newTestServer(t)
	r := runCLI(t, "-url", ts.url, "prompts", "get", "grüße")
	require.Equal(t, 0, r.code, r.stderr)
	assert.Contains(t, r.stdout, "Grüß Gott")
	h := ts.rec.all("prompts/get")[0].Header.Get("Mcp-Name")
	assert.Equal(t, streamablehttp.EncodeHeaderValue("grüße"), h)
	assert.True(t, strings.HasPrefix(h, "=?base64?"), h)
}

func TestParamHeaderRefreshOnMismatch(t *testing.T) {
	// The tool gains an x-mcp-header declaration between the first
	// tools/list and the call: the server answers -32020, mcpcall lists the
	// tools again and retries once with the header (the client does).
	var mu sync.Mutex
	lists := 0
	var regions []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var req struct {
			ID     int64  `json:"id"`
			Method string `json:"method"`
		}
		_ = json.NewDecoder(r.Body).Decode(&req)
		w.Header().Set("Content-Type", "application/json")
		mu.Lock()
		defer mu.Unlock()
		switch req.Method {
		case "server/discover":
			fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%d,"result":{"resultType":"complete","supportedVersions":["2026-07-28"],"capabilities":{"tools":{}}}}`, req.ID)
		case "tools/list":
			lists++
			schema := `{"type":"object","properties":{"region":{"type":"string"}}}`
			if lists > 1 {
				schema = `{"type":"object","properties":{"region":{"type":"string","x-mcp-header":"Region"}}}`
			}
			fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%d,"result":{"resultType":"complete","tools":[{"name":"t","inputSchema":%s}],"ttlMs":0,"cacheScope":"public"}}`, req.ID, schema)
		default:
			regions = append(regions, r.Header.Get("Mcp-Param-Region"))
			if r.Header.Get("Mcp-Param-Region") == "" {
				w.WriteHeader(http.StatusBadRequest)
				fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%d,"error":{"code":-32020,"message":"Mcp-Param-Region header is required"}}`, req.ID)
				return
			}
			fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%d,"result":{"resultType":"complete","content":[{"type":"text","text":"ok"}]}}`, req.ID)
		}
	}))
	defer srv.Close()
	r := runCLI(t, "-url", srv.URL, "tools", "call", "t", "--args", `{"region":"eu"}`)
	require.Equal(t, 0, r.code, r.stderr)
	assert.Contains(t, r.stdout, "ok")
	mu.Lock()
	defer mu.Unlock()
	assert.Equal(t, []string{"", "eu"}, regions)
	assert.Equal(t, 2, lists)
}

func TestDiscoverWarnsWhenVersionNotListed(t *testing.T) {
	// What the go-sdk v1.8.0 everything-server does in its stateful mode.
	fake := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var req struct {
			ID int64 `json:"id"`
		}
		_ = json.NewDecoder(r.Body).Decode(&req)
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%d,"result":{"resultType":"complete","supportedVersions":["2025-11-25"],"capabilities":{},"ttlMs":0,"cacheScope":"public"}}`, req.ID)
	}))
	defer fake.Close()
	r := runCLI(t, "-url", fake.URL, "discover")
	assert.Equal(t, 0, r.code)
	assert.Contains(t, r.stderr, "does not list 2026-07-28 among its supportedVersions (2025-11-25)")
	assert.Contains(t, r.stdout, "server:       (no serverInfo in _meta)")
}

func TestTimeoutRestartsOnEvents(t *testing.T) {
	// Events every 40ms keep a 150ms timeout from firing; 300ms of silence
	// does not.
	fake := fakeServer(t, func(w http.ResponseWriter, id int64, _ int, body []byte) {
		w.Header().Set("Content-Type", "text/event-stream")
		fl := w.(http.Flusher)
		silent := strings.Contains(string(body), `"silent"`)
		for i := 0; i < 8; i++ {
			if silent && i == 1 {
				time.Sleep(300 * time.Millisecond)
			}
			fmt.Fprintf(w, "data: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/progress\",\"params\":{\"progressToken\":\"p\",\"progress\":%d}}\n\n", i)
			fl.Flush()
			time.Sleep(40 * time.Millisecond)
		}
		fmt.Fprintf(w, "data: {\"jsonrpc\":\"2.0\",\"id\":%d,\"result\":{\"resultType\":\"complete\",\"content\":[{\"type\":\"text\",\"text\":\"finally\"}]}}\n\n", id)
	})
	r := runCLI(t, "-url", fake.URL, "-timeout", "150ms", "tools", "call", "busy")
	require.Equal(t, 0, r.code, r.stderr)
	assert.Contains(t, r.stdout, "finally")
	assert.Contains(t, r.stderr, "progress: 7\n")

	r = runCLI(t, "-url", fake.URL, "-timeout", "150ms", "tools", "call", "silent")
	assert.Equal(t, 2, r.code)
	assert.Contains(t, r.stderr, "tools/call: the server sent nothing for 150ms (-timeout)")
}
