package mrtrtest

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"testing"

	"github.com/mrtrkit/mrtrkit/mrtr"
	"github.com/mrtrkit/mrtrkit/state"
)

// ReplicaKeyID is the id of the one key of ReplicaKeyRing.
const ReplicaKeyID = "k1"

// ReplicaKeyRing returns a key ring with one key whose id is ReplicaKeyID
// and whose secret is fixed and public. Every call returns the same key,
// so servers, legacy.Engines and bus sealers that a test builds apart
// from one another open each other's requestState, session ids and
// sealed messages, as the replicas of one deployment do. Its secret is
// in this source file: never use it outside a test.
func ReplicaKeyRing(t testing.TB) *state.KeyRing {
	t.Helper()
	ring, err := state.NewKeyRing(state.Key{ID: ReplicaKeyID, Secret: bytes.Repeat([]byte{7}, 32)})
	if err != nil {
		t.Fatalf("mrtrtest: %v", err)
	}
	return ring
}

// ReplicaCodec returns the AEAD codec over ReplicaKeyRing with opts (a
// purpose, a lifetime). Two codecs it returns with the same opts open
// each other's tokens.
func ReplicaCodec(t testing.TB, opts ...state.Option) state.Codec {
	t.Helper()
	codec, err := state.NewAEAD(ReplicaKeyRing(t), opts...)
	if err != nil {
		t.Fatalf("mrtrtest: %v", err)
	}
	return codec
}

// ThreeRounds returns a tool handler that asks one round of each kind in
// turn, for tests of what carries rounds between a client and a Server (a
// transport, the 2025-11-25 bridge, a share.Bus between replicas): a form
// whose "name" answer goes into the requestState (key "name"), a model
// completion whose text is appended to it (key "draft"), and the roots
// (key "where"). It completes with the name, "|", the completion, "|",
// the first root's URI and suffix, such as "Ada|drafted|file:///home on
// replica-b". A missing answer ends the call with an isError result
// naming it.
func ThreeRounds(suffix string) mrtr.Handler {
	return mrtr.HandlerFunc(func(_ context.Context, req *mrtr.Request) (mrtr.Result, error) {
		switch req.Round {
		case 0:
			return mrtr.Ask("name", &mrtr.ElicitRequest{Message: "Name?", RequestedSchema: &mrtr.ElicitSchema{Type: "object",
				Properties: map[string]json.RawMessage{"name": json.RawMessage(`{"type":"string"}`)}}}), nil
		case 1:
			e, ok := req.Responses.Elicitation("name")
			if !ok || !e.Accepted() {
				return mrtr.ErrorResult("no name"), nil
			}
			ir := mrtr.Ask("draft", &mrtr.SamplingRequest{Messages: []mrtr.SamplingMessage{mrtr.UserText("write")}, MaxTokens: 10})
			ir.State = fmt.Appendf(nil, "%v", e.Content["name"])
			return ir, nil
		case 2:
			d, ok := req.Responses.Sampling("draft")
			if !ok {
				return mrtr.ErrorResult("no draft"), nil
			}
			ir := mrtr.Ask("where", &mrtr.RootsRequest{})
			ir.State = append(append(req.State, '|'), d.Text()...)
			return ir, nil
		}
		w, ok := req.Responses.Roots("where")
		if !ok || len(w.Roots) == 0 {
			return mrtr.ErrorResult("no roots"), nil
		}
		return mrtr.TextResult(string(req.State) + "|" + w.Roots[0].URI + suffix), nil
	})
}
