package mrtr

// Clip cuts a value a caller sent to the length the Server repeats of
// such values in error messages and log lines (64 bytes, at a rune
// boundary, with "..." marking the cut). Transports use it for what they
// log of a request, so that no caller can make a log line grow without
// bound.
func Clip(s string) string { return clip(s) }

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
