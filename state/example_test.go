package state_test

import (
	"fmt"
	"log"

	"github.com/mrtrkit/mrtrkit/state"
)

// A server asks the client for a confirmation, seals its progress into the
// requestState token, and checks the token when the client retries: Open
// authenticates it, then Verify binds it to the request being served.
func Example() {
	// What the byte recorded for each asked key means is the caller's
	// choice; state only carries it.
	const askedForm byte = 2

	// Real deployments load random keys with state.KeyRingFromEnv; this
	// fixed key only keeps the example self-contained.
	ring, err := state.ParseKeyRing("k1:MDEyMzQ1Njc4OWFiY2RlZjAxMjM0NTY3ODlhYmNkZWY=")
	if err != nil {
		log.Fatal(err)
	}
	codec, err := state.NewAEAD(ring)
	if err != nil {
		log.Fatal(err)
	}

	args, err := state.DigestJSON([]byte(`{"env": "prod", "replicas": 3}`))
	if err != nil {
		log.Fatal(err)
	}
	// First attempt: the tool needs a confirmation before it runs.
	token, err := codec.Seal(state.Claims{
		Principal:  "user:alice",
		Audience:   "https://mcp.example.com",
		Method:     "tools/call",
		Target:     "deploy",
		ArgsDigest: args,
		Round:      1,
		Asked:      map[string]byte{"confirm": askedForm},
		Payload:    []byte("step=confirm"),
	})
	if err != nil {
		log.Fatal(err)
	}

	// Retry: the token is authenticated first, then the same request, with
	// the arguments spelled differently, is digested and checked against it.
	claims, err := codec.Open(token)
	if err != nil {
		log.Fatal(err)
	}
	retryArgs, _ := state.DigestJSON([]byte(`{"replicas":3.0,"env":"prod"}`))
	want := state.Binding{
		Principal:  "user:alice",
		Audience:   "https://mcp.example.com",
		Method:     "tools/call",
		Target:     "deploy",
		ArgsDigest: retryArgs,
	}
	if err := claims.Verify(want); err != nil {
		log.Fatal(err)
	}
	fmt.Printf("round %d asked confirm=%d payload=%s\n", claims.Round, claims.Asked["confirm"], claims.Payload)

	// A client that alters one character of the token is refused.
	tampered := []byte(token)
	i := len(tampered) / 2
	if tampered[i] == 'A' {
		tampered[i] = 'B'
	} else {
		tampered[i] = 'A'
	}
	_, err = codec.Open(string(tampered))
	reason, _ := state.ReasonOf(err)
	fmt.Println("tampered:", reason)

	// The genuine token opens for anyone, but does not verify for a
	// request made by someone else.
	other := want
	other.Principal = "user:mallory"
	fmt.Println("other principal:", claims.Verify(other))

	// Output:
	// round 1 asked confirm=2 payload=step=confirm
	// tampered: integrity
	// other principal: requestState principal_mismatch: token was issued to a different principal
}

func ExampleParseKeyRing() {
	// The first key seals new tokens; both keys open tokens, so tokens
	// sealed before the rotation to k2 stay valid until they expire.
	ring, err := state.ParseKeyRing(
		"k2:ZmVkY2JhOTg3NjU0MzIxMGZlZGNiYTk4NzY1NDMyMTA, " +
			"k1:MDEyMzQ1Njc4OWFiY2RlZjAxMjM0NTY3ODlhYmNkZWY=")
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(ring.IDs())

	// Errors identify the entry but never echo the secret.
	_, err = state.ParseKeyRing("k1:c2hvcnQgc2VjcmV0")
	fmt.Println(err)

	// Output:
	// [k2 k1]
	// state: key ring entry 1 (id "k1"): secret is 12 bytes, need at least 32
}
