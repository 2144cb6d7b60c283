package client

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"sort"
	"strings"
)

// PromptAsk returns a SamplingPolicy.Ask function for a terminal: it shows
// the request on out (the server, the model, the content kinds with their
// counts, the size, the token bound and the tools; never the content)
// and reads the user's answer from in. Only "y" or "yes" allows; anything
// else, an empty line or the end of the input refuses.
func PromptAsk(in io.Reader, out io.Writer) func(context.Context, SamplingPrompt) (bool, error) {
	br := bufio.NewReader(in)
	return func(ctx context.Context, p SamplingPrompt) (bool, error) {
		kinds := make([]string, 0, len(p.Kinds))
		for k, n := range p.Kinds {
			kinds = append(kinds, fmt.Sprintf("%d %s", n, printable(k)))
		}
		sort.Strings(kinds)
		fmt.Fprintf(out, "Server %q asks model %q to answer: %s block(s), %d bytes, up to %d tokens, %d tool(s). Allow? [y/N] ",
			printable(p.Server), printable(p.Model), strings.Join(kinds, ", "), p.Bytes, p.MaxTokens, p.Tools)
		line, err := br.ReadString('\n')
		if err != nil && err != io.EOF {
			return false, err
		}
		switch strings.ToLower(strings.TrimSpace(line)) {
		case "y", "yes":
			return true, nil
		}
		return false, nil
	}
}

// printable clips s and drops the control characters a server could use
// to rewrite the user's terminal.
func printable(s string) string {
	s = clip(s, 80)
	return strings.Map(func(r rune) rune {
		if r < 0x20 || r == 0x7f || (r >= 0x80 && r < 0xa0) {
			return -1
		}
		return r
	}, s)
}
