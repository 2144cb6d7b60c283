package state_test

import (
	"context"
	"fmt"
	"log"
	"log/slog"
	"os"
	"path/filepath"
	"time"

	"github.com/mrtrkit/mrtrkit/state"
)

// A server whose keys rotate without a restart: the codec is built from a
// key ring file, and a KeyRingFile gives it the file's new ring on SIGHUP
// or when a poll finds the file changed.
func ExampleKeyRingFile() {
	dir, err := os.MkdirTemp("", "keys")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "state-keys")
	// Fixed keys keep the example self-contained; real ones are random.
	const k1 = "k1:MDEyMzQ1Njc4OWFiY2RlZjAxMjM0NTY3ODlhYmNkZWY=\n"
	const k2 = "k2:ZmVkY2JhOTg3NjU0MzIxMGZlZGNiYTk4NzY1NDMyMTA=\n"
	if err := os.WriteFile(path, []byte(k1), 0o600); err != nil {
		log.Fatal(err)
	}

	ring, err := state.LoadKeyRingFile(path)
	if err != nil {
		log.Fatal(err)
	}
	codec, err := state.NewReloadableAEAD(ring)
	if err != nil {
		log.Fatal(err)
	}
	keys := state.NewKeyRingFile(path, slog.New(slog.DiscardHandler), codec)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go keys.Watch(ctx, 30*time.Second) // SIGHUP, and a poll every 30s

	// Rotation: the new key first, the old one behind it.
	if err := os.WriteFile(path, []byte(k2+k1), 0o600); err != nil {
		log.Fatal(err)
	}
	changed, err := keys.Reload() // what SIGHUP does
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(changed, codec.KeyIDs())
	// Output: true [k2 k1]
}
