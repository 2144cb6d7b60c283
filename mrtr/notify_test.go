package mrtr_test

import (
	"context"
	"encoding/json"
	"errors"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mrtrkit/mrtrkit/discover"
	"github.com/mrtrkit/mrtrkit/internal/wire"
	"github.com/mrtrkit/mrtrkit/mrtr"
)

// sink collects emitted notifications.
type sink struct {
	mu  sync.Mutex
	got []obj
}

func (s *sink) emit(b []byte) error {
	var m obj
	if err := json.Unmarshal(b, &m); err != nil {
		return err
	}
	s.mu.Lock()
	s.got = append(s.got, m)
	s.mu.Unlock()
	return nil
}

func (s *sink) all() []obj {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]obj(nil), s.got...)
}

// chatty is a tool that reports progress and logs at every level.
func chatty(errs *[]error) mrtr.HandlerFunc {
	return func(ctx context.Context, req *mrtr.Request) (mrtr.Result, error) {
		total := 2.0
		*errs = append(*errs, req.Progress(1, &total, "half way"))
		*errs = append(*errs, req.Progress(2, nil, ""))
		for _, l := range []mrtr.LogLevel{mrtr.LevelDebug, mrtr.LevelInfo, mrtr.LevelNotice, mrtr.LevelWarning, mrtr.LevelError, mrtr.LevelCritical, mrtr.LevelAlert, mrtr.LevelEmergency} {
			*errs = append(*errs, req.Log(l, "chatty", obj{"level": string(l)}))
		}
		return mrtr.TextResult("ok"), nil
	}
}

func loggingDesc() discover.Description {
	d := testDesc()
	d.Capabilities.Logging = &discover.Empty{}
	return d
}

func TestProgress(t *testing.T) {
	for _, token := range []any{"tok-1", 7} {
		f := newFixtureDesc(t, loggingDesc())
		var errs []error
		f.addTool("t", chatty(&errs))
		s := &sink{}
		f.call("tools/call", obj{"_meta": meta(capsNone, wire.MetaProgressToken, token), "name": "t"}, withEmit(s.emit)).complete(t)
		want := []obj{
			{"jsonrpc": "2.0", "method": "notifications/progress", "params": obj{"progressToken": token, "progress": float64(1), "total": float64(2), "message": "half way"}},
			{"jsonrpc": "2.0", "method": "notifications/progress", "params": obj{"progressToken": token, "progress": float64(2)}},
		}
		if n, ok := token.(int); ok {
			want[0]["params"].(map[string]any)["progressToken"] = float64(n)
			want[1]["params"].(map[string]any)["progressToken"] = float64(n)
		}
		assert.Equal(t, want, s.all())
		for _, err := range errs {
			assert.NoError(t, err)
		}
	}
}

func TestNoNotificationsWithoutOptIn(t *testing.T) {
	f := newFixtureDesc(t, loggingDesc())
	var errs []error
	f.addTool("t", chatty(&errs))
	s := &sink{}
	f.call("tools/call", obj{"_meta": meta(capsNone), "name": "t"}, withEmit(s.emit)).complete(t)
	assert.Empty(t, s.all())

	// Without an Emit function the calls are no-ops.
	f.call("tools/call", obj{"_meta": meta(capsNone, wire.MetaProgressToken, "p", wire.MetaLogLevel, "debug"), "name": "t"}).complete(t)
	for _, err := range errs {
		assert.NoError(t, err)
	}
}

func TestLogLevels(t *testing.T) {
	tests := []struct {
		requested string
		want      []string
	}{
		{"debug", []string{"debug", "info", "notice", "warning", "error", "critical", "alert", "emergency"}},
		{"warning", []string{"warning", "error", "critical", "alert", "emergency"}},
		{"emergency", []string{"emergency"}},
	}
	for _, tt := range tests {
		t.Run(tt.requested, func(t *testing.T) {
			f := newFixtureDesc(t, loggingDesc())
			var errs []error
			f.addTool("t", chatty(&errs))
			s := &sink{}
			f.call("tools/call", obj{"_meta": meta(capsNone, wire.MetaLogLevel, tt.requested), "name": "t"}, withEmit(s.emit)).complete(t)
			var levels []string
			for _, n := range s.all() {
				require.Equal(t, "notifications/message", n["method"])
				p := n["params"].(map[string]any)
				assert.Equal(t, "chatty", p["logger"])
				assert.Equal(t, obj{"level": p["level"]}, p["data"])
				levels = append(levels, p["level"].(string))
			}
			assert.Equal(t, tt.want, levels)
		})
	}
}

func TestLogNeedsLoggingCapability(t *testing.T) {
	f := newFixture(t) // no logging capability
	var errs []error
	var seenLevel mrtr.LogLevel
	f.addTool("t", func(ctx context.Context, req *mrtr.Request) (mrtr.Result, error) {
		seenLevel = req.Meta.LogLevel
		return chatty(&errs)(ctx, req)
	})
	s := &sink{}
	f.call("tools/call", obj{"_meta": meta(capsNone, wire.MetaLogLevel, "debug", wire.MetaProgressToken, "p"), "name": "t"}, withEmit(s.emit)).complete(t)
	for _, n := range s.all() {
		assert.Equal(t, "notifications/progress", n["method"], "progress needs no capability, logging does")
	}
	assert.Len(t, s.all(), 2)
	assert.Empty(t, seenLevel)
}

func TestEmitErrorReachesHandler(t *testing.T) {
	f := newFixtureDesc(t, loggingDesc())
	var errs []error
	f.addTool("t", chatty(&errs))
	broken := errors.New("stream closed")
	f.call("tools/call", obj{"_meta": meta(capsNone, wire.MetaProgressToken, 1), "name": "t"}, withEmit(func([]byte) error { return broken })).complete(t)
	assert.ErrorIs(t, errs[0], broken)
}

func TestMetaReachesHandler(t *testing.T) {
	f := newFixture(t)
	var got *mrtr.Meta
	f.addTool("t", func(ctx context.Context, req *mrtr.Request) (mrtr.Result, error) {
		got = req.Meta
		return mrtr.TextResult("ok"), nil
	})
	m := meta(obj{"sampling": obj{"context": obj{}}, "experimental": obj{"x": obj{"y": 1}}, "extensions": obj{"io.example/ext": obj{}}},
		wire.MetaClientInfo, obj{"name": "client", "version": "2.0"},
		"traceparent", "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01",
		"com.example/custom", obj{"a": 1})
	f.call("tools/call", obj{"_meta": m, "name": "t"}).complete(t)
	require.NotNil(t, got)
	assert.Equal(t, version, got.ProtocolVersion)
	assert.Equal(t, &discover.Implementation{Name: "client", Version: "2.0"}, got.ClientInfo)
	assert.Equal(t, "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01", got.TraceParent())
	assert.JSONEq(t, `{"a":1}`, string(got.Extra["com.example/custom"]))
	assert.NotContains(t, got.Extra, wire.MetaProtocolVersion)
	assert.NotContains(t, got.Extra, wire.MetaClientCapabilities)
	assert.NotContains(t, got.Extra, wire.MetaClientInfo)
	caps := got.ClientCapabilities
	require.NotNil(t, caps.Sampling)
	assert.NotNil(t, caps.Sampling.Context)
	assert.Nil(t, caps.Sampling.Tools)
	assert.Nil(t, caps.Elicitation)
	assert.Contains(t, caps.Experimental, "x")
	assert.Contains(t, caps.Extensions, "io.example/ext")
	assert.Nil(t, got.ProgressToken)
	assert.Empty(t, got.LogLevel)
}

func TestLogLevelOrder(t *testing.T) {
	assert.True(t, mrtr.LevelError.AtLeast(mrtr.LevelWarning))
	assert.True(t, mrtr.LevelWarning.AtLeast(mrtr.LevelWarning))
	assert.False(t, mrtr.LevelInfo.AtLeast(mrtr.LevelWarning))
	assert.True(t, mrtr.LevelEmergency.Valid())
	assert.False(t, mrtr.LogLevel("verbose").Valid())
	assert.False(t, mrtr.LogLevel("").Valid())
}
