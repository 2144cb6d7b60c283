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
// or when a poll finds the file changed. Any codec from NewAEAD or NewHMAC
// can be kept in step this way.
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
	codec, err := state.NewAEAD(ring)
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

// Keys can also be given to a codec directly, from wherever they are kept:
// Replace swaps the ring while the codec serves. Tokens of a key that
// stays in the ring keep opening; those of a dropped key stop.
func ExampleRingCodec_Replace() {
	// Fixed keys keep the example self-contained; real ones are random.
	const k1 = "k1:MDEyMzQ1Njc4OWFiY2RlZjAxMjM0NTY3ODlhYmNkZWY="
	const k2 = "k2:ZmVkY2JhOTg3NjU0MzIxMGZlZGNiYTk4NzY1NDMyMTA="
	ring, err := state.ParseKeyRing(k1)
	if err != nil {
		log.Fatal(err)
	}
	codec, err := state.NewAEAD(ring)
	if err != nil {
		log.Fatal(err)
	}
	claims := state.Claims{Principal: "user:alice", Method: "tools/call", Target: "deploy", Round: 1}
	old, err := codec.Seal(claims)
	if err != nil {
		log.Fatal(err)
	}

	// Rotation: k2 seals from now on, k1 still opens.
	rotated, err := state.ParseKeyRing(k2 + "," + k1)
	if err != nil {
		log.Fatal(err)
	}
	if err := codec.Replace(rotated); err != nil {
		log.Fatal(err)
	}
	_, err = codec.Open(old)
	fmt.Println(codec.KeyIDs(), "old token opens:", err == nil)

	// Once k1's tokens have expired, k1 is dropped.
	retired, err := state.ParseKeyRing(k2)
	if err != nil {
		log.Fatal(err)
	}
	if err := codec.Replace(retired); err != nil {
		log.Fatal(err)
	}
	_, err = codec.Open(old)
	reason, _ := state.ReasonOf(err)
	fmt.Println(codec.KeyIDs(), "old token:", reason)
	// Output:
	// [k2 k1] old token opens: true
	// [k2] old token: unknown_key
}
