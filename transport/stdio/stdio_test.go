package stdio_test

import (
	"context"
	"encoding/json"
	"io"
	"os"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mrtrkit/mrtrkit/discover"
	"github.com/mrtrkit/mrtrkit/internal/testkit"
	"github.com/mrtrkit/mrtrkit/internal/wire"
	"github.com/mrtrkit/mrtrkit/mrtr"
	"github.com/mrtrkit/mrtrkit/mrtr/legacy"
	"github.com/mrtrkit/mrtrkit/transport/stdio"
)

// 32 calls in flight at once over one pipe, each reporting progress and
// a log line while it sleeps: every line the server writes is one whole
// message, every call is answered exactly once, and its notifications
// come before its answer, in order.
func TestConcurrentCalls(t *testing.T) {
	f := newFixture(t)
	p := open(t, f.srv)
	const n = 32
	var lines []string
	for i := range n {
		meta := `"progressToken":"tok` + strconv.Itoa(i) + `","` + wire.MetaLogLevel + `":"info"`
		lines = append(lines, callMeta(strconv.Itoa(i+1), "work", `{"steps":4,"sleepMs":3,"tag":"`+strconv.Itoa(i)+`"}`, meta))
	}
	p.send(lines...)

	answered := map[string]int{}
	progress := map[string][]float64{}
	logged := map[string]bool{}
	for len(answered) < n {
		m := p.next()
		switch {
		case m.isResponse():
			answered[m.id()]++
			require.Nil(t, m.Error, "%s", m.raw)
			i, _ := strconv.Atoi(m.id())
			assert.Equal(t, "done "+strconv.Itoa(i-1), m.text())
			tok := `"tok` + strconv.Itoa(i-1) + `"`
			assert.Equal(t, []float64{1, 2, 3, 4}, progress[tok], "progress of call %s before its answer", m.id())
			assert.True(t, logged["finished "+strconv.Itoa(i-1)], "log line of call %s before its answer", m.id())
		case m.Method == "notifications/progress":
			var v float64
			require.NoError(t, json.Unmarshal(m.param("progress"), &v))
			tok := string(m.param("progressToken"))
			progress[tok] = append(progress[tok], v)
		case m.Method == "notifications/message":
			var s string
			require.NoError(t, json.Unmarshal(m.param("data"), &s))
			logged[s] = true
		default:
			t.Fatalf("unexpected message %s", m.raw)
		}
	}
	require.NoError(t, p.close())
	for i := 1; i <= n; i++ {
		assert.Equal(t, 1, answered[strconv.Itoa(i)], "answers to id %d", i)
	}
	responses := 0
	for _, m := range p.all() {
		if m.isResponse() {
			responses++
		}
	}
	assert.Equal(t, n, responses, "no answer after the last")
	noGoroutines(t)
}

// The input ending while a call runs: Serve cancels the call, writes
// whatever was answered (before the end and during the shutdown) and
// returns nil.
func TestEOFDuringCall(t *testing.T) {
	f := newFixture(t)
	p := open(t, f.srv)
	p.send(call("1", "echo", `{"text":"before"}`))
	assert.Equal(t, "before", p.response("1").text())

	p.send(call("2", "block", `{"tag":"b"}`), call("3", "stubborn", `{"tag":"s","sleepMs":50}`))
	got := map[string]bool{<-f.started: true, <-f.started: true}
	require.Equal(t, map[string]bool{"b": true, "s": true}, got)
	require.NoError(t, p.close(), "EOF is a clean end")

	select {
	case cause := <-f.causes:
		assert.ErrorIs(t, cause, stdio.ErrShutdown)
	default:
		t.Fatal("the call in flight was not cancelled")
	}
	byID := map[string]msg{}
	for _, m := range p.all() {
		if m.isResponse() {
			_, dup := byID[m.id()]
			assert.False(t, dup, "id %s answered twice", m.id())
			byID[m.id()] = m
		}
	}
	assert.Equal(t, "before", byID["1"].text())
	// The call that finished its work during the shutdown is answered.
	assert.Equal(t, "stubborn s", byID["3"].text())
	// The call that stopped is answered with the error it ended with.
	require.NotNil(t, byID["2"].Error)
	assert.Equal(t, int(mrtr.CodeInternalError), byID["2"].Error.Code)
	noGoroutines(t)
}

// A call that ignores its cancellation past the shutdown timeout does not
// hold Serve; its late answer is dropped.
func TestShutdownTimeout(t *testing.T) {
	f := newFixture(t)
	p := open(t, f.srv, stdio.WithShutdownTimeout(50*time.Millisecond))
	p.send(call("1", "stuck", `{"tag":"x"}`))
	<-f.started
	start := time.Now()
	require.NoError(t, p.close())
	assert.Less(t, time.Since(start), 2*time.Second)
	close(f.release)
	for _, m := range p.all() {
		assert.NotEqual(t, "1", m.id(), "a late answer was written: %s", m.raw)
	}
	noGoroutines(t)
}

// Malformed lines are answered with an error and skipped; the server goes
// on. A line is one message: blank lines are ignored and a trailing \r is
// tolerated.
func TestMalformedLines(t *testing.T) {
	f := newFixture(t)
	p := open(t, f.srv)

	p.send("this is not json")
	m := p.next()
	require.NotNil(t, m.Error)
	assert.Equal(t, int(mrtr.CodeParseError), m.Error.Code)
	assert.Contains(t, string(m.raw), `"id":null`)

	p.send(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":`) // cut short
	m = p.next()
	assert.Equal(t, int(mrtr.CodeParseError), m.Error.Code)

	p.send(`[{"jsonrpc":"2.0","id":2,"method":"ping"}]`)
	m = p.next()
	assert.Equal(t, int(mrtr.CodeInvalidRequest), m.Error.Code)
	assert.Contains(t, string(m.raw), `"id":null`)

	p.send(`{"jsonrpc":"2.0","id":3,"method":5}`)
	m = p.next()
	assert.Equal(t, int(mrtr.CodeInvalidRequest), m.Error.Code)
	assert.Equal(t, "3", m.id(), "the id is echoed when it can be read")

	p.send("", "   ", "\t\r")
	p.send(call("4", "echo", `{"text":"crlf"}`) + "\r")
	m = p.next()
	assert.Equal(t, "4", m.id(), "blank lines are ignored: %s", m.raw)
	assert.Equal(t, "crlf", m.text())
	require.NoError(t, p.close())
	noGoroutines(t)
}

// A 10 MiB line is refused with a clear error, skipped, and the next
// request is served.
func TestHugeLine(t *testing.T) {
	f := newFixture(t)
	p := open(t, f.srv)
	huge := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{"text":"` +
		strings.Repeat("a", 10<<20) + `"},` + modernMeta("") + `}}`
	go p.send(huge, call("2", "echo", `{"text":"after"}`))
	m := p.next()
	require.NotNil(t, m.Error, "%s", m.raw)
	assert.Equal(t, int(mrtr.CodeInvalidRequest), m.Error.Code)
	assert.Contains(t, m.Error.Message, "longer than 4194304 bytes")
	assert.Contains(t, string(m.raw), `"id":null`)
	m = p.next()
	assert.Equal(t, "2", m.id())
	assert.Equal(t, "after", m.text())
	require.NoError(t, p.close())
	noGoroutines(t)
}

// A message just under the limit is served whole.
func TestLargeMessage(t *testing.T) {
	f := newFixture(t)
	const limit = 1 << 20
	p := open(t, f.srv, stdio.WithMaxLineBytes(limit))
	text := strings.Repeat("b", limit-1024)
	go p.send(call("1", "echo", `{"text":"`+text+`"}`))
	assert.Equal(t, text, p.response("1").text())
	require.NoError(t, p.close())
}

// The line limit counts the message alone: a line of exactly the limit is
// served, with or without \r, and one byte more is refused.
func TestLineLimit(t *testing.T) {
	f := newFixture(t)
	const limit = 300
	p := open(t, f.srv, stdio.WithMaxLineBytes(limit))
	pad := func(id string) string {
		l := call(id, "echo", `{"text":"x"}`)
		return l[:len(l)-1] + strings.Repeat(" ", limit-len(l)) + "}"
	}
	exact := pad("1")
	require.Len(t, exact, limit)
	p.send(exact)
	assert.Equal(t, "x", p.response("1").text())
	p.send(pad("2") + "\r")
	assert.Equal(t, "x", p.response("2").text())
	p.send(pad("3") + " ")
	m := p.next()
	require.NotNil(t, m.Error)
	assert.Contains(t, m.Error.Message, "longer than 300 bytes")
	p.send(pad("4"))
	assert.Equal(t, "x", p.response("4").text())
	require.NoError(t, p.close())
}

// A line far longer than the limit is skipped as it streams by, not held
// in memory whole; a last line without a newline is still served.
func TestHugeLineNotBuffered(t *testing.T) {
	f := newFixture(t)
	const size = 64 << 20
	in := io.MultiReader(
		strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"x","params":{"pad":"`),
		io.LimitReader(repeatReader('a'), size),
		strings.NewReader("\"}}\n"+call("2", "echo", `{"text":"last"}`)),
	)
	var out testkit.LogBuffer
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	require.NoError(t, stdio.Serve(context.Background(), f.srv, in, &out, stdio.WithLogger(quiet)))
	runtime.ReadMemStats(&after)
	alloc := after.TotalAlloc - before.TotalAlloc
	t.Logf("allocated %.1f MiB to skip a %d MiB line", float64(alloc)/(1<<20), size>>20)
	assert.Less(t, alloc, uint64(12<<20), "allocated for a %d MiB line", size>>20)
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	require.Len(t, lines, 2, out.String())
	assert.Contains(t, lines[0], `"code":-32600`)
	assert.Contains(t, lines[1], `"text":"last"`)
}

type repeatReader byte

func (r repeatReader) Read(p []byte) (int, error) {
	for i := range p {
		p[i] = byte(r)
	}
	return len(p), nil
}

// notifications/cancelled cancels the request it names, which is then not
// answered; unknown ids are ignored, and ids match as JSON values.
func TestCancelled(t *testing.T) {
	f := newFixture(t)
	p := open(t, f.srv)
	p.send(callMeta(`"job"`, "block", `{"tag":"b"}`, `"progressToken":1`))
	<-f.started
	p.send(cancelled(`"nobody"`), cancelled(`"j\u006fb"`))
	assert.ErrorIs(t, <-f.causes, stdio.ErrCancelled)
	p.send(call("2", "echo", `{"text":"next"}`))
	assert.Equal(t, "next", p.response("2").text())

	// A cancelled id may be used again at once.
	p.send(callMeta(`"job"`, "block", `{"tag":"c"}`, `"progressToken":1`), cancelled(`"job"`), call(`"job"`, "echo", `{"text":"again"}`))
	assert.ErrorIs(t, <-f.causes, stdio.ErrCancelled)
	assert.Equal(t, "again", p.response(`"job"`).text())
	require.NoError(t, p.close())
	answers := 0
	for _, m := range p.all() {
		if m.id() == `"job"` {
			answers++
		}
	}
	assert.Equal(t, 1, answers, "the cancelled request got no answer")
	noGoroutines(t)
}

// A request whose id is in flight is refused; the first one goes on.
func TestDuplicateID(t *testing.T) {
	f := newFixture(t)
	p := open(t, f.srv)
	p.send(call("7", "block", `{"tag":"first"}`))
	<-f.started
	p.send(call("7", "echo", `{"text":"second"}`))
	m := p.response("7")
	require.NotNil(t, m.Error)
	assert.Equal(t, int(mrtr.CodeInvalidRequest), m.Error.Code)
	assert.Contains(t, m.Error.Message, "in flight")
	p.send(cancelled("7"))
	<-f.causes
	require.NoError(t, p.close())
}

// subscriptions/listen: the acknowledgement and the notifications asked
// for, tagged with the listen id; the client ends it with
// notifications/cancelled and gets no answer; when the server closes, the
// listen gets its final result, then a notifications/cancelled naming it.
func TestListen(t *testing.T) {
	f := newFixture(t)
	p := open(t, f.srv)
	listen := func(id string) string {
		return `{"jsonrpc":"2.0","id":` + id + `,"method":"subscriptions/listen","params":{"notifications":` +
			`{"toolsListChanged":true,"resourceSubscriptions":["mem://a"]},` + modernMeta("") + `}}`
	}
	p.send(listen(`"L"`))
	ack := p.next()
	require.Equal(t, "notifications/subscriptions/acknowledged", ack.Method, "%s", ack.raw)
	assert.Equal(t, `"L"`, ack.subscription())

	require.NoError(t, f.srv.AddTool(mrtr.Tool{Name: "new"}, mrtr.HandlerFunc(func(context.Context, *mrtr.Request) (mrtr.Result, error) {
		return mrtr.TextResult("new"), nil
	})))
	m := p.next()
	assert.Equal(t, "notifications/tools/list_changed", m.Method)
	assert.Equal(t, `"L"`, m.subscription())
	f.srv.NotifyResourceUpdated("mem://a")
	m = p.next()
	assert.Equal(t, "notifications/resources/updated", m.Method)
	assert.Equal(t, `"L"`, m.subscription())
	assert.JSONEq(t, `"mem://a"`, string(m.param("uri")))

	// The client ends the stream.
	p.send(cancelled(`"L"`))
	p.send(call("1", "echo", `{"text":"between"}`))
	assert.Equal(t, "between", p.next().text(), "nothing for L after its cancellation")

	// The server ends the next one.
	p.send(listen("9"))
	ack = p.next()
	require.Equal(t, "notifications/subscriptions/acknowledged", ack.Method)
	require.NoError(t, f.srv.Close())
	final := p.next()
	require.True(t, final.isResponse(), "%s", final.raw)
	assert.Equal(t, "9", final.id())
	var res struct {
		ResultType string                     `json:"resultType"`
		Meta       map[string]json.RawMessage `json:"_meta"`
	}
	require.NoError(t, json.Unmarshal(final.Result, &res))
	assert.Equal(t, "complete", res.ResultType)
	assert.Equal(t, "9", string(res.Meta[wire.MetaSubscriptionID]))
	end := p.next()
	assert.Equal(t, "notifications/cancelled", end.Method, "%s", end.raw)
	assert.Equal(t, "9", string(end.param("requestId")))
	assert.Nil(t, end.ID)

	require.NoError(t, p.close())
	for _, m := range p.all() {
		assert.False(t, m.id() == `"L"` || string(m.param("requestId")) == `"L"`, "a message for the cancelled listen: %s", m.raw)
	}
	noGoroutines(t)
}

// A listen open when the input ends gets a notifications/cancelled, and
// no error answer.
func TestListenAtShutdown(t *testing.T) {
	f := newFixture(t)
	p := open(t, f.srv)
	p.send(`{"jsonrpc":"2.0","id":5,"method":"subscriptions/listen","params":{"notifications":{"toolsListChanged":true},` + modernMeta("") + `}}`)
	require.Equal(t, "notifications/subscriptions/acknowledged", p.next().Method)
	require.NoError(t, p.close())
	all := p.all()
	require.Len(t, all, 2)
	assert.Equal(t, "notifications/cancelled", all[1].Method)
	assert.Equal(t, "5", string(all[1].param("requestId")))
	assert.Contains(t, string(all[1].param("reason")), "shutting down")
	noGoroutines(t)
}

// Cancelling Serve's context (a signal, in a program) ends it at once,
// even while the input stays open: with an os.File pipe the blocked read
// is ended by a deadline, which is then cleared, and nothing is left
// running.
func TestContextCancel(t *testing.T) {
	f := newFixture(t)
	inR, inW, err := os.Pipe()
	require.NoError(t, err)
	outR, outW, err := os.Pipe()
	require.NoError(t, err)
	defer inR.Close()
	defer inW.Close()
	defer outR.Close()
	defer outW.Close()

	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- stdio.Serve(ctx, f.srv, inR, outW, stdio.WithLogger(quiet)) }()
	_, err = io.WriteString(inW, call("1", "echo", `{"text":"hi"}`)+"\n"+call("2", "block", `{"tag":"b"}`)+"\n")
	require.NoError(t, err)
	<-f.started
	cancel()
	select {
	case err := <-done:
		require.NoError(t, err)
	case <-time.After(wait):
		t.Fatal("Serve did not return")
	}
	assert.ErrorIs(t, <-f.causes, stdio.ErrShutdown)
	noGoroutines(t)
	require.NoError(t, outW.Close())
	out, err := io.ReadAll(outR)
	require.NoError(t, err)
	assert.Contains(t, string(out), `"text":"hi"`)

	// The input is usable again: no deadline is left on it.
	go func() { _, _ = io.WriteString(inW, "after\n") }()
	buf := make([]byte, 6)
	_, err = io.ReadFull(inR, buf)
	require.NoError(t, err)
	assert.Equal(t, "after\n", string(buf))
}

// With an input that takes no deadline, cancelling the context still ends
// Serve at once; the Read left blocked returns when the input does, and
// what it read is dropped.
func TestContextCancelWithoutDeadline(t *testing.T) {
	f := newFixture(t)
	p := open(t, f.srv)
	p.send(call("1", "echo", `{"text":"hi"}`))
	p.response("1")
	p.cancel()
	require.NoError(t, p.wait())
	p.send(call("2", "echo", `{"text":"dropped"}`)) // read by the Read left blocked
	require.NoError(t, p.in.Close())
	noGoroutines(t)
	assert.Len(t, p.all(), 1)
}

// An output that fails ends Serve with an error: nothing more can be
// delivered.
func TestBrokenOutput(t *testing.T) {
	f := newFixture(t)
	inR, inW := io.Pipe()
	defer inW.Close()
	done := make(chan error, 1)
	go func() { done <- stdio.Serve(context.Background(), f.srv, inR, brokenWriter{}, stdio.WithLogger(quiet)) }()
	_, err := io.WriteString(inW, call("1", "echo", `{"text":"x"}`)+"\n")
	require.NoError(t, err)
	select {
	case err := <-done:
		require.ErrorIs(t, err, errBroken)
		assert.Contains(t, err.Error(), "writing the output")
	case <-time.After(wait):
		t.Fatal("Serve did not return")
	}
	_ = inW.Close()
	noGoroutines(t)
}

// Raw JSON a handler returns pretty-printed is compacted: one message,
// one line.
func TestLineBreaksInResults(t *testing.T) {
	f := newFixture(t)
	p := open(t, f.srv)
	p.send(call("1", "pretty", `{}`))
	m := p.response("1")
	var r struct {
		Content           []struct{ Text string } `json:"content"`
		StructuredContent map[string]any          `json:"structuredContent"`
	}
	require.NoError(t, json.Unmarshal(m.Result, &r))
	assert.Equal(t, "line one\nline two", r.Content[0].Text)
	assert.Equal(t, map[string]any{"a": 1.0, "b": []any{1.0, 2.0}}, r.StructuredContent)
	require.NoError(t, p.close())
}

// The principal given with WithPrincipal is who every request is served
// for.
func TestPrincipal(t *testing.T) {
	f := newFixture(t)
	p := open(t, f.srv, stdio.WithPrincipal("alice"))
	p.send(call("1", "whoami", `{}`))
	assert.Equal(t, "principal=alice", p.response("1").text())
	require.NoError(t, p.close())
}

// Responses from a client of MCP 2026-07-28 (which sends none) are
// dropped, not answered; so are malformed responses, whose error would
// carry the id of a request of the client's own.
func TestModernResponseDropped(t *testing.T) {
	f := newFixture(t)
	p := open(t, f.srv)
	p.send(`{"jsonrpc":"2.0","id":1,"result":{}}`, `{"jsonrpc":"2.0","id":1,"result":5}`, `{"jsonrpc":"2.0","id":1,"error":{}}`,
		call("2", "echo", `{"text":"x"}`))
	assert.Equal(t, "2", p.next().id())
	require.NoError(t, p.close())
	assert.Len(t, p.all(), 1)
}

func TestBadOptions(t *testing.T) {
	f := newFixture(t)
	other := newFixture(t)
	eng, err := legacy.New(other.srv, legacy.WithLogger(quiet))
	require.NoError(t, err)
	for name, opts := range map[string][]stdio.Option{
		"engine of another server": {stdio.WithLegacy(eng)},
		"line limit":               {stdio.WithMaxLineBytes(0)},
		"timeout":                  {stdio.WithShutdownTimeout(-time.Second)},
	} {
		t.Run(name, func(t *testing.T) {
			err := stdio.Serve(context.Background(), f.srv, strings.NewReader(""), io.Discard, opts...)
			assert.Error(t, err)
		})
	}
	assert.Error(t, stdio.Serve(context.Background(), nil, strings.NewReader(""), io.Discard))
}

// A modern-only process answers initialize with the Server's -32022:
// when the first request was modern, when legacy serving is off, and when
// the server lists no legacy versions.
func TestInitializeRefusedWhenModern(t *testing.T) {
	check := func(t *testing.T, p *pipe) {
		m := p.response("0")
		require.NotNil(t, m.Error, "%s", m.raw)
		assert.Equal(t, int(mrtr.CodeUnsupportedVersion), m.Error.Code)
		require.NoError(t, p.close())
	}
	t.Run("after a modern request", func(t *testing.T) {
		p := open(t, newFixture(t).srv)
		p.send(call("1", "echo", `{"text":"x"}`))
		p.response("1")
		p.send(initialize)
		check(t, p)
	})
	t.Run("WithoutLegacy", func(t *testing.T) {
		p := open(t, newFixture(t).srv, stdio.WithoutLegacy())
		p.send(initialize)
		check(t, p)
	})
	t.Run("no legacy versions", func(t *testing.T) {
		srv := testkit.Server(t, discover.Description{Server: discover.Implementation{Name: "m", Version: "1"}},
			mrtr.WithCodec(testkit.Codec(t)), mrtr.WithLogger(quiet))
		p := open(t, srv)
		p.send(initialize)
		check(t, p)
	})
}
