package main

import (
	"fmt"
	"io"
	"strings"
	"unicode"
	"unicode/utf16"
	"unicode/utf8"
)

// Everything mcpcall prints that came from the server (names, titles,
// descriptions, messages, URLs, results, errors, notifications, the -v
// dumps) goes through sanitize before it reaches a terminal, so that a
// server cannot send escape sequences (CSI, OSC: colours, cursor moves,
// erased lines, window titles, OSC 8 links, OSC 52 clipboard writes),
// C0 or C1 controls, bidi overrides or other invisible format characters
// to the user's terminal. They are shown as visible escapes instead:
// ESC as \x1b, U+202E as \u202e.
//
// The printers call termLine (one line: newlines and tabs escaped too) or
// termText (multi-line text: newlines and tabs kept, CRLF read as a
// newline) on each server string; and run wraps stdout and stderr in a
// safeWriter that applies the same rule to every byte written, as a net
// for anything a printer passes on whole (error messages that quote the
// server, the -v dumps).

// escapeFlavour says how a character is escaped.
type escapeFlavour int

const (
	// flavourText escapes for a person reading a terminal: \x1b, \r,
	// \u202e, \U000e0041.
	flavourText escapeFlavour = iota
	// flavourJSON escapes as JSON does (\u001b, \u202e, surrogate pairs),
	// so that -json output stays valid JSON with the same values. Such
	// characters can only occur inside JSON strings, where the escape
	// means the same character.
	flavourJSON
)

// unsafeRune reports whether r must not reach a terminal raw: C0 and C1
// controls, DEL, format characters (category Cf: bidi embeddings,
// overrides and isolates, zero-width characters, the BOM, tag
// characters…), line and paragraph separators, and the Hangul fillers,
// which print as nothing. Newline and tab are decided by the caller.
func unsafeRune(r rune) bool {
	switch {
	case r < 0x20, r == 0x7f, r >= 0x80 && r <= 0x9f:
		return true
	case r < 0xa0:
		return false
	case r == 0x115f, r == 0x1160, r == 0x3164, r == 0xffa0:
		return true
	}
	return unicode.Is(unicode.Cf, r) || unicode.Is(unicode.Zl, r) || unicode.Is(unicode.Zp, r)
}

// sanitize returns s with every unsafe character escaped. keepLines keeps
// newlines and tabs (and reads CRLF as a newline); otherwise they are
// escaped too. Bytes that are not UTF-8 are escaped (\xff; U+FFFD in
// JSON). A string with nothing to escape is returned as it is.
func sanitize(s string, keepLines bool, fl escapeFlavour) string {
	clean := true
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		if (r == utf8.RuneError && size == 1) || (unsafeRune(r) && !(keepLines && (r == '\n' || r == '\t'))) {
			clean = false
			break
		}
		i += size
	}
	if clean {
		return s
	}
	var b strings.Builder
	b.Grow(len(s) + 16)
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			if fl == flavourJSON {
				b.WriteString(`\ufffd`)
			} else {
				fmt.Fprintf(&b, `\x%02x`, s[i])
			}
		case keepLines && r == '\r' && i+1 < len(s) && s[i+1] == '\n':
			// CRLF: the newline that follows is kept.
		case keepLines && (r == '\n' || r == '\t'), !unsafeRune(r):
			b.WriteString(s[i : i+size])
		default:
			escapeRune(&b, r, fl)
		}
		i += size
	}
	return b.String()
}

func escapeRune(b *strings.Builder, r rune, fl escapeFlavour) {
	if fl == flavourJSON {
		if r > 0xffff {
			r1, r2 := utf16.EncodeRune(r)
			fmt.Fprintf(b, `\u%04x\u%04x`, r1, r2)
			return
		}
		fmt.Fprintf(b, `\u%04x`, r)
		return
	}
	switch {
	case r == '\n':
		b.WriteString(`\n`)
	case r == '\t':
		b.WriteString(`\t`)
	case r == '\r':
		b.WriteString(`\r`)
	case r < 0x80:
		fmt.Fprintf(b, `\x%02x`, r)
	case r > 0xffff:
		fmt.Fprintf(b, `\U%08x`, r)
	default:
		fmt.Fprintf(b, `\u%04x`, r)
	}
}

// termLine renders a server string for one line of the terminal: every
// unsafe character escaped, newlines and tabs included, so that the
// string cannot draw a line of its own.
func termLine(s string) string { return sanitize(s, false, flavourText) }

// termText renders multi-line server text (results, descriptions,
// instructions): newlines and tabs kept, every other unsafe character
// escaped.
func termText(s string) string { return sanitize(s, true, flavourText) }

// safeWriter escapes every unsafe character written through it
// (newlines and tabs pass), so that nothing written to the terminal can
// hold a control sequence, whatever a printer forgot. Each Write is taken
// as whole text: a character split across two writes is escaped byte by
// byte.
type safeWriter struct {
	w  io.Writer
	fl escapeFlavour
}

// Write writes the sanitised p and reports len(p) written when the
// whole of it was.
func (s safeWriter) Write(p []byte) (int, error) {
	out := sanitize(string(p), true, s.fl)
	if _, err := io.WriteString(s.w, out); err != nil {
		return 0, err
	}
	return len(p), nil
}
