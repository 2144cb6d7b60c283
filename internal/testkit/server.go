package testkit

import (
	"log/slog"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/mrtrkit/mrtrkit/discover"
	"github.com/mrtrkit/mrtrkit/mrtr"
	"github.com/mrtrkit/mrtrkit/state"
)

// Desc describes a test server by name and version alone.
func Desc(name, version string) discover.Description {
	return discover.Description{Server: discover.Implementation{Name: name, Version: version}}
}

// Server returns the mrtr.Server that desc and opts build.
func Server(tb testing.TB, desc discover.Description, opts ...mrtr.Option) *mrtr.Server {
	tb.Helper()
	srv, err := mrtr.NewServer(desc, opts...)
	require.NoError(tb, err)
	return srv
}

// LoggedServer returns a Server described by desc that seals requestState
// with codec (a FreshCodec when nil) and logs records at level and above
// into the returned LogBuffer; opts are applied after those two and may
// override them.
func LoggedServer(tb testing.TB, desc discover.Description, codec state.Codec, level slog.Level, opts ...mrtr.Option) (*mrtr.Server, *LogBuffer) {
	tb.Helper()
	if codec == nil {
		codec = FreshCodec(tb)
	}
	logs := &LogBuffer{}
	all := append([]mrtr.Option{mrtr.WithCodec(codec), mrtr.WithLogger(Logger(logs, level))}, opts...)
	return Server(tb, desc, all...), logs
}
