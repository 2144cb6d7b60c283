package legacy

import (
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/mrtrkit/mrtrkit/mrtr"
	"github.com/mrtrkit/mrtrkit/state"
)

// FuzzSessionID presents arbitrary strings as session ids, anonymously
// and as a principal. Nothing may panic; every string but the ids the
// engine issued is refused with ErrUnknownSession and no session; an
// issued id opens only for the principal it was issued to.
func FuzzSessionID(f *testing.F) {
	// A key ring of this process alone: the ids another fuzzing process
	// issued (the seeds) are then not genuine here, as the property
	// assumes; under a shared ring any replica's id would open.
	ring, err := state.GenerateKeyRing()
	if err != nil {
		f.Fatal(err)
	}
	v := newEnv(f, []mrtr.Option{mrtr.WithLogger(quiet)}, WithKeyRing(ring))
	anon := v.open("", capsNone).ID()
	alice := v.open("alice", capsAll).ID()
	for _, s := range []string{
		anon, alice, anon[:len(anon)/2], alice[1:], anon + "A", strings.ToUpper(anon), strings.ToLower(alice),
		"", "A", "AQEC", "x\ny", "time=0 level=ERROR msg=x", strings.Repeat("A", 4097), "\xff", "=?base64?eA==?=",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, id string) {
		for _, who := range []string{"", "alice", "mallory"} {
			s, err := v.e.Session(id, caller(who))
			genuine := (id == anon && who == "") || (id == alice && who == "alice")
			if genuine {
				require.Falsef(t, err != nil || s == nil, "issued id refused for its principal %q: %v", who, err)
				s.Release()
				continue
			}
			if err == nil || s != nil {
				if s != nil {
					s.Release()
				}
				require.FailNow(t, fmt.Sprintf("session id %q accepted for principal %q", id, who))
			}
			require.ErrorIsf(t, err, ErrUnknownSession, "session id %q refused with %v, want ErrUnknownSession", id, err)
		}
	})
}
