package stdio_test

import (
	"context"
	"io"
	"log/slog"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mrtrkit/mrtrkit/internal/testkit"
	"github.com/mrtrkit/mrtrkit/mrtr"
	"github.com/mrtrkit/mrtrkit/transport/stdio"
)

// Without WithLogger, Serve logs through the Server's logger.
func TestServeLogsThroughTheServersLogger(t *testing.T) {
	logs := &testkit.LogBuffer{}
	srv := testkit.Server(t, testkit.Desc("logged", "1"), mrtr.WithCodec(testkit.Codec(t)), mrtr.WithLogger(testkit.Logger(logs, slog.LevelDebug)))
	in := strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"ping","params":{"pad":"` + strings.Repeat("x", 200) + `"}}` + "\n")
	require.NoError(t, stdio.Serve(context.Background(), srv, in, io.Discard, stdio.WithMaxLineBytes(100)))
	assert.Contains(t, logs.String(), "stdio: skipped a line longer than the limit")
}

// A description listing a legacy version the bridge does not serve is an
// error when Serve starts, unless WithoutLegacy turns the era off.
func TestServeRefusesUnservableLegacyVersion(t *testing.T) {
	desc := testkit.Desc("old", "1")
	desc.LegacyVersions = []string{"2024-11-05"}
	srv := testkit.Server(t, desc, mrtr.WithCodec(testkit.Codec(t)), mrtr.WithLogger(quiet))
	err := stdio.Serve(context.Background(), srv, strings.NewReader(""), io.Discard)
	require.Error(t, err)
	assert.Contains(t, err.Error(), `"2024-11-05"`)
	require.NoError(t, stdio.Serve(context.Background(), srv, strings.NewReader(""), io.Discard, stdio.WithoutLegacy()))
}
