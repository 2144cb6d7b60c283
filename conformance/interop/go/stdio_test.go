package interop_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os/exec"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The go-sdk client launching the fixture as a subprocess with -stdio
// (mcp.CommandTransport): newline-delimited JSON-RPC on the child's stdin
// and stdout. Every test runs twice, in parallel, each time on a process of
// its own: at the client's default protocol version, 2026-07-28
// (server/discover, input_required rounds driven by the SDK), and pinned to
// 2025-11-25 (initialize; the fixture's questions arrive as real
// server-to-client requests on stdout, answered on stdin). Each test ends by
// closing the client, which closes the child's stdin, and checks that the
// child exits with status 0 by itself.

// Fixture tools the stdio tests call (internal/fixture/interop.go).
const (
	threeRoundsTool = "test_three_rounds"
	legTimeoutTool  = "test_leg_timeout"
	slowTool        = "test_slow"
	slowStatusTool  = "test_slow_status"
)

const (
	// slowStatusCancelled is what test_slow_status reports once the one
	// test_slow call of a process was stopped by the client's cancellation.
	slowStatusCancelled = `running=0 cancelled=1 finished=0 last_cause="stdio: the client cancelled the request"`
	// stdioExitWithin bounds how long the child may take to exit after its
	// stdin closes. CommandTransport would send SIGTERM only after
	// stdioTerminate, so an exit before that is the child's own.
	stdioExitWithin = 5 * time.Second
	stdioTerminate  = 20 * time.Second
)

// wireMessage is one JSON-RPC message on the pipe.
type wireMessage struct {
	Sent   bool // by the client (to the child's stdin)
	Raw    []byte
	Method string
	ID     json.RawMessage
	Params json.RawMessage
	Result json.RawMessage
	Error  json.RawMessage
	At     time.Time
}

// pipeLog records every message of a stdio session, in the order the
// client wrote and read them.
type pipeLog struct {
	mu   sync.Mutex
	msgs []wireMessage
}

func (l *pipeLog) add(sent bool, msg jsonrpc.Message) {
	raw, err := jsonrpc.EncodeMessage(msg)
	if err != nil {
		raw = []byte(fmt.Sprintf("<unencodable: %v>", err))
	}
	var m struct {
		Method string          `json:"method"`
		ID     json.RawMessage `json:"id"`
		Params json.RawMessage `json:"params"`
		Result json.RawMessage `json:"result"`
		Error  json.RawMessage `json:"error"`
	}
	_ = json.Unmarshal(raw, &m)
	l.mu.Lock()
	defer l.mu.Unlock()
	l.msgs = append(l.msgs, wireMessage{Sent: sent, Raw: raw, Method: m.Method, ID: m.ID, Params: m.Params, Result: m.Result, Error: m.Error, At: time.Now()})
}

func (l *pipeLog) snapshot() []wireMessage {
	l.mu.Lock()
	defer l.mu.Unlock()
	return slices.Clone(l.msgs)
}

func (l *pipeLog) mark() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.msgs)
}

func (l *pipeLog) since(mark int) []wireMessage { return l.snapshot()[mark:] }

func (l *pipeLog) dump(t *testing.T) {
	t.Helper()
	for i, m := range l.snapshot() {
		dir := "<-"
		if m.Sent {
			dir = "->"
		}
		t.Logf("%3d %s %s", i, dir, clip(m.Raw))
	}
}

// recordingTransport records what goes through the connection of another
// transport.
type recordingTransport struct {
	inner mcp.Transport
	log   *pipeLog
}

func (r *recordingTransport) Connect(ctx context.Context) (mcp.Connection, error) {
	c, err := r.inner.Connect(ctx)
	if err != nil {
		return nil, err
	}
	return &recordingConn{Connection: c, log: r.log}, nil
}

type recordingConn struct {
	mcp.Connection
	log *pipeLog
}

func (c *recordingConn) Read(ctx context.Context) (jsonrpc.Message, error) {
	msg, err := c.Connection.Read(ctx)
	if err == nil {
		c.log.add(false, msg)
	}
	return msg, err
}

// Write records msg before writing it: once written, the child may answer
// it and the answer be read (and recorded) before this Write returns.
func (c *recordingConn) Write(ctx context.Context, msg jsonrpc.Message) error {
	c.log.add(true, msg)
	return c.Connection.Write(ctx, msg)
}

// stdioSession is a go-sdk client session on a fixture subprocess.
type stdioSession struct {
	cs       *mcp.ClientSession
	cmd      *exec.Cmd
	wire     *pipeLog
	stderr   *lockedBuffer
	version  string // the version asked for; "" for the client's default
	progress chan *mcp.ProgressNotificationParams
	closed   bool
	endLog   string // what the child logs when its stdin ends; "" for nothing
}

// stdioHooks replace the client's default answers.
type stdioHooks struct {
	elicit func(context.Context, *mcp.ElicitRequest) (*mcp.ElicitResult, error)
}

// eachStdioVersion runs fn at the client's default version (2026-07-28)
// and pinned to 2025-11-25, in parallel.
func eachStdioVersion(t *testing.T, fn func(t *testing.T, version string)) {
	for _, v := range []string{"", legacyVersion} {
		name := "default-" + modernVersion
		if v != "" {
			name = "pinned-" + v
		}
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			fn(t, v)
		})
	}
}

// connectStdio starts the fixture with -stdio through mcp.CommandTransport
// and connects a go-sdk client with elicitation, sampling and roots.
func connectStdio(t *testing.T, version string, hooks stdioHooks) *stdioSession {
	t.Helper()
	bin, err := stdioBinary()
	require.NoError(t, err, "fixture binary")
	return connectStdioCmd(t, exec.Command(bin, "-stdio", "-leg-timeout", legTimeout.String()), "stdin ended", version, hooks)
}

// connectStdioCmd is connectStdio to the server cmd starts; endLog is what
// that server logs when its stdin ends ("" for nothing).
func connectStdioCmd(t *testing.T, cmd *exec.Cmd, endLog, version string, hooks stdioHooks) *stdioSession {
	t.Helper()
	s := &stdioSession{cmd: cmd, endLog: endLog, wire: &pipeLog{}, stderr: &lockedBuffer{}, version: version, progress: make(chan *mcp.ProgressNotificationParams, 64)}
	roots := &mcp.RootCapabilities{}
	if version == legacyVersion {
		roots.ListChanged = true
	}
	opts := &mcp.ClientOptions{
		Capabilities: &mcp.ClientCapabilities{RootsV2: roots},
		ElicitationHandler: func(ctx context.Context, req *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
			if hooks.elicit != nil {
				return hooks.elicit(ctx, req)
			}
			return &mcp.ElicitResult{Action: "accept", Content: fillForm(req.Params.RequestedSchema)}, nil
		},
		CreateMessageHandler: func(context.Context, *mcp.CreateMessageRequest) (*mcp.CreateMessageResult, error) {
			return &mcp.CreateMessageResult{Role: "assistant", Content: &mcp.TextContent{Text: answerSampling}, Model: "interop-model", StopReason: "endTurn"}, nil
		},
		ProgressNotificationHandler: func(_ context.Context, req *mcp.ProgressNotificationClientRequest) {
			select {
			case s.progress <- req.Params:
			default:
			}
		},
	}
	client := mcp.NewClient(&mcp.Implementation{Name: "mrtrkit-interop-go-stdio", Version: "1.0.0"}, opts)
	client.AddRoots(&mcp.Root{URI: answerRootURI, Name: answerRootName})

	s.cmd.Stderr = s.stderr
	transport := &recordingTransport{
		inner: &mcp.CommandTransport{Command: s.cmd, TerminateDuration: stdioTerminate},
		log:   s.wire,
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	var sessOpts *mcp.ClientSessionOptions
	if version != "" {
		sessOpts = &mcp.ClientSessionOptions{ProtocolVersion: version}
	}
	cs, err := client.Connect(ctx, transport, sessOpts)
	if err != nil {
		t.Logf("fixture stderr:\n%s", s.stderr.String())
		if s.cmd.Process != nil {
			_ = s.cmd.Process.Kill()
		}
		require.FailNow(t, fmt.Sprintf("Connect: %v", err))
	}
	s.cs = cs
	t.Cleanup(func() {
		if !s.closed {
			s.close(t)
		}
		if t.Failed() {
			s.wire.dump(t)
			t.Logf("fixture stderr:\n%s", s.stderr.String())
		}
	})
	return s
}

// close closes the session, which closes the child's stdin, and checks
// that the child exits with status 0 on its own, before CommandTransport
// would signal it.
func (s *stdioSession) close(t *testing.T) {
	t.Helper()
	s.closed = true
	start := time.Now()
	err := s.cs.Close()
	took := time.Since(start)
	assert.NoError(t, err, "closing the session (the child's exit)")
	if st := s.cmd.ProcessState; st == nil || !st.Exited() || st.ExitCode() != 0 {
		assert.Fail(t, fmt.Sprintf("the child's state after Close: %v, want exit status 0", st))
	}
	assert.Falsef(t, took > stdioExitWithin, "the child took %v to exit after its stdin closed (CommandTransport signals after %v)", took, stdioTerminate)
	assert.Containsf(t, s.stderr.String(), s.endLog, "the child did not log the end of its stdin:\n%s", s.stderr.String())
}

// legacy reports whether the session is pinned to 2025-11-25.
func (s *stdioSession) legacy() bool { return s.version == legacyVersion }

func (s *stdioSession) call(t *testing.T, ctx context.Context, name string, progressToken any) (*mcp.CallToolResult, error) {
	t.Helper()
	p := &mcp.CallToolParams{Name: name, Arguments: map[string]any{}}
	if progressToken != nil {
		p.SetProgressToken(progressToken)
	}
	return s.cs.CallTool(ctx, p)
}

func (s *stdioSession) mustCall(t *testing.T, name string) *mcp.CallToolResult {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	res, err := s.call(t, ctx, name, nil)
	require.NoErrorf(t, err, "CallTool(%s)", name)
	return res
}

// checkStdioWire checks every message of a session: each line the child
// wrote is a JSON-RPC message (the SDK would have failed otherwise); a
// 2025-11-25 session never carries a member of the 2026-07-28 wire, and
// its server-to-client requests have integer ids of at least 1; a
// 2026-07-28 session gets no server-to-client request at all, and every
// request it sends claims 2026-07-28 in _meta.
func checkStdioWire(t *testing.T, s *stdioSession) {
	t.Helper()
	for _, m := range s.wire.snapshot() {
		switch {
		case !m.Sent && m.Method != "" && m.ID != nil:
			if !s.legacy() {
				assert.Fail(t, fmt.Sprintf("a server-to-client request at 2026-07-28: %s", clip(m.Raw)))
				continue
			}
			var n int64
			assert.Falsef(t, json.Unmarshal(m.ID, &n) != nil || n < 1, "the server request %s has id %s, want an integer >= 1", m.Method, m.ID)
		case m.Sent && m.Method != "" && m.ID != nil && !s.legacy():
			var p struct {
				Meta map[string]json.RawMessage `json:"_meta"`
			}
			_ = json.Unmarshal(m.Params, &p)
			if v := string(p.Meta["io.modelcontextprotocol/protocolVersion"]); v != `"`+modernVersion+`"` {
				assert.Fail(t, fmt.Sprintf("%s sent with _meta protocolVersion %s", m.Method, v))
			}
		}
		if s.legacy() && !m.Sent {
			for _, member := range []string{`"resultType"`, `"inputRequests"`, `"requestState"`, `"ttlMs"`, `"cacheScope"`, "io.modelcontextprotocol/serverInfo"} {
				assert.Falsef(t, strings.Contains(string(m.Raw), member), "a 2025-11-25 message carries %s: %s", member, clip(m.Raw))
			}
		}
	}
}

func TestStdioConnect(t *testing.T) {
	eachStdioVersion(t, func(t *testing.T, version string) {
		s := connectStdio(t, version, stdioHooks{})
		init := s.cs.InitializeResult()
		require.Falsef(t, init == nil || init.ServerInfo == nil || init.ServerInfo.Name != "mrtrkit-conformance-server", "server info %+v", init)
		if got := textOf(t, s.mustCall(t, "test_simple_text")); got != "This is a simple text response for testing." {
			assert.Fail(t, fmt.Sprintf("test_simple_text: %q", got))
		}
		msgs := s.wire.snapshot()
		var sent []string
		for _, m := range msgs {
			if m.Sent && m.Method != "" {
				sent = append(sent, m.Method)
			}
		}
		if s.legacy() {
			assert.Falsef(t, init.ProtocolVersion != legacyVersion, "negotiated %q, want %s", init.ProtocolVersion, legacyVersion)
			assert.Falsef(t, len(sent) < 2 || sent[0] != "initialize" || sent[1] != "notifications/initialized" || slices.Contains(sent, "server/discover"), "the client sent %v, want initialize, notifications/initialized first and no server/discover", sent)
		} else {
			assert.Falsef(t, len(sent) == 0 || sent[0] != "server/discover" || slices.Contains(sent, "initialize"), "the client sent %v, want server/discover first and no initialize", sent)
			var disc struct {
				ResultType        string   `json:"resultType"`
				SupportedVersions []string `json:"supportedVersions"`
			}
			for _, m := range msgs {
				if !m.Sent && m.Result != nil && string(m.ID) == string(msgs[0].ID) {
					_ = json.Unmarshal(m.Result, &disc)
				}
			}
			assert.Falsef(t, disc.ResultType != "complete" || !slices.Contains(disc.SupportedVersions, modernVersion) || !slices.Contains(disc.SupportedVersions, legacyVersion), "server/discover answered %+v", disc)
		}
		checkStdioWire(t, s)
	})
}

// TestStdioThreeRounds: test_three_rounds asks an elicitation, then a
// sampling, then roots, one round each, and completes with the three
// answers. At 2026-07-28 the SDK's driver sees three input_required legs
// and a complete one; at 2025-11-25 the client sees three real requests on
// the pipe, in that order, and answers each.
func TestStdioThreeRounds(t *testing.T) {
	eachStdioVersion(t, func(t *testing.T, version string) {
		s := connectStdio(t, version, stdioHooks{})
		mark := s.wire.mark()
		got := textOf(t, s.mustCall(t, threeRoundsTool))
		want := fmt.Sprintf("Three rounds completed: elicitation=%s; sampling=%s; roots=%s", answerName, answerSampling, answerRootURI)
		assert.Falsef(t, got != want, "text %q, want %q", got, want)
		msgs := s.wire.since(mark)
		var calls, serverReqs []wireMessage
		for _, m := range msgs {
			switch {
			case m.Sent && m.Method == "tools/call":
				calls = append(calls, m)
			case !m.Sent && m.Method != "" && m.ID != nil:
				serverReqs = append(serverReqs, m)
			}
		}
		if s.legacy() {
			assert.EqualValuesf(t, 1, len(calls), "%d tools/call sent, want 1", len(calls))
			var methods []string
			ids := map[string]bool{}
			for _, r := range serverReqs {
				methods = append(methods, r.Method)
				ids[string(r.ID)] = true
				answered := slices.ContainsFunc(msgs, func(m wireMessage) bool {
					return m.Sent && m.Method == "" && string(m.ID) == string(r.ID) && m.Result != nil
				})
				assert.Truef(t, answered, "the client did not answer %s %s", r.Method, r.ID)
			}
			if want := []string{"elicitation/create", "sampling/createMessage", "roots/list"}; !slices.Equal(methods, want) || len(ids) != 3 {
				assert.Fail(t, fmt.Sprintf("server requests %v with ids %v, want %v with distinct ids", methods, ids, want))
			}
		} else {
			assert.EqualValuesf(t, 0, len(serverReqs), "server-to-client requests at 2026-07-28: %d", len(serverReqs))
			var types []string
			ids := map[string]bool{}
			for _, c := range calls {
				ids[string(c.ID)] = true
				for _, m := range msgs {
					if !m.Sent && m.Method == "" && string(m.ID) == string(c.ID) {
						var r struct {
							ResultType    string                     `json:"resultType"`
							InputRequests map[string]json.RawMessage `json:"inputRequests"`
						}
						_ = json.Unmarshal(m.Result, &r)
						types = append(types, r.ResultType)
					}
				}
			}
			if want := []string{"input_required", "input_required", "input_required", "complete"}; !slices.Equal(types, want) || len(ids) != 4 {
				assert.Fail(t, fmt.Sprintf("legs answered %v with %d distinct ids, want %v with 4", types, len(ids), want))
			}
		}
		checkStdioWire(t, s)
	})
}

// TestStdioProgress: test_tool_with_progress reports 0, 50 and 100 of 100
// to the call's progress token; each notification reaches the client's
// handler, and all of them come before the result.
func TestStdioProgress(t *testing.T) {
	eachStdioVersion(t, func(t *testing.T, version string) {
		s := connectStdio(t, version, stdioHooks{})
		mark := s.wire.mark()
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		res, err := s.call(t, ctx, "test_tool_with_progress", "progress-1")
		require.NoError(t, err)
		if got := textOf(t, res); got != "Tool with progress executed successfully." {
			assert.Fail(t, fmt.Sprintf("text %q", got))
		}
		var seen []float64
		msgs := s.wire.since(mark)
		var callID json.RawMessage
		for _, m := range msgs {
			if m.Sent && m.Method == "tools/call" {
				callID = m.ID
			}
		}
		answered := false
		for _, m := range msgs {
			if m.Sent {
				continue
			}
			if m.Method == "" && string(m.ID) == string(callID) {
				answered = true
			}
			if m.Method == "notifications/progress" {
				assert.Falsef(t, answered, "a progress notification after the result: %s", clip(m.Raw))
				var p mcp.ProgressNotificationParams
				if err := json.Unmarshal(m.Params, &p); err != nil || p.ProgressToken != "progress-1" {
					assert.Fail(t, fmt.Sprintf("progress notification %s", clip(m.Raw)))
				}
				seen = append(seen, p.Progress)
			}
		}
		assert.Truef(t, slices.Equal(seen, []float64{0, 50, 100}), "progress %v on the pipe, want [0 50 100]", seen)
		// The SDK hands notifications to the handler asynchronously.
		var handled []float64
		timeout := time.After(5 * time.Second)
		for len(handled) < 3 {
			select {
			case p := <-s.progress:
				handled = append(handled, p.Progress)
			case <-timeout:
				require.FailNow(t, fmt.Sprintf("the progress handler saw %v", handled))
			}
		}
		slices.Sort(handled)
		assert.Truef(t, slices.Equal(handled, []float64{0, 50, 100}), "the progress handler saw %v", handled)
		checkStdioWire(t, s)
	})
}

// waitSlowStatus calls test_slow_status until it reports want.
func waitSlowStatus(t *testing.T, s *stdioSession, want string) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		got := textOf(t, s.mustCall(t, slowStatusTool))
		if got == want {
			return
		}
		require.Falsef(t, time.Now().After(deadline), "test_slow_status: %q, want %q", got, want)
		time.Sleep(25 * time.Millisecond)
	}
}

// TestStdioCancel: the client cancels a test_slow call (its context, which
// the SDK turns into notifications/cancelled) once the call has reported
// progress, that is once it runs. The server stops it (test_slow_status
// counts it cancelled, by the client's cancellation), never answers it, and
// the process goes on serving: a later call succeeds, and the process exits
// 0 when the client closes it.
func TestStdioCancel(t *testing.T) {
	eachStdioVersion(t, func(t *testing.T, version string) {
		s := connectStdio(t, version, stdioHooks{})
		waitSlowStatus(t, s, `running=0 cancelled=0 finished=0 last_cause=""`)
		mark := s.wire.mark()
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		errc := make(chan error, 1)
		go func() {
			_, err := s.call(t, ctx, slowTool, "slow-1")
			errc <- err
		}()
		select {
		case p := <-s.progress:
			require.EqualValuesf(t, "slow-1", p.ProgressToken, "progress for %v", p.ProgressToken)
		case <-time.After(10 * time.Second):
			require.FailNow(t, "test_slow did not report that it runs")
		}
		cancel()
		select {
		case err := <-errc:
			require.ErrorIsf(t, err, context.Canceled, "CallTool returned %v, want context.Canceled", err)
		case <-time.After(10 * time.Second):
			require.FailNow(t, "CallTool did not return after its context was cancelled")
		}
		waitSlowStatus(t, s, slowStatusCancelled)

		msgs := s.wire.since(mark)
		var callID json.RawMessage
		for _, m := range msgs {
			if m.Sent && m.Method == "tools/call" {
				callID = m.ID
				break
			}
		}
		cancelled := slices.ContainsFunc(msgs, func(m wireMessage) bool {
			var p struct {
				RequestID json.RawMessage `json:"requestId"`
			}
			return m.Sent && m.Method == "notifications/cancelled" && json.Unmarshal(m.Params, &p) == nil && string(p.RequestID) == string(callID)
		})
		assert.Falsef(t, callID == nil || !cancelled, "no notifications/cancelled for the call %s", callID)
		for _, m := range msgs {
			assert.Falsef(t, !m.Sent && m.Method == "" && string(m.ID) == string(callID), "the cancelled call was answered: %s", clip(m.Raw))
		}
		if got := textOf(t, s.mustCall(t, "test_simple_text")); got != "This is a simple text response for testing." {
			assert.Fail(t, fmt.Sprintf("test_simple_text after the cancellation: %q", got))
		}
		assert.Falsef(t, s.cmd.ProcessState != nil, "the child exited: %v", s.cmd.ProcessState)
		checkStdioWire(t, s)
	})
}

// TestStdioLegacyCancelMidLeg (2025-11-25 only): the client cancels a call
// while the server's question (test_leg_timeout's elicitation) is open. The
// server withdraws the question with notifications/cancelled, well before
// the leg timeout, which cancels the context of the client's elicitation
// handler; a later call succeeds. On stdio the client reads the pipe for
// the whole session, so the withdrawal always reaches it (over HTTP the
// go-sdk may stop reading the call's stream first).
func TestStdioLegacyCancelMidLeg(t *testing.T) {
	asked := make(chan struct{}, 1)
	handlerDone := make(chan error, 1)
	s := connectStdio(t, legacyVersion, stdioHooks{
		elicit: func(ctx context.Context, req *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
			if req.Params.Message != lateMessage {
				return &mcp.ElicitResult{Action: "accept", Content: fillForm(req.Params.RequestedSchema)}, nil
			}
			asked <- struct{}{}
			select {
			case <-ctx.Done():
				handlerDone <- nil
				return nil, ctx.Err()
			case <-time.After(30 * time.Second):
				handlerDone <- errors.New("the handler's context was not cancelled")
				return &mcp.ElicitResult{Action: "decline"}, nil
			}
		},
	})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	errc := make(chan error, 1)
	go func() {
		_, err := s.call(t, ctx, legTimeoutTool, nil)
		errc <- err
	}()
	select {
	case <-asked:
	case <-time.After(10 * time.Second):
		require.FailNow(t, "the server did not ask test_leg_timeout's question")
	}
	cancelledAt := time.Now()
	cancel()
	if err := <-errc; !errors.Is(err, context.Canceled) {
		require.FailNow(t, fmt.Sprintf("CallTool returned %v, want context.Canceled", err))
	}
	select {
	case err := <-handlerDone:
		require.NoError(t, err)
	case <-time.After(legTimeout + 5*time.Second):
		require.FailNow(t, "the elicitation handler's context was not cancelled")
	}
	if took := time.Since(cancelledAt); took >= legTimeout {
		assert.Fail(t, fmt.Sprintf("the question was withdrawn %v after the cancellation, not before the leg timeout (%v)", took, legTimeout))
	}
	var legID json.RawMessage
	msgs := s.wire.snapshot()
	for _, m := range msgs {
		if !m.Sent && m.Method == "elicitation/create" {
			legID = m.ID
		}
	}
	withdrawn := slices.ContainsFunc(msgs, func(m wireMessage) bool {
		var p struct {
			RequestID json.RawMessage `json:"requestId"`
		}
		return !m.Sent && m.Method == "notifications/cancelled" && json.Unmarshal(m.Params, &p) == nil && string(p.RequestID) == string(legID)
	})
	assert.Falsef(t, legID == nil || !withdrawn, "the server sent no notifications/cancelled for its question %s", legID)
	if got := textOf(t, s.mustCall(t, "test_simple_text")); got != "This is a simple text response for testing." {
		assert.Fail(t, fmt.Sprintf("test_simple_text after the cancellation: %q", got))
	}
	checkStdioWire(t, s)
}
