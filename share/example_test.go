package share_test

import (
	"context"
	"fmt"
	"time"

	"github.com/mrtrkit/mrtrkit/share"
)

func Example() {
	bus := share.Local()
	defer bus.Close()
	ctx := context.Background()

	// Events: every subscriber of the channel sees what is published.
	got := make(chan string, 1)
	stop, _ := bus.Subscribe("changes", func(p []byte) { got <- string(p) })
	defer stop()
	bus.Publish(ctx, "changes", []byte("tools"))
	fmt.Println("received:", <-got)

	// Claims: exactly one caller wins a key until it expires.
	first, _ := bus.Claim(ctx, "token-digest", time.Minute)
	again, _ := bus.Claim(ctx, "token-digest", time.Minute)
	fmt.Println("first:", first, "again:", again)
	// Output:
	// received: tools
	// first: true again: false
}
