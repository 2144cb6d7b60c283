package client

import (
	"bytes"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestSSELineEnds(t *testing.T) {
	for _, in := range []string{
		"id: 1\nretry: 500\ndata: a\ndata: b\n\n",
		"id: 1\r\nretry: 500\r\ndata: a\r\ndata: b\r\n\r\n",
		"id: 1\rretry: 500\rdata: a\rdata: b\r\r",
		": comment\nevent: message\nid: 1\nretry: 500\ndata: a\ndata: b\n\n",
	} {
		r := newSSEReader(strings.NewReader(in))
		ev, err := r.next()
		require.NoError(t, err, "%q", in)
		require.NotNil(t, ev, "%q", in)
		assert.Equal(t, "a\nb", string(ev.Data), "%q: %+v", in, ev)
		assert.Equal(t, "1", ev.ID, "%q: %+v", in, ev)
		assert.Equal(t, 500, r.retry, "%q", in)
		_, err = r.next()
		require.Same(t, io.EOF, err, "%q: %v", in, err) // io.EOF itself, as callers compare with ==
	}
}

// Many lone CRs cost time linear in their number.
func TestSSELoneCRsAreLinear(t *testing.T) {
	in := append(bytes.Repeat([]byte("x\r"), 1<<20), '\n')
	start := time.Now()
	r := newSSEReader(bytes.NewReader(in))
	_, err := r.next()
	require.Same(t, io.EOF, err, "%v", err)
	// Not a speed target: a reader that rescanned its buffer per line
	// would take hours on this input; a linear one takes milliseconds.
	d := time.Since(start)
	require.LessOrEqualf(t, d, time.Minute, "2 MiB of CR-ended lines took %v: reading is not linear", d)
}
