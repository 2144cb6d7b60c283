package interop_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The go-sdk client against examples/tour, the reference server of at most
// 80 lines: every tool (greet's form and haiku's completion answered by the
// client's handlers), the resource and the prompt, over Streamable HTTP at
// 2026-07-28 and pinned to 2025-11-25 (which the tour serves by default,
// through the bridge), and over stdio (-stdio) at both versions.
//
//	TOUR_BIN  use this prebuilt tour binary instead of building one

const tourPackage = "./examples/tour"

// tourBinary returns TOUR_BIN, or the tour built into a temporary folder
// of t.
func tourBinary(t *testing.T) string {
	t.Helper()
	if bin := os.Getenv("TOUR_BIN"); bin != "" {
		return bin
	}
	bin := filepath.Join(t.TempDir(), "tour")
	require.NoError(t, buildPackage(bin, tourPackage))
	return bin
}

// exerciseTour calls every tool of the tour on cs, reads its resource and
// gets its prompt, and checks the answers. greet's form is answered by
// fillForm (the name answerName) and haiku's question with answerSampling.
func exerciseTour(t *testing.T, cs *mcp.ClientSession) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	call := func(name string, args map[string]any) *mcp.CallToolResult {
		t.Helper()
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: args})
		require.NoErrorf(t, err, "CallTool(%s)", name)
		return res
	}

	tools, err := cs.ListTools(ctx, nil)
	require.NoError(t, err, "tools/list")
	var names []string
	for _, tool := range tools.Tools {
		names = append(names, tool.Name)
	}
	if slices.Sort(names); !slices.Equal(names, []string{"greet", "haiku", "sum"}) {
		assert.Fail(t, fmt.Sprintf("tools %v, want greet, haiku, sum", names))
	}

	res := call("sum", map[string]any{"a": 2, "b": 3.5})
	if got := textOf(t, res); got != `{"total":5.5}` {
		assert.Fail(t, fmt.Sprintf("sum: text %q", got))
	}
	if sc, _ := json.Marshal(res.StructuredContent); string(sc) != `{"total":5.5}` {
		assert.Fail(t, fmt.Sprintf("sum: structuredContent %s", sc))
	}
	if got := errorText(t, call("sum", map[string]any{"a": "two", "b": 3})); !strings.Contains(got, "a must be a number") {
		assert.Fail(t, fmt.Sprintf("sum with a wrong type: %q", got))
	}
	if got := textOf(t, call("greet", map[string]any{})); got != "Hello, "+answerName+"!" {
		assert.Fail(t, fmt.Sprintf("greet: %q", got))
	}
	if got := textOf(t, call("haiku", map[string]any{})); got != answerSampling {
		assert.Fail(t, fmt.Sprintf("haiku: %q", got))
	}

	r, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: "tour://about"})
	require.NoError(t, err, "resources/read")
	assert.Falsef(t, len(r.Contents) != 1 || r.Contents[0].MIMEType != "text/plain" || !strings.Contains(r.Contents[0].Text, "tour"), "resources/read: %+v", r.Contents)
	p, err := cs.GetPrompt(ctx, &mcp.GetPromptParams{Name: "review", Arguments: map[string]string{"code": "x := 1"}})
	require.NoError(t, err, "prompts/get")
	require.Falsef(t, len(p.Messages) != 1 || p.Messages[0].Role != "user", "prompts/get: %+v", p.Messages)
	if tc, ok := p.Messages[0].Content.(*mcp.TextContent); !ok || tc.Text != "Please review this Go code:\n\nx := 1" {
		assert.Fail(t, fmt.Sprintf("prompts/get: %+v", p.Messages[0].Content))
	}
}

// TestTour runs the tour over Streamable HTTP: the go-sdk client at
// 2026-07-28 (greet and haiku each take one input_required round), then
// pinned to 2025-11-25 with and without its standalone GET stream (the
// form and the completion are real server-to-client requests).
func TestTour(t *testing.T) {
	var url string
	var out lockedBuffer
	for attempt := 0; url == "" && attempt < 3; attempt++ { // a free port can be taken before the tour binds it
		u, stop, err := launchWith(tourBinary(t), &out)
		if err != nil {
			t.Logf("starting the tour: %v", err)
			continue
		}
		url = u
		t.Cleanup(stop)
	}
	require.NotEqualValuesf(t, "", url, "the tour did not start:\n%s", out.String())
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("tour output:\n%s", out.String())
		}
	})

	t.Run(modernVersion, func(t *testing.T) {
		s := connectWith(t, clientConfig{endpoint: url})
		if v := s.cs.InitializeResult().ProtocolVersion; v != modernVersion {
			require.FailNow(t, fmt.Sprintf("negotiated %s", v))
		}
		mark := s.wire.mark()
		exerciseTour(t, s.cs)
		exs := s.wire.since(mark)
		var greet, haiku []*exchange
		for _, ex := range exs {
			if ex.Method == "tools/call" && strings.Contains(string(ex.Params), `"name":"greet"`) {
				greet = append(greet, ex)
			}
			if ex.Method == "tools/call" && strings.Contains(string(ex.Params), `"name":"haiku"`) {
				haiku = append(haiku, ex)
			}
		}
		checkRounds(t, rounds(t, greet), 2)
		checkRounds(t, rounds(t, haiku), 2)
		assert.Falsef(t, s.inputs.elicitCount() != 1 || s.inputs.samplingCount() != 1, "the client answered %d forms and %d completions, want 1 and 1", s.inputs.elicitCount(), s.inputs.samplingCount())
		if t.Failed() {
			dumpWire(t, exs)
		}
	})
	t.Run(legacyVersion, func(t *testing.T) {
		eachStreamMode(t, func(t *testing.T, standalone bool) {
			s := connectLegacyTo(t, url, standalone, legacyHooks{})
			if v := s.cs.InitializeResult().ProtocolVersion; v != legacyVersion {
				require.FailNow(t, fmt.Sprintf("negotiated %s", v))
			}
			exerciseTour(t, s.cs)
			if m, want := methodsOf(serverRequests(s.wire.snapshot()...)), []string{"elicitation/create", "sampling/createMessage"}; !slices.Equal(m, want) {
				assert.Fail(t, fmt.Sprintf("server requests %v, want %v", m, want))
			}
			checkLegacyWire(t, s, s.wire.snapshot())
		})
	})
}

// TestStdioTour runs the tour with -stdio as a subprocess of the go-sdk
// client (CommandTransport), at 2026-07-28 and pinned to 2025-11-25; the
// tour must exit with status 0 by itself once its stdin ends.
func TestStdioTour(t *testing.T) {
	bin := tourBinary(t)
	eachStdioVersion(t, func(t *testing.T, version string) {
		s := connectStdioCmd(t, exec.Command(bin, "-stdio"), "", version, stdioHooks{})
		exerciseTour(t, s.cs)
		checkStdioWire(t, s)
		s.close(t)
	})
}
