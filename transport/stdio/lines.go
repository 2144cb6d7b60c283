package stdio

import (
	"bufio"
	"errors"
	"io"
)

// readBufferSize is the size of the input buffer. Lines that fit in it
// are copied out once; longer ones are gathered up to the line limit.
const readBufferSize = 64 << 10

// lineReader splits the input into lines. Each line it returns is a fresh
// slice the caller may keep: a parsed message, and the arguments handlers
// see, point into it.
type lineReader struct {
	r   *bufio.Reader
	max int
	acc []byte // a long line gathered so far
}

func newLineReader(in io.Reader, max int) *lineReader {
	size := readBufferSize
	if max+2 < size {
		size = max + 2 // a line at the limit and its "\r\n" fit
		if size < 16 {
			size = 16 // bufio's minimum
		}
	}
	return &lineReader{r: bufio.NewReaderSize(in, size), max: max}
}

// errTooLong reports a line longer than the limit; it has been skipped up
// to its newline.
var errTooLong = errors.New("stdio: line too long")

// next returns the next line without its "\n" or "\r\n". A last line
// without a newline is returned as a line; then io.EOF. A line longer than
// the limit is read to its end without being kept, and reported with
// errTooLong.
func (l *lineReader) next() ([]byte, error) {
	l.acc = l.acc[:0]
	skipping := false
	for {
		frag, err := l.r.ReadSlice('\n')
		if err == bufio.ErrBufferFull {
			if !skipping {
				if len(l.acc)+len(frag) > l.max+1 {
					skipping, l.acc = true, l.acc[:0]
				} else {
					l.gather(frag)
				}
			}
			continue
		}
		if err != nil && err != io.EOF {
			return nil, err // a read error: a partial line is dropped
		}
		if err == io.EOF && len(frag) == 0 && len(l.acc) == 0 {
			if skipping {
				return nil, errTooLong // the input ended inside a long line
			}
			return nil, io.EOF
		}
		// frag ends the line (with its '\n', or at the end of the input).
		if skipping {
			return nil, errTooLong
		}
		var line []byte
		if len(l.acc) == 0 {
			line = trimEOL(frag)
			if len(line) > l.max {
				return nil, errTooLong
			}
			return append(make([]byte, 0, len(line)), line...), nil
		}
		// A long line: the gathered buffer itself is handed over.
		if len(l.acc)+len(frag) > l.max+2 {
			l.acc = nil
			return nil, errTooLong // too long even without its "\r\n"
		}
		l.gather(frag)
		line, l.acc = trimEOL(l.acc), nil
		if len(line) > l.max {
			return nil, errTooLong
		}
		return line, nil
	}
}

// trimEOL removes a trailing "\n", then a trailing "\r".
func trimEOL(b []byte) []byte {
	if n := len(b); n > 0 && b[n-1] == '\n' {
		b = b[:n-1]
	}
	if n := len(b); n > 0 && b[n-1] == '\r' {
		b = b[:n-1]
	}
	return b
}

// gather appends frag to the long line being read, doubling the buffer
// as it grows (append alone grows large slices by a quarter, which would
// copy a line at the limit some twenty times over) up to the largest line
// that can be served.
func (l *lineReader) gather(frag []byte) {
	need := len(l.acc) + len(frag)
	if need > cap(l.acc) {
		n := max(2*cap(l.acc), need, 2*readBufferSize)
		n = min(n, max(l.max+2, need))
		grown := make([]byte, len(l.acc), n)
		copy(grown, l.acc)
		l.acc = grown
	}
	l.acc = append(l.acc, frag...)
}
