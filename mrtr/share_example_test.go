package mrtr_test

import (
	"context"
	"encoding/json"
	"log"

	"github.com/mrtrkit/mrtrkit/discover"
	"github.com/mrtrkit/mrtrkit/mrtr"
	"github.com/mrtrkit/mrtrkit/share"
	"github.com/mrtrkit/mrtrkit/state"
)

// One replica of a deployment: it shares its notifications and its
// single-use states with the other replicas through a bus. share.Local
// stands in here for the Redis Bus of the module
// github.com/mrtrkit/mrtrkit/redis, which real replicas share.
func ExampleWithShare() {
	ring, err := state.GenerateKeyRing() // real replicas share one from configuration
	if err != nil {
		log.Fatal(err)
	}
	codec, err := state.NewAEAD(ring)
	if err != nil {
		log.Fatal(err)
	}
	srv, err := mrtr.NewServer(discover.Description{Server: discover.Implementation{Name: "deploy", Version: "1.0.0"}},
		mrtr.WithCodec(codec),
		mrtr.WithAudience("https://mcp.example.com/mcp"),
		mrtr.WithShare(share.Local()))
	if err != nil {
		log.Fatal(err)
	}
	defer srv.Close()

	// A confirmation must not be replayed: OnceOnly lets each state of
	// the tool be used once, on whichever replica.
	confirm := &mrtr.ElicitRequest{
		Message:         "Deploy to production?",
		RequestedSchema: &mrtr.ElicitSchema{Type: "object", Properties: map[string]json.RawMessage{"yes": json.RawMessage(`{"type":"boolean"}`)}},
	}
	deploy := mrtr.HandlerFunc(func(ctx context.Context, req *mrtr.Request) (mrtr.Result, error) {
		if _, err := mrtr.Elicit(ctx, req, "confirm", confirm); err != nil {
			return nil, err
		}
		return mrtr.TextResult("deployed"), nil
	})
	if err := srv.AddTool(mrtr.Tool{Name: "deploy"}, deploy, mrtr.OnceOnly()); err != nil {
		log.Fatal(err)
	}

	// Listeners on every replica hear of this.
	srv.NotifyListChanged(true, false, false)
}
