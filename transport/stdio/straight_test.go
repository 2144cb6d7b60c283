package stdio_test

import (
	"context"
	"encoding/json"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mrtrkit/mrtrkit/internal/wire"
	"github.com/mrtrkit/mrtrkit/mrtr"
	"github.com/mrtrkit/mrtrkit/mrtr/mrtrtest"
)

// straightServer serves a tool that asks three dependent questions in
// straight-line code (a form, a completion using the name, the roots)
// and counts its runs.
func straightServer(t *testing.T) (*mrtr.Server, *atomic.Int32) {
	var runs atomic.Int32
	srv := mrtrtest.NewServer(t, "straight")
	require.NoError(t, srv.AddTool(mrtr.Tool{Name: "straight"}, mrtr.HandlerFunc(func(ctx context.Context, req *mrtr.Request) (mrtr.Result, error) {
		runs.Add(1)
		who, err := mrtr.Elicit(ctx, req, "name", &mrtr.ElicitRequest{Message: "Name?", RequestedSchema: &mrtr.ElicitSchema{Type: "object",
			Properties: map[string]json.RawMessage{"name": json.RawMessage(`{"type":"string"}`)}}})
		if err != nil {
			return nil, err
		}
		name, _ := who.Content["name"].(string)
		draft, err := mrtr.Sample(ctx, req, "draft", &mrtr.SamplingRequest{Messages: []mrtr.SamplingMessage{mrtr.UserText("for " + name)}, MaxTokens: 9})
		if err != nil {
			return nil, err
		}
		roots, err := mrtr.ListRoots(ctx, req, "where")
		if err != nil {
			return nil, err
		}
		return mrtr.TextResult(name + " " + draft.Text() + " " + roots.Roots[0].URI), nil
	})))
	return srv, &runs
}

// The same straight-line handler over stdio: a 2026-07-28 client retries
// with each round's answer and the requestState; a 2025-11-25 session gets
// each question as a request on stdout and answers on stdin.
func TestStraightLineThreeRoundsOverStdioBothEras(t *testing.T) {
	srv, runs := straightServer(t)
	p := open(t, srv)
	answers := map[string]string{
		"name":  `{"action":"accept","content":{"name":"Ada"}}`,
		"draft": `{"role":"assistant","content":{"type":"text","text":"hi"},"model":"m"}`,
		"where": `{"roots":[{"uri":"file:///home/u"}]}`,
	}
	meta := `"_meta":{"` + wire.MetaProtocolVersion + `":"2026-07-28","` + wire.MetaClientCapabilities + `":{"elicitation":{},"sampling":{},"roots":{}}}`
	params := `"name":"straight","arguments":{},` + meta
	var asked []string
	for round := 0; ; round++ {
		require.Less(t, round, 4)
		p.send(`{"jsonrpc":"2.0","id":` + string(rune('1'+round)) + `,"method":"tools/call","params":{` + params + `}}`)
		m := p.response(string(rune('1' + round)))
		require.Nil(t, m.Error, "%s", m.raw)
		var res struct {
			ResultType    string                     `json:"resultType"`
			InputRequests map[string]json.RawMessage `json:"inputRequests"`
			RequestState  string                     `json:"requestState"`
		}
		require.NoError(t, json.Unmarshal(m.Result, &res))
		if res.ResultType == "complete" {
			assert.Equal(t, "Ada hi file:///home/u", m.text())
			break
		}
		require.Len(t, res.InputRequests, 1)
		for k := range res.InputRequests {
			asked = append(asked, k)
			params = `"name":"straight","arguments":{},"requestState":"` + res.RequestState + `","inputResponses":{"` + k + `":` + answers[k] + `},` + meta
		}
	}
	assert.Equal(t, []string{"name", "draft", "where"}, asked)
	assert.EqualValues(t, 4, runs.Load())

	runs.Store(0)
	p = open(t, srv) // a process of the other era
	p.send(`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25",` +
		`"capabilities":{"elicitation":{},"sampling":{},"roots":{}},"clientInfo":{"name":"scripted","version":"1"}}}`)
	require.Nil(t, p.response("0").Error)
	p.send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	p.send(legacyCall("9", "straight", `{}`))
	var methods []string
	for {
		m := p.until("a leg or the response", func(m msg) bool { return m.isResponse() && m.id() == "9" || m.Method != "" && m.ID != nil })
		if m.isResponse() {
			require.Nil(t, m.Error, "%s", m.raw)
			assert.Equal(t, "Ada hi file:///home/u", m.text())
			break
		}
		methods = append(methods, m.Method)
		key := map[string]string{"elicitation/create": "name", "sampling/createMessage": "draft", "roots/list": "where"}[m.Method]
		require.NotEmpty(t, key, "%s", m.raw)
		p.send(`{"jsonrpc":"2.0","id":` + m.id() + `,"result":` + answers[key] + `}`)
	}
	assert.Equal(t, []string{"elicitation/create", "sampling/createMessage", "roots/list"}, methods)
	assert.EqualValues(t, 4, runs.Load())
}
