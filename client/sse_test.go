package client

import (
	"bytes"
	"io"
	"strings"
	"testing"
	"time"
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
		if err != nil || string(ev.Data) != "a\nb" || ev.ID != "1" || r.retry != 500 {
			t.Fatalf("%q: %+v %v", in, ev, err)
		}
		if _, err := r.next(); err != io.EOF {
			t.Fatalf("%q: %v", in, err)
		}
	}
}

// Many lone CRs cost time linear in their number.
func TestSSELoneCRsAreLinear(t *testing.T) {
	in := append(bytes.Repeat([]byte("x\r"), 1<<20), '\n')
	start := time.Now()
	r := newSSEReader(bytes.NewReader(in))
	if _, err := r.next(); err != io.EOF {
		t.Fatal(err)
	}
	// Not a speed target: a reader that rescanned its buffer per line
	// would take hours on this input; a linear one takes milliseconds.
	if d := time.Since(start); d > time.Minute {
		t.Fatalf("2 MiB of CR-ended lines took %v: reading is not linear", d)
	}
}
