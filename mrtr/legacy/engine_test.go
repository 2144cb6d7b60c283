package legacy

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mrtrkit/mrtrkit/discover"
	"github.com/mrtrkit/mrtrkit/internal/testkit"
	"github.com/mrtrkit/mrtrkit/mrtr"
	"github.com/mrtrkit/mrtrkit/state"
)

func TestNewRefusesBadConfiguration(t *testing.T) {
	_, err := New(nil)
	assert.Error(t, err, "nil server")

	modernOnly, err := mrtr.NewServer(discover.Description{Server: discover.Implementation{Name: "m", Version: "1"}}, mrtr.WithCodec(testkit.Codec(t)), mrtr.WithLogger(quiet))
	require.NoError(t, err)
	_, err = New(modernOnly, WithKeyRing(testkit.Ring(t)))
	assert.ErrorContains(t, err, "LegacyVersions")

	srv := newTestServer(t, &book{})
	for name, o := range map[string]Option{
		"sessions": WithMaxSessions(0),
		"lifetime": WithSessionLifetime(time.Millisecond),
		"idle":     WithIdleTimeout(0),
		"calls":    WithMaxCalls(0),
		"leg":      WithLegTimeout(0),
		"call":     WithCallTimeout(-time.Second),
	} {
		_, err := New(srv, WithKeyRing(testkit.Ring(t)), o)
		assert.Error(t, err, name)
	}
	e, err := New(srv, WithKeyRing(testkit.Ring(t)), nil, WithLogger(quiet))
	require.NoError(t, err, "a nil option is ignored")
	assert.Same(t, srv, e.Server())
	assert.Equal(t, []string{"2025-11-25", "2025-06-18"}, e.versions, "newest first")
}

func TestInitializeNegotiatesAndRendersTheEra(t *testing.T) {
	v := newEnv(t, nil)
	for _, tc := range []struct{ asked, got string }{
		{"2025-11-25", "2025-11-25"},
		{"2025-06-18", "2025-06-18"},
		{"2024-11-05", "2025-11-25"},
		{"2026-07-28", "2025-11-25"},
		{"bogus", "2025-11-25"},
	} {
		s, resp, err := v.e.Initialize(nil, parse(t, `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"`+tc.asked+`","capabilities":{},"clientInfo":{"name":"c","version":"1"}}}`))
		require.NoError(t, err)
		require.NotNil(t, s)
		require.Nil(t, resp.Error)
		assert.Equal(t, tc.got, s.Version(), tc.asked)
		var r struct {
			ProtocolVersion string                     `json:"protocolVersion"`
			Capabilities    map[string]json.RawMessage `json:"capabilities"`
			ServerInfo      discover.Implementation    `json:"serverInfo"`
			Instructions    string                     `json:"instructions"`
		}
		require.NoError(t, json.Unmarshal(resp.Result, &r))
		assert.Equal(t, tc.got, r.ProtocolVersion)
		assert.Equal(t, "legacy-test", r.ServerInfo.Name)
		assert.Equal(t, "Test server.", r.Instructions)
		assert.NotContains(t, r.Capabilities, "extensions", "extensions are a 2026-07-28 notion: %s", resp.Result)
		for _, c := range []string{"logging", "tools", "prompts", "resources"} {
			assert.Contains(t, r.Capabilities, c)
		}
		assert.JSONEq(t, `{"subscribe":true,"listChanged":true}`, string(r.Capabilities["resources"]))
		assertLegacyResponse(t, resp)

		// The session id is a header value: visible ASCII, no spaces.
		id := s.ID()
		require.NotEmpty(t, id)
		for i := 0; i < len(id); i++ {
			require.True(t, id[i] > 0x20 && id[i] < 0x7f, "byte %d of the session id is %#x", i, id[i])
		}
		again, err := v.e.Session(id, nil)
		require.NoError(t, err)
		assert.Equal(t, tc.got, again.Version())
	}
}

func TestInitializeRefusesBadParams(t *testing.T) {
	v := newEnv(t, nil)
	for _, params := range []string{
		``,
		`,"params":{}`,
		`,"params":{"protocolVersion":"2025-11-25"}`,
		`,"params":{"protocolVersion":"2025-11-25","capabilities":[]}`,
		`,"params":{"protocolVersion":"2025-11-25","capabilities":"x"}`,
		`,"params":{"protocolVersion":"","capabilities":{}}`,
		`,"params":{"protocolVersion":"2025-11-25","capabilities":{"sampling":7}}`,
	} {
		s, resp, err := v.e.Initialize(nil, parse(t, `{"jsonrpc":"2.0","id":"i","method":"initialize"`+params+`}`))
		require.NoError(t, err, params)
		assert.Nil(t, s, params)
		require.NotNil(t, resp, params)
		require.NotNil(t, resp.Error, params)
		assert.Equal(t, mrtr.CodeInvalidParams, resp.Error.Code, params)
		assert.Equal(t, `"i"`, resp.ID.String())
	}
	assert.Zero(t, v.e.Sessions(), "a refused initialize keeps no session")

	// A notification named initialize gets nothing at all.
	s, resp, err := v.e.Initialize(nil, parse(t, `{"jsonrpc":"2.0","method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{}}}`))
	assert.Nil(t, s)
	assert.Nil(t, resp)
	assert.NoError(t, err)

	// Client info that is not an Implementation is dropped, not refused.
	s, resp, err = v.e.Initialize(nil, parse(t, `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":"nope"}}`))
	require.NoError(t, err)
	require.Nil(t, resp.Error)
	assert.Nil(t, s.fixed.Client)
}

func TestSessionIsBoundToItsPrincipalAndKeys(t *testing.T) {
	v := newEnv(t, nil)
	s := v.open("alice", capsAll)
	id := s.ID()

	_, err := v.e.Session(id, caller("alice"))
	require.NoError(t, err)
	for name, tc := range map[string]struct{ token, principal string }{
		"other principal": {id, "bob"},
		"anonymous":       {id, ""},
		"empty":           {"", "alice"},
		"tampered":        {id[:len(id)-2] + flip(id[len(id)-2]) + id[len(id)-1:], "alice"},
		"truncated":       {id[:len(id)/2], "alice"},
		"too long":        {strings.Repeat("a", 5000), "alice"},
		"garbage":         {"not-a-session", "alice"},
	} {
		_, err := v.e.Session(tc.token, caller(tc.principal))
		assert.ErrorIs(t, err, ErrUnknownSession, name)
	}

	// Without a bus, another process with the same keys (or this one
	// restarted) does not serve the session: it cannot know whether it
	// was deleted.
	_, err = newEngine(t, v.srv).Session(id, caller("alice"))
	assert.ErrorIs(t, err, ErrUnknownSession, "another process without a bus")
	// With WithPortableSessions, any with the same keys does; one with
	// other keys does not know it.
	pv := newEnv(t, nil, WithPortableSessions())
	id = pv.open("alice", capsAll).ID()
	same := newEngine(t, pv.srv, WithPortableSessions())
	_, err = same.Session(id, caller("alice"))
	assert.NoError(t, err, "a replica with the same key ring")
	ring, err := state.GenerateKeyRing()
	require.NoError(t, err)
	other, err := New(v.srv, WithKeyRing(ring), WithLogger(quiet))
	require.NoError(t, err)
	_, err = other.Session(id, caller("alice"))
	assert.ErrorIs(t, err, ErrUnknownSession, "a replica with other keys")

	// A server of another audience with the same keys does not know it.
	b := &book{}
	srv2 := newTestServer(t, b, mrtr.WithAudience("elsewhere"))
	_, err = newEngine(t, srv2).Session(id, caller("alice"))
	assert.ErrorIs(t, err, ErrUnknownSession, "another audience")
}

func flip(c byte) string {
	if c == 'A' {
		return "B"
	}
	return "A"
}

// A session id is sealed under its own purpose: the modern server never
// takes it for a requestState, even with the same keys.
func TestSessionIDIsNoRequestState(t *testing.T) {
	v := newEnv(t, nil)
	s := v.open("", capsAll)
	body := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"trio","arguments":{},"requestState":` + quote(s.ID()) +
		`,"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}`
	resp := v.srv.Handle(context.Background(), &mrtr.Inbound{Message: parse(t, body)})
	require.NotNil(t, resp.Error)
	assert.Equal(t, mrtr.CodeInvalidParams, resp.Error.Code)
	assert.Empty(t, v.b.of("trio"), "the handler never ran")
}

func quote(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

func TestSimpleMethodsAnswerInTheEraShape(t *testing.T) {
	v := newEnv(t, nil)
	s := v.open("", capsAll)
	h := func(body string) *mrtr.Response {
		t.Helper()
		resp := s.Handle(context.Background(), parse(t, body), newPipe())
		require.NotNil(t, resp, body)
		assertLegacyResponse(t, resp)
		return resp
	}
	empty := func(body string) {
		t.Helper()
		resp := h(body)
		require.Nil(t, resp.Error, body)
		assert.Equal(t, `{}`, string(resp.Result), "%s: an empty result is exactly {}", body)
	}
	code := func(body string, want mrtr.Code) *mrtr.Error {
		t.Helper()
		resp := h(body)
		require.NotNil(t, resp.Error, "%s answered %s", body, resp.Result)
		assert.Equal(t, want, resp.Error.Code, body)
		return resp.Error
	}
	empty(`{"jsonrpc":"2.0","id":1,"method":"ping"}`)
	empty(`{"jsonrpc":"2.0","id":2,"method":"ping","params":{"_meta":{"x":1}}}`)
	empty(`{"jsonrpc":"2.0","id":3,"method":"logging/setLevel","params":{"level":"debug"}}`)
	empty(`{"jsonrpc":"2.0","id":4,"method":"resources/subscribe","params":{"uri":"file:///plain.txt"}}`)
	empty(`{"jsonrpc":"2.0","id":5,"method":"resources/unsubscribe","params":{"uri":"file:///plain.txt"}}`)
	empty(`{"jsonrpc":"2.0","id":6,"method":"resources/unsubscribe","params":{"uri":"file:///never.txt"}}`)

	code(`{"jsonrpc":"2.0","id":10,"method":"logging/setLevel","params":{"level":"loud"}}`, mrtr.CodeInvalidParams)
	code(`{"jsonrpc":"2.0","id":11,"method":"logging/setLevel"}`, mrtr.CodeInvalidParams)
	code(`{"jsonrpc":"2.0","id":12,"method":"resources/subscribe","params":{}}`, mrtr.CodeInvalidParams)
	code(`{"jsonrpc":"2.0","id":13,"method":"server/discover","params":{}}`, mrtr.CodeMethodNotFound)
	code(`{"jsonrpc":"2.0","id":14,"method":"subscriptions/listen","params":{"notifications":{"toolsListChanged":true}}}`, mrtr.CodeMethodNotFound)
	code(`{"jsonrpc":"2.0","id":15,"method":"tasks/list"}`, mrtr.CodeMethodNotFound)
	code(`{"jsonrpc":"2.0","id":16,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{}}}`, mrtr.CodeInvalidRequest)
	e := code(`{"jsonrpc":"2.0","id":17,"method":"`+strings.Repeat("x", 200)+`"}`, mrtr.CodeMethodNotFound)
	assert.Less(t, len(e.Message), 120, "an echoed method name is clipped")

	// Notifications get nothing.
	assert.Nil(t, s.Handle(context.Background(), parse(t, `{"jsonrpc":"2.0","method":"notifications/initialized"}`), nil))
	assert.Nil(t, s.Handle(context.Background(), parse(t, `{"jsonrpc":"2.0","method":"notifications/roots/list_changed"}`), nil))
	assert.Nil(t, s.Handle(context.Background(), parse(t, `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":99}}`), nil))
	assert.Nil(t, s.Handle(context.Background(), parse(t, `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":null}}`), nil))

	// A server without logging or subscriptions does not offer them.
	plain, err := mrtr.NewServer(discover.Description{Server: discover.Implementation{Name: "p", Version: "1"}, LegacyVersions: []string{"2025-11-25"}},
		mrtr.WithCodec(testkit.Codec(t)), mrtr.WithLogger(quiet))
	require.NoError(t, err)
	pe := newEngine(t, plain)
	ps, resp, err := pe.Initialize(nil, parse(t, `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{}}}`))
	require.NoError(t, err)
	assert.JSONEq(t, `{"protocolVersion":"2025-11-25","capabilities":{},"serverInfo":{"name":"p","version":"1"}}`, string(resp.Result))
	for _, m := range []string{"logging/setLevel", "resources/subscribe", "resources/unsubscribe"} {
		r := ps.Handle(context.Background(), parse(t, `{"jsonrpc":"2.0","id":1,"method":"`+m+`","params":{"level":"info","uri":"file:///x"}}`), nil)
		require.NotNil(t, r.Error, m)
		assert.Equal(t, mrtr.CodeMethodNotFound, r.Error.Code, m)
	}
}

func TestListsAndErrorsAreTranslated(t *testing.T) {
	v := newEnv(t, nil)
	s := v.open("", capsAll)
	for _, m := range []string{"tools/list", "prompts/list", "resources/list", "resources/templates/list"} {
		resp := s.Handle(context.Background(), parse(t, `{"jsonrpc":"2.0","id":1,"method":"`+m+`"}`), newPipe())
		require.NotNil(t, resp, m)
		require.Nil(t, resp.Error, m)
		assertLegacyResponse(t, resp)
		assert.NotContains(t, string(resp.Result), "_meta", "%s: the server's identity was the only _meta", m)
	}
	resp := s.Handle(context.Background(), parse(t, `{"jsonrpc":"2.0","id":1,"method":"tools/list"}`), nil)
	var tl struct {
		Tools []struct{ Name string } `json:"tools"`
	}
	require.NoError(t, json.Unmarshal(resp.Result, &tl))
	assert.NotEmpty(t, tl.Tools)

	// A missing resource is -32002 with its uri, as the era says.
	resp = s.Handle(context.Background(), parse(t, `{"jsonrpc":"2.0","id":2,"method":"resources/read","params":{"uri":"file:///missing.txt"}}`), newPipe())
	require.NotNil(t, resp.Error)
	assert.Equal(t, mrtr.Code(-32002), resp.Error.Code)
	b, _ := resp.MarshalJSON()
	assert.Contains(t, string(b), `"uri":"file:///missing.txt"`)

	// A plain read loses its cache hints and the server's identity.
	x := v.run(s, `{"jsonrpc":"2.0","id":3,"method":"resources/read","params":{"uri":"file:///plain.txt"}}`, standard)
	require.Nil(t, x.resp.Error)
	assertLegacyResponse(t, x.resp)
	assert.JSONEq(t, `{"contents":[{"uri":"file:///plain.txt","mimeType":"text/plain","text":"plain"}]}`, string(x.resp.Result))

	// An unknown tool, a failing handler: the modern codes of that era.
	x = v.run(s, toolCall(4, "nope", `{}`), standard)
	require.NotNil(t, x.resp.Error)
	assert.Equal(t, mrtr.CodeInvalidParams, x.resp.Error.Code)
	x = v.run(s, toolCall(5, "fail", `{}`), standard)
	require.NotNil(t, x.resp.Error)
	assert.Equal(t, mrtr.CodeInternalError, x.resp.Error.Code)
	assert.Equal(t, "Internal error", x.resp.Error.Message)
	assert.Equal(t, `5`, x.resp.ID.String())
}

// The mutable part of a session is kept per process and bounded: busy
// sessions refuse a new one, idle ones make room.
func TestMaxSessionsEvictsIdleAndRefusesWhenBusy(t *testing.T) {
	b := &book{in: make(chan struct{}, 4), ctxs: make(chan error, 4)}
	srv := newTestServer(t, b)
	v := &env{t: t, srv: srv, e: newEngine(t, srv, WithMaxSessions(2)), b: b}

	s1 := v.open("", capsAll)
	s2 := v.open("", capsAll)
	require.Equal(t, 2, v.e.Sessions())

	// Both busy: s1 with a call in flight, s2 with its stream.
	ctx1, cancel1 := context.WithCancel(context.Background())
	done1 := make(chan *mrtr.Response, 1)
	go func() { done1 <- s1.Handle(ctx1, parse(t, toolCall(1, "hold", `{}`)), newPipe()) }()
	<-b.in
	ctx2, cancel2 := context.WithCancel(context.Background())
	listening := make(chan error, 1)
	go func() { listening <- s2.Listen(ctx2, newPipe()) }()
	require.Eventually(t, func() bool { return !s2.x.idle() }, 2*time.Second, time.Millisecond)

	_, _, err := v.e.Initialize(nil, parse(t, `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{}}}`))
	assert.ErrorIs(t, err, ErrBusy, "every session is busy")
	assert.Equal(t, 2, v.e.Sessions())

	// The call ends: s1 is idle, and the least recently used idle session
	// makes room.
	cancel1()
	assert.Nil(t, <-done1, "a cancelled call gets no response")
	<-b.ctxs
	s3 := v.open("", capsAll)
	assert.Equal(t, 2, v.e.Sessions())
	v.e.mu.Lock()
	_, kept1 := v.e.table[s1.sid]
	_, kept2 := v.e.table[s2.sid]
	_, kept3 := v.e.table[s3.sid]
	v.e.mu.Unlock()
	assert.False(t, kept1, "the idle session was forgotten")
	assert.True(t, kept2, "the busy session was kept")
	assert.True(t, kept3)

	// A forgotten session is not a dead one: its id still opens, with
	// fresh extras, when there is room.
	cancel2()
	require.NoError(t, <-listening)
	again, err := v.e.Session(s1.ID(), nil)
	require.NoError(t, err, "an evicted session's id stays valid")
	assert.NotSame(t, s1.x, again.x)
	noLeftovers(t)
}

func TestIdleSessionsAreForgotten(t *testing.T) {
	clock := testkit.NewClock(time.Now())
	v := newEnv(t, nil, WithIdleTimeout(time.Minute))
	v.e.now = clock.Now
	s1 := v.open("", capsAll)
	r := s1.Handle(context.Background(), parse(t, `{"jsonrpc":"2.0","id":1,"method":"logging/setLevel","params":{"level":"error"}}`), nil)
	require.Nil(t, r.Error)

	clock.Advance(30 * time.Second)
	used, err := v.e.Session(s1.ID(), nil) // used: its idle time starts again
	require.NoError(t, err)
	used.Release()
	clock.Advance(45 * time.Second)
	v.open("", capsAll) // a new session prunes
	assert.Equal(t, 2, v.e.Sessions(), "used 45 s ago: kept")

	clock.Advance(61 * time.Second)
	v.open("", capsAll)
	assert.Equal(t, 1, v.e.Sessions(), "the idle sessions were forgotten")

	// The session lives on, without its log level.
	s, err := v.e.Session(s1.ID(), nil)
	require.NoError(t, err)
	assert.Empty(t, s.x.level)
}

// A session expires its lifetime after initialize, whatever its use.
func TestSessionExpires(t *testing.T) {
	clock := testkit.NewClock(time.Now())
	v := newEnv(t, nil, WithSessionLifetime(time.Hour))
	v.e.codec = codecAt(t, v.e, clock.Now)
	v.e.now = clock.Now
	s := v.open("", capsAll)

	clock.Advance(59 * time.Minute)
	_, err := v.e.Session(s.ID(), nil)
	require.NoError(t, err)
	// 30 s: the session codec's clock skew for a 1 h lifetime, state's
	// default (documented on state.WithClockSkew).
	clock.Advance(2*time.Minute + 30*time.Second)
	_, err = v.e.Session(s.ID(), nil)
	assert.ErrorIs(t, err, ErrUnknownSession)
}

// The session codec's clock skew is at most a tenth of the lifetime, so a
// short lifetime is not stretched by state's default skew (30 s): with
// WithSessionLifetime(time.Second) a session id is refused 20 s after
// initialize.
func TestSessionExpiresAtItsLifetime(t *testing.T) {
	clock := testkit.NewClock(time.Now())
	v := newEnv(t, nil, WithSessionLifetime(time.Second))
	v.e.codec = codecAt(t, v.e, clock.Now) // as New builds it, on the test's clock
	v.e.now = clock.Now
	s := v.open("", capsAll)

	clock.Advance(20 * time.Second)
	_, err := v.e.Session(s.ID(), nil)
	assert.ErrorIs(t, err, ErrUnknownSession, "a session with a lifetime of 1s is still served 20s after initialize")
}

func TestCloseRevokesAndCancels(t *testing.T) {
	b := &book{in: make(chan struct{}, 1), ctxs: make(chan error, 1)}
	srv := newTestServer(t, b)
	v := &env{t: t, srv: srv, e: newEngine(t, srv), b: b}
	s := v.open("", capsAll)

	// A call in flight and a stream.
	done := make(chan *mrtr.Response, 1)
	go func() { done <- s.Handle(context.Background(), parse(t, toolCall(1, "hold", `{}`)), newPipe()) }()
	<-b.in
	listening := make(chan error, 1)
	go func() { listening <- s.Listen(context.Background(), newPipe()) }()
	require.Eventually(t, func() bool {
		s.x.mu.Lock()
		defer s.x.mu.Unlock()
		return s.x.listen != nil
	}, 2*time.Second, time.Millisecond)

	s.Close()
	assert.Nil(t, <-done, "the call is cancelled and gets no response")
	assert.ErrorIs(t, <-b.ctxs, errSessionClosed)
	select {
	case err := <-listening:
		assert.NoError(t, err)
	case <-time.After(2 * time.Second):
		t.Fatal("the stream outlived its session")
	}
	_, err := v.e.Session(s.ID(), nil)
	assert.ErrorIs(t, err, ErrUnknownSession, "a deleted session is unknown")
	assert.Zero(t, v.e.Sessions())

	// The Session value a request holds refuses new work.
	r := s.Handle(context.Background(), parse(t, toolCall(2, "trio", `{}`)), newPipe())
	require.NotNil(t, r.Error)
	assert.Equal(t, mrtr.CodeInvalidRequest, r.Error.Code)
	assert.ErrorIs(t, s.Listen(context.Background(), newPipe()), ErrUnknownSession)
	noLeftovers(t)
}

// BUG: a DELETEd session is revoked for its lifetime from the DELETE, but
// its id stays valid for the lifetime plus the codec's clock skew from
// initialize. Once the revocation is pruned (when any new session is made)
// the deleted session id is served again.
func TestDeletedSessionStaysDeleted(t *testing.T) {
	clock := testkit.NewClock(time.Now())
	v := newEnv(t, nil, WithSessionLifetime(time.Hour))
	v.e.codec = codecAt(t, v.e, clock.Now)
	v.e.now = clock.Now
	s := v.open("", capsAll)
	clock.Advance(time.Second)
	s.Close()
	_, err := v.e.Session(s.ID(), nil)
	require.ErrorIs(t, err, ErrUnknownSession)

	clock.Advance(time.Hour + 5*time.Second) // past the revocation, inside the skew
	v.open("", capsAll)                      // prunes the revocation
	_, err = v.e.Session(s.ID(), nil)
	assert.ErrorIs(t, err, ErrUnknownSession, "a deleted session id is served again")
}

// BUG: a session's leg ids restart at 1 when the process forgets its
// extras (idle timeout, WithMaxSessions eviction, or another replica),
// although the session lives on: the client then sees a request id the
// server already used in this session, which the initialize era forbids
// ("The request ID MUST NOT have been previously used by the requestor
// within the same session").
func TestLegIDsNeverRepeatInASession(t *testing.T) {
	clock := testkit.NewClock(time.Now())
	v := newEnv(t, nil, WithIdleTimeout(time.Minute))
	v.e.now = clock.Now
	s := v.open("", capsAll)
	x := v.run(s, toolCall(1, "sampler", `{}`), standard)
	assert.Equal(t, []int64{1}, legIDs(t, x.requests()))

	clock.Advance(2 * time.Minute)
	v.open("", capsAll) // prunes the idle session's extras
	again, err := v.e.Session(s.ID(), nil)
	require.NoError(t, err, "the session lives on")
	x = v.run(again, toolCall(2, "sampler", `{}`), standard)
	assert.NotEqual(t, []int64{1}, legIDs(t, x.requests()), "leg id 1 is used twice in one session")
}

// BUG: extras are judged idle, and may be evicted, between Engine.Session
// handing them to a request and the request registering its call or
// stream in them (on Streamable HTTP, a GET stream sends its opening
// comment before Listen registers). The request then runs on extras the
// engine no longer knows: the answers to its questions, routed through
// the session's new extras, are dropped, and a DELETE does not reach it.
func TestEvictionWhileARequestHoldsTheSession(t *testing.T) {
	v := newEnv(t, nil, WithMaxSessions(1), WithLegTimeout(300*time.Millisecond))
	s := v.open("", capsAll)
	held, err := v.e.Session(s.ID(), nil) // a request for s begins
	require.NoError(t, err)
	// The one place is taken by a session a request holds: a new session
	// is refused rather than the held one forgotten.
	_, _, err = v.e.Initialize(nil, parse(t, `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"c","version":"1"}}}`))
	assert.ErrorIs(t, err, ErrBusy)

	x := v.run(held, toolCall(1, "sampler", `{}`), standard)
	r := decodeTool(t, x.resp)
	assert.False(t, r.IsError, "the client answered, and the call failed with: %s", r.Content[0].Text)
	held.Release()

	// Released, the session may make room for another.
	s2 := v.open("", capsAll)
	held, err = v.e.Session(s2.ID(), nil)
	require.NoError(t, err)
	done := make(chan error, 1)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() { done <- held.Listen(ctx, newPipe()) }()
	time.Sleep(20 * time.Millisecond)
	again, err := v.e.Session(s2.ID(), nil)
	require.NoError(t, err)
	again.Close()
	again.Release()
	select {
	case <-done:
	case <-time.After(time.Second):
		t.Error("the session was deleted and its stream goes on")
		cancel()
		<-done
	}
	held.Release()
}

// BUG: doc.go says what a session changes, a deletion included, is kept
// per process "bounded in number"; revocations are not: every DELETE adds
// an entry kept for the whole session lifetime (24 h by default), whatever
// WithMaxSessions says, and every new session walks them all in
// pruneLocked. A client that initializes and deletes in a loop grows the
// map without bound.
func TestDeletionsAreBounded(t *testing.T) {
	v := newEnv(t, nil, WithMaxSessions(4))
	kept := func(deletions int) int {
		for range deletions {
			v.open("", capsNone).Close()
		}
		v.e.mu.Lock()
		defer v.e.mu.Unlock()
		return len(v.e.revoked)
	}
	first := kept(100)
	then := kept(300)
	assert.LessOrEqual(t, v.e.Sessions(), 4)
	assert.LessOrEqual(t, then, first, "revocations kept grow with deletions: %d after 100, %d after 400, in a process bounded to 4 sessions", first, then)
}

// BUG: initialize bounds the client info it seals by its size as sent
// (maxClientInfo, 1024 bytes), but seals it re-encoded by encoding/json,
// which escapes <, > and & six-fold; Engine.open then refuses any session
// id over 4096 characters. A client whose name holds such characters gets
// a session id that is never accepted: every request after initialize is
// "Session not found", and initialize again gives the same.
func TestClientInfoNeverSpoilsTheSessionID(t *testing.T) {
	v := newEnv(t, nil)
	name := strings.Repeat("<", 900)
	s, resp, err := v.e.Initialize(nil, parse(t, `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"`+name+`","version":"1"}}}`))
	require.NoError(t, err)
	require.Nil(t, resp.Error)
	require.NotNil(t, s)
	_, err = v.e.Session(s.ID(), nil)
	assert.NoError(t, err, "initialize handed out a session id of %d characters that no request can use", len(s.ID()))
}

// TestSessionCodecFollowsKeyRotation: a session id sealed before the ring
// was replaced through SessionCodec opens while its key stays in the ring,
// and is unknown once that key is dropped; an id minted afterwards opens.
func TestSessionCodecFollowsKeyRotation(t *testing.T) {
	v := newEnv(t, nil)
	oldID := v.open("alice", capsAll).ID()

	rotated := testkit.Key("k2", 9)
	require.NoError(t, v.e.SessionCodec().Replace(testkit.Ring(t, rotated, testkit.Key("k1", 7))))
	_, err := v.e.Session(oldID, caller("alice"))
	require.NoError(t, err, "a session sealed with a key still in the ring opens")

	require.NoError(t, v.e.SessionCodec().Replace(testkit.Ring(t, rotated)))
	_, err = v.e.Session(oldID, caller("alice"))
	require.ErrorIs(t, err, ErrUnknownSession, "a session sealed with a dropped key is unknown")
	newID := v.open("alice", capsAll).ID()
	_, err = v.e.Session(newID, caller("alice"))
	require.NoError(t, err, "a session minted after the rotation opens")
	assert.Equal(t, []string{"k2"}, v.e.SessionCodec().KeyIDs())
}
