package mrtr

// Clip cuts a value a caller sent to the length the Server repeats of
// such values in error messages and log lines (64 bytes, at a rune
// boundary, with "..." marking the cut). Transports use it for what they
// log of a request, so that no caller can make a log line grow without
// bound.
func Clip(s string) string { return clip(s) }
