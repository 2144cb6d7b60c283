package stdio_test

import (
	"encoding/json"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mrtrkit/mrtrkit/mrtr"
	"github.com/mrtrkit/mrtrkit/mrtr/legacy"
	"github.com/mrtrkit/mrtrkit/transport/stdio"
)

// A client of the initialize era: initialize makes the process a
// 2025-11-25 session; a multi-round tool sends its questions to the
// client as requests on stdout, with ids from 1, and the client's answers
// come back on stdin.
func TestLegacySession(t *testing.T) {
	f := newFixture(t)
	p := open(t, f.srv)
	p.send(initialize)
	m := p.response("0")
	require.Nil(t, m.Error, "%s", m.raw)
	var init struct {
		ProtocolVersion string          `json:"protocolVersion"`
		ServerInfo      json.RawMessage `json:"serverInfo"`
		ResultType      *string         `json:"resultType"`
	}
	require.NoError(t, json.Unmarshal(m.Result, &init))
	assert.Equal(t, "2025-11-25", init.ProtocolVersion)
	assert.JSONEq(t, `{"name":"t","version":"1"}`, string(init.ServerInfo))
	assert.Nil(t, init.ResultType)
	p.send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)

	// The scripted client: it answers every request of the server, and
	// returns the response to the call.
	run := func(id string) (msg, []msg) {
		var legs []msg
		for {
			m := p.until("a leg or the response to "+id, func(m msg) bool { return m.isResponse() && m.id() == id || m.Method != "" && m.ID != nil })
			if m.isResponse() {
				return m, legs
			}
			legs = append(legs, m)
			switch m.Method {
			case "elicitation/create":
				p.send(`{"jsonrpc":"2.0","id":` + m.id() + `,"result":{"action":"accept","content":{"name":"Ada"}}}`)
			case "sampling/createMessage":
				p.send(`{"jsonrpc":"2.0","id":` + m.id() + `,"result":{"role":"assistant","content":{"type":"text","text":"hi"},"model":"m"}}`)
			default:
				t.Fatalf("unexpected request %s", m.raw)
			}
		}
	}
	resp, legs := run("1" + sendLater(p, legacyCall("1", "wizard", `{}`)))
	require.Nil(t, resp.Error, "%s", resp.raw)
	assert.Equal(t, "Ada: hi", resp.text())
	assert.NotContains(t, string(resp.Result), "resultType")
	require.Len(t, legs, 2)
	assert.Equal(t, "elicitation/create", legs[0].Method)
	assert.Equal(t, "sampling/createMessage", legs[1].Method)
	for i, l := range legs {
		n, err := strconv.Atoi(l.id())
		require.NoError(t, err, "leg ids are integers: %s", l.id())
		assert.Equal(t, i+1, n, "leg ids count from 1")
	}

	// A second call: its legs go on counting.
	resp, legs = run("2" + sendLater(p, legacyCall("2", "wizard", `{}`)))
	assert.Equal(t, "Ada: hi", resp.text())
	assert.Equal(t, "3", legs[0].id())

	// Progress of a call of the session goes out as it happens.
	p.send(`{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"work","arguments":{"steps":2,"sleepMs":1,"tag":"l"},"_meta":{"progressToken":"lp"}}}`)
	for i := 1; i <= 2; i++ {
		m := p.next()
		require.Equal(t, "notifications/progress", m.Method, "%s", m.raw)
		assert.JSONEq(t, `"lp"`, string(m.param("progressToken")))
		assert.JSONEq(t, strconv.Itoa(i), string(m.param("progress")))
	}
	assert.Equal(t, "done l", p.response("3").text())
	require.NoError(t, p.close())
	noGoroutines(t)
}

// sendLater sends line and returns "", so that a call can be written as
// run(id + sendLater(...)) and the request goes out before waiting.
func sendLater(p *pipe, line string) string {
	p.send(line)
	return ""
}

// After initialize, modern requests (those with a _meta claim) are still
// served statelessly, next to the session's; a second initialize is
// refused; the session's stream (list changes, subscribed resources)
// goes to stdout.
func TestMixedEras(t *testing.T) {
	f := newFixture(t)
	p := open(t, f.srv)
	p.send(initialize)
	require.Nil(t, p.response("0").Error)

	p.send(call("1", "echo", `{"text":"modern"}`), legacyCall("2", "echo", `{"text":"legacy"}`))
	got := map[string]msg{}
	for len(got) < 2 {
		m := p.next()
		if m.isResponse() {
			got[m.id()] = m
		}
	}
	assert.Equal(t, "modern", got["1"].text())
	assert.Contains(t, string(got["1"].Result), `"resultType":"complete"`)
	assert.Equal(t, "legacy", got["2"].text())
	assert.NotContains(t, string(got["2"].Result), "resultType")

	p.send(`{"jsonrpc":"2.0","id":3,"method":"ping"}`)
	assert.JSONEq(t, `{}`, string(p.response("3").Result))

	p.send(`{"jsonrpc":"2.0","id":4,"method":"server/discover","params":{` + modernMeta("") + `}}`)
	m := p.response("4")
	require.Nil(t, m.Error, "%s", m.raw)
	assert.Contains(t, string(m.Result), "supportedVersions")

	p.send(`{"jsonrpc":"2.0","id":5,"method":"tools/list"}`)
	m = p.response("5")
	require.Nil(t, m.Error, "%s", m.raw)
	assert.NotContains(t, string(m.Result), "resultType")

	again := `{"jsonrpc":"2.0","id":6,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"c","version":"1"}}}`
	p.send(again)
	m = p.response("6")
	require.NotNil(t, m.Error)
	assert.Equal(t, int(mrtr.CodeInvalidRequest), m.Error.Code)

	// The session's stream: list changes and a subscribed resource.
	stop := notifyUntil(func() { f.srv.NotifyListChanged(true, false, false) })
	p.until("tools/list_changed", func(m msg) bool { return m.Method == "notifications/tools/list_changed" })
	close(stop)
	p.send(`{"jsonrpc":"2.0","id":7,"method":"resources/subscribe","params":{"uri":"mem://a"}}`)
	require.Nil(t, p.response("7").Error)
	stop = notifyUntil(func() { f.srv.NotifyResourceUpdated("mem://a") })
	m = p.until("resources/updated", func(m msg) bool { return m.Method == "notifications/resources/updated" })
	close(stop)
	assert.JSONEq(t, `"mem://a"`, string(m.param("uri")))
	assert.Empty(t, m.subscription(), "the initialize era has no subscription ids")
	require.NoError(t, p.close())
	noGoroutines(t)
}

// notifyUntil calls notify every few milliseconds until stop is closed:
// the session's stream starts (and restarts on a subscription) in the
// background, so a single notification could come before it listens.
func notifyUntil(notify func()) chan struct{} {
	stop := make(chan struct{})
	go func() {
		t := time.NewTicker(5 * time.Millisecond)
		defer t.Stop()
		for {
			notify()
			select {
			case <-stop:
				return
			case <-t.C:
			}
		}
	}()
	return stop
}

// A client of the initialize era cancelling a multi-round call: the
// session withdraws the request it sent the client (notifications/cancelled
// naming the leg), and the call gets no answer.
func TestLegacyCancel(t *testing.T) {
	f := newFixture(t)
	p := open(t, f.srv)
	p.send(initialize)
	require.Nil(t, p.response("0").Error)
	p.send(legacyCall(`"w"`, "wizard", `{}`))
	leg := p.until("the elicitation", func(m msg) bool { return m.Method == "elicitation/create" })
	p.send(cancelled(`"w"`))
	end := p.until("the leg's cancellation", func(m msg) bool { return m.Method == "notifications/cancelled" })
	assert.Equal(t, leg.id(), string(end.param("requestId")))
	// A late answer to the withdrawn leg is accepted and dropped.
	p.send(`{"jsonrpc":"2.0","id":` + leg.id() + `,"result":{"action":"decline"}}`)
	p.send(`{"jsonrpc":"2.0","id":1,"method":"ping"}`)
	p.response("1")
	require.NoError(t, p.close())
	for _, m := range p.all() {
		assert.NotEqual(t, `"w"`, m.id(), "the cancelled call was answered: %s", m.raw)
	}
	noGoroutines(t)
}

// An Engine given with WithLegacy serves the session, and its session is
// closed when Serve returns.
func TestWithLegacyEngine(t *testing.T) {
	f := newFixture(t)
	eng, err := legacy.New(f.srv, legacy.WithLogger(quiet))
	require.NoError(t, err)
	p := open(t, f.srv, stdio.WithLegacy(eng))
	p.send(initialize)
	require.Nil(t, p.response("0").Error)
	assert.Equal(t, 1, eng.Sessions())
	p.send(legacyCall("1", "echo", `{"text":"x"}`))
	assert.Equal(t, "x", p.response("1").text())
	require.NoError(t, p.close())
	assert.Equal(t, 0, eng.Sessions(), "the session ends with the pipe")
	noGoroutines(t)
}

// initialize with bad params gets -32602 and no session: the client may
// try again.
func TestInitializeRetry(t *testing.T) {
	f := newFixture(t)
	p := open(t, f.srv)
	p.send(`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{}}`)
	m := p.response("0")
	require.NotNil(t, m.Error)
	assert.Equal(t, int(mrtr.CodeInvalidParams), m.Error.Code)
	p.send(initialize)
	require.Nil(t, p.response("0").Error)
	p.send(legacyCall("1", "echo", `{"text":"x"}`))
	assert.Equal(t, "x", p.response("1").text())
	require.NoError(t, p.close())
}
