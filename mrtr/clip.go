package mrtr

import "github.com/mrtrkit/mrtrkit/internal/wire"

// clip cuts s to wire.MaxEcho bytes (see wire.Clip).
func clip(s string) string { return wire.Clip(s) }

// clipTo cuts s to max bytes (see wire.ClipTo).
func clipTo(s string, max int) string { return wire.ClipTo(s, max) }

// maxErrEcho bounds what a log line repeats of an error that may quote a
// caller's value (a handler's error naming an argument, say): longer than
// an echo in a message, since it is the operator's clue, but bounded.
const maxErrEcho = 200

// errText renders err for a log line, cut at maxErrEcho bytes at a rune
// boundary.
func errText(err error) string {
	if err == nil {
		return ""
	}
	return clipTo(err.Error(), maxErrEcho)
}
