package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/mrtrkit/mrtrkit/mrtr"
	"github.com/mrtrkit/mrtrkit/mrtr/flow"
	"github.com/mrtrkit/mrtrkit/mrtr/model"
	"github.com/mrtrkit/mrtrkit/mrtr/typed"
)

// ToolName is the name of the one tool the example serves.
const ToolName = "summarize_repo"

// maxSummaryBytes bounds a summary the model returns, measured as it is
// encoded in the flow's state (encodedLen); the summary rides in the
// sealed requestState while the critique round runs.
const maxSummaryBytes = 8 << 10

// Args are the tool's arguments, bound and checked by package typed
// before the flow runs; the tool's input schema is generated from them,
// with their rules as JSON Schema keywords.
type Args struct {
	// Audience is who the summary is for, such as "developer": one line
	// of 1 to 80 characters that is not blank (rule audiencePattern), as
	// it goes into every prompt.
	Audience string `json:"audience" jsonschema:"Who the summary is for, for example \"developer\" or \"product manager\"." validate:"min=1,max=80,audience"`
}

// audiencePattern is the validate tag "audience": one line of text that is
// not blank, with no C0 or C1 control character or DEL, and at least one
// character that is not a space. It means the same in RE2 (the server)
// and ECMA-262 (clients reading the schema): ASCII ranges only, no \s.
const audiencePattern = `^[^\x00-\x1f\x7f-\x9f]*[^\x00-\x20\x7f-\x9f][^\x00-\x1f\x7f-\x9f]*$`

func init() {
	if err := typed.RegisterPattern("audience", audiencePattern, "must be one line of text, not blank"); err != nil {
		panic(err)
	}
}

// State is what the flow carries from round to round, sealed into
// requestState by the framework: never file contents, only what the next
// round needs to check or rebuild its question.
type State struct {
	// Listing is the digest of the listing the model chose from.
	Listing string `json:"listing,omitempty"`
	// Files are the validated paths the model chose.
	Files []string `json:"files,omitempty"`
	// Summary is the latest summary.
	Summary string `json:"summary,omitempty"`
}

// Output is the tool's structured result; its schema is generated from
// the type.
type Output struct {
	Files   []string `json:"files" jsonschema:"the files the summary was written from, relative to the summarised directory"`
	Summary string   `json:"summary" jsonschema:"the summary"`
}

// ToolContent makes the summary itself the result's text block.
func (o Output) ToolContent() []mrtr.Content { return []mrtr.Content{mrtr.Text(o.Summary)} }

// toolDefinition describes the tool in tools/list; package typed adds the
// input schema, generated from Args with its rules, and the output schema.
func toolDefinition() mrtr.Tool {
	return mrtr.Tool{
		Name:  ToolName,
		Title: "Summarise a repository",
		Description: "Summarises the repository this server was started on for the given audience. " +
			"The model chooses three representative files from a listing, then summarises them.",
		Annotations: &mrtr.ToolAnnotations{
			ReadOnlyHint:  ptr(true),
			OpenWorldHint: ptr(false),
		},
	}
}

// call is one call of the flow as its steps see it.
type call = flow.Call[Args, State]

// summarizer holds what the steps need: the directory, and whether the
// critique step runs.
type summarizer struct {
	repo     *Repo
	critique bool
}

// newFlow builds the tool's flow: pick_files, summary, and critique when
// enabled, at most three model rounds, answered by m.
func (s *summarizer) newFlow(m model.Model) (*flow.Flow[Args, State, Output], error) {
	return flow.New(
		[]flow.Step[Args, State]{
			flow.Sample(KeyPickFiles, s.askPick, s.usePick),
			flow.Sample(KeySummary, s.askSummary, s.useSummary),
			flow.When(func(*call) bool { return s.critique },
				flow.Sample(KeyCritique, s.askCritique, s.useCritique)),
		},
		func(_ context.Context, c *call) (Output, error) {
			return Output{Files: c.State.Files, Summary: c.State.Summary}, nil
		},
		flow.WithModel(m),
		flow.WithBudget(maxModelRounds),
	)
}

// askPick lists the directory and asks the model to choose files. The
// listing's digest goes into the state, so that the answer is checked
// against the same listing.
func (s *summarizer) askPick(_ context.Context, c *call) (*mrtr.SamplingRequest, error) {
	l, err := s.repo.List()
	if err != nil {
		return nil, err
	}
	c.State.Listing = l.Digest()
	return pickRequest(c.In.Audience, l), nil
}

// usePick validates the model's choice (-32602 when unusable) and keeps it.
func (s *summarizer) usePick(_ context.Context, c *call, r *mrtr.SamplingResult) error {
	files, err := s.choose(r.Text(), c.State.Listing)
	if err != nil {
		return err
	}
	c.State.Files = files
	return nil
}

// askSummary reads the chosen files, with the caps, into the question.
func (s *summarizer) askSummary(_ context.Context, c *call) (*mrtr.SamplingRequest, error) {
	files, err := s.readChosen(c.State.Files)
	if err != nil {
		return nil, err
	}
	return summaryRequest(c.In.Audience, files), nil
}

func (s *summarizer) useSummary(_ context.Context, c *call, r *mrtr.SamplingResult) error {
	summary, err := checkSummary(KeySummary, r.Text())
	if err != nil {
		return err
	}
	c.State.Summary = summary
	return nil
}

func (s *summarizer) askCritique(_ context.Context, c *call) (*mrtr.SamplingRequest, error) {
	files, err := s.readChosen(c.State.Files)
	if err != nil {
		return nil, err
	}
	return critiqueRequest(c.In.Audience, files, c.State.Summary), nil
}

func (s *summarizer) useCritique(_ context.Context, c *call, r *mrtr.SamplingResult) error {
	summary, err := checkSummary(KeyCritique, r.Text())
	if err != nil {
		return err
	}
	c.State.Summary = summary
	return nil
}

// readChosen reads the files the model chose. A file that is gone, no
// longer text, too large, or now a link out of the tree means the
// directory changed since the listing: errListingChanged (-32602), as the
// tool documents, not an internal error. A chosen path that now leads to
// a withheld file is -32602 naming the rule.
func (s *summarizer) readChosen(paths []string) ([]File, error) {
	files, err := s.repo.ReadAll(paths)
	var we *WithheldError
	switch {
	case errors.As(err, &we):
		return nil, mrtr.InvalidParamsError("A chosen file is withheld by rule " + we.Rule +
			"; call the tool again without requestState")
	case errors.Is(err, ErrNotEligible) || errors.Is(err, ErrOutsideRoot):
		return nil, errListingChanged
	}
	return files, err
}

// errListingChanged is answered when the directory's listing differs from
// the one the model chose from.
var errListingChanged = mrtr.InvalidParamsError(
	"The summarised directory changed since its files were listed; call the tool again without requestState")

// choose validates the model's answer to pick_files. The listing is made
// again and must have the digest of the one the model was shown (the
// digest, not the listing, travels in the sealed state), then the answer
// must name one to three of its paths. Every refusal is -32602.
func (s *summarizer) choose(answer string, listingDigest string) ([]string, error) {
	l, err := s.repo.List()
	if err != nil {
		return nil, err
	}
	if l.Digest() != listingDigest {
		return nil, errListingChanged
	}
	picks, err := ParsePick(answer, l)
	if err != nil {
		var pe *PickError
		if errors.As(err, &pe) {
			return nil, invalidAnswer(KeyPickFiles, pe.Reason)
		}
		return nil, err
	}
	return picks, nil
}

// checkSummary validates a model's summary (answer to summary or critique).
// Its size is measured as the flow's state holds it, a JSON string
// (encodedLen), so that the summary always fits in requestState.
func checkSummary(key, text string) (string, error) {
	text = strings.TrimSpace(text)
	if text == "" {
		return "", invalidAnswer(key, "no text")
	}
	if n := encodedLen(text); n > maxSummaryBytes {
		return "", invalidAnswer(key, fmt.Sprintf("summary too long: %d bytes encoded, limit %d", n, maxSummaryBytes))
	}
	return text, nil
}

// encodedLen is the length of s as a JSON string in the flow's state,
// quotes left out. Package mrtr/flow encodes the state with
// encoding/json's Marshal, which escapes <, > and & as \u003c and the
// like and every control character, so that one byte of the summary can
// take six bytes of the state; measured this way, a summary that passes
// never makes requestState too large to seal.
func encodedLen(s string) int {
	b, err := json.Marshal(s)
	if err != nil {
		// Not reached: every Go string encodes (invalid UTF-8 as U+FFFD).
		return len(s) * 6
	}
	return len(b) - 2
}

// invalidAnswer is the -32602 error for a model answer that was refused.
func invalidAnswer(key, reason string) *mrtr.Error {
	return mrtr.NewError(mrtr.CodeInvalidParams, "Invalid answer to "+key+": "+reason, map[string]string{"key": key})
}
