package main

import (
	"fmt"
	"strings"

	"github.com/mrtrkit/mrtrkit/mrtr"
)

// Keys of the three questions the tool asks the model.
const (
	KeyPickFiles = "pick_files"
	KeySummary   = "summary"
	KeyCritique  = "critique"
)

// maxModelRounds caps the model rounds of one call: pick, summary and the
// optional critique.
const maxModelRounds = 3

// Token budgets of the three questions.
const (
	pickMaxTokens     = 400
	summaryMaxTokens  = 1200
	critiqueMaxTokens = 1200
)

const pickSystemPrompt = "You select files from a list. Reply with only the requested value: " +
	"a JSON array of strings, with no prose, no explanation and no code fence."

const summarySystemPrompt = "You summarise source code repositories accurately and concisely. " +
	"Reply with only the summary."

func ptr[T any](v T) *T { return &v }

// pickRequest asks the model to choose up to three representative files
// from the listing.
func pickRequest(audience string, l Listing) *mrtr.SamplingRequest {
	var b strings.Builder
	fmt.Fprintf(&b, "Choose the %d files of this repository that best show what it is and how it works, "+
		"for a reader who is a %s.\n\nFiles:\n", MaxPicks, audience)
	for _, p := range l.Paths {
		b.WriteString(p)
		b.WriteByte('\n')
	}
	if l.Truncated {
		b.WriteString("(the list is cut off here)\n")
	}
	fmt.Fprintf(&b, "\nAnswer with ONLY a JSON array of at most %d of the paths above, exactly as written, "+
		`for example ["README.md","go.mod","main.go"].`, MaxPicks)
	return &mrtr.SamplingRequest{
		Messages:     []mrtr.SamplingMessage{mrtr.UserText(b.String())},
		SystemPrompt: pickSystemPrompt,
		ModelPreferences: &mrtr.ModelPreferences{
			CostPriority:         ptr(0.8),
			IntelligencePriority: ptr(0.2),
		},
		MaxTokens: pickMaxTokens,
	}
}

// writeFiles renders the chosen files for a prompt.
func writeFiles(b *strings.Builder, files []File) {
	for _, f := range files {
		fmt.Fprintf(b, "\n===== %s =====\n%s", f.Path, f.Text)
		if f.Truncated {
			b.WriteString("\n[... cut off ...]")
		}
		b.WriteByte('\n')
	}
}

// summaryRequest asks the model to summarise the repository from the
// chosen files.
func summaryRequest(audience string, files []File) *mrtr.SamplingRequest {
	var b strings.Builder
	fmt.Fprintf(&b, "Summarise this repository for a reader who is a %s, in a few short paragraphs. "+
		"Here are its most representative files:\n", audience)
	return modelRequest(&b, files, summaryMaxTokens)
}

// critiqueRequest asks the model to check and improve a summary against
// the files it was written from.
func critiqueRequest(audience string, files []File, summary string) *mrtr.SamplingRequest {
	var b strings.Builder
	fmt.Fprintf(&b, "Here is a summary of a repository written for a reader who is a %s:\n\n%s\n\n"+
		"Check it against the files below. Correct anything the files contradict, cut what a %s "+
		"does not need, and reply with the improved summary.\n", audience, summary, audience)
	return modelRequest(&b, files, critiqueMaxTokens)
}

// modelRequest is the sampling request of either round: the instructions
// in b followed by the files, the summariser's system prompt, a
// preference for a capable model over a cheap one, and maxTokens.
func modelRequest(b *strings.Builder, files []File, maxTokens int) *mrtr.SamplingRequest {
	writeFiles(b, files)
	return &mrtr.SamplingRequest{
		Messages:     []mrtr.SamplingMessage{mrtr.UserText(b.String())},
		SystemPrompt: summarySystemPrompt,
		ModelPreferences: &mrtr.ModelPreferences{
			CostPriority:         ptr(0.3),
			IntelligencePriority: ptr(0.7),
		},
		MaxTokens: maxTokens,
	}
}
