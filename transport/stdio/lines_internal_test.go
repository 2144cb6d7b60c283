package stdio

import (
	"bytes"
	"errors"
	"io"
	"strings"
	"testing"
	"testing/iotest"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The line reader splits any input into the same lines, however the reads
// are cut, around its buffer size and the line limit.
func TestLineReader(t *testing.T) {
	const limit = 3 * readBufferSize
	sizes := []int{0, 1, 2, readBufferSize - 2, readBufferSize - 1, readBufferSize, readBufferSize + 1,
		2*readBufferSize + 5, limit - 1, limit, limit + 1, limit + 2, 5 * readBufferSize}
	type want struct {
		line    string
		tooLong bool
	}
	var input bytes.Buffer
	var wants []want
	for i, n := range sizes {
		line := strings.Repeat(string(rune('a'+i)), n)
		eol := "\n"
		if i%2 == 1 {
			eol = "\r\n"
		}
		input.WriteString(line + eol)
		wants = append(wants, want{line, n > limit})
	}
	input.WriteString("last") // no newline
	wants = append(wants, want{"last", false})

	readers := map[string]func(io.Reader) io.Reader{
		"whole":    func(r io.Reader) io.Reader { return r },
		"one byte": iotest.OneByteReader,
		"halves":   iotest.HalfReader,
	}
	for name, wrap := range readers {
		t.Run(name, func(t *testing.T) {
			lr := newLineReader(wrap(bytes.NewReader(input.Bytes())), limit)
			for i, w := range wants {
				line, err := lr.next()
				if w.tooLong {
					require.ErrorIs(t, err, errTooLong, "line %d (%d bytes)", i, len(w.line))
					continue
				}
				require.NoError(t, err, "line %d (%d bytes)", i, len(w.line))
				require.Equal(t, len(w.line), len(line), "line %d", i)
				require.Equal(t, w.line, string(line), "line %d", i)
			}
			_, err := lr.next()
			assert.ErrorIs(t, err, io.EOF)
		})
	}
}

// Lines handed out are the caller's: reading the next line does not
// change them.
func TestLineReaderLinesAreKept(t *testing.T) {
	lr := newLineReader(strings.NewReader("first\nsecond\n"), 100)
	a, err := lr.next()
	require.NoError(t, err)
	b, err := lr.next()
	require.NoError(t, err)
	assert.Equal(t, "first", string(a))
	assert.Equal(t, "second", string(b))
}

// An input that ends inside a line longer than the limit reports it, then
// the end.
func TestLineReaderEndsInLongLine(t *testing.T) {
	lr := newLineReader(strings.NewReader(strings.Repeat("x", 500)), 100)
	_, err := lr.next()
	assert.ErrorIs(t, err, errTooLong)
	_, err = lr.next()
	assert.ErrorIs(t, err, io.EOF)
}

// A read error other than the end is returned as it is.
func TestLineReaderError(t *testing.T) {
	boom := errors.New("boom")
	lr := newLineReader(io.MultiReader(strings.NewReader("ok\npartial"), iotest.ErrReader(boom)), 100)
	line, err := lr.next()
	require.NoError(t, err)
	assert.Equal(t, "ok", string(line))
	_, err = lr.next()
	assert.ErrorIs(t, err, boom)
}

// A small limit makes a small buffer; a line at the limit still fits.
func TestLineReaderSmallLimit(t *testing.T) {
	lr := newLineReader(strings.NewReader("12345\r\n123456\nabc\n"), 5)
	line, err := lr.next()
	require.NoError(t, err)
	assert.Equal(t, "12345", string(line))
	_, err = lr.next()
	assert.ErrorIs(t, err, errTooLong)
	line, err = lr.next()
	require.NoError(t, err)
	assert.Equal(t, "abc", string(line))
}
