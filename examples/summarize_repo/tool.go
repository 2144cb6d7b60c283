package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/mrtrkit/mrtrkit/mrtr"
	"github.com/mrtrkit/mrtrkit/mrtr/model"
	"github.com/mrtrkit/mrtrkit/mrtr/typed"
)

// ToolName is the name of the one tool the example serves.
const ToolName = "summarize_repo"

// maxSummaryBytes bounds a summary the model returns, measured as it is
// encoded in the call's state (encodedLen); the answer rides in the
// sealed requestState while the critique round runs.
const maxSummaryBytes = 8 << 10

// Args are the tool's arguments, bound and checked by package typed
// before the tool runs; the tool's input schema is generated from them,
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

// summarizer holds what the tool needs: the directory, whether the
// critique round runs, and the model that answers.
type summarizer struct {
	repo     *Repo
	critique bool
	model    model.Model
}

// summarize is the tool, in straight-line code. It runs again from the
// top on every round of a call (each model question is one round when the
// client's model answers): questions already answered return their
// answers, and the first unanswered one returns an error that ends this
// run with input_required. Only what may differ between runs is memoised:
// the digest of the listing the model chose from.
func (s *summarizer) summarize(ctx context.Context, req *mrtr.Request, in Args) (Output, error) {
	paths, err := mrtr.Memo(ctx, req, "files", func(ctx context.Context) ([]string, error) {
		return s.pick(ctx, req, in)
	})
	if err != nil {
		return Output{}, err
	}
	files, err := s.readChosen(paths)
	if err != nil {
		return Output{}, err
	}

	answer, err := model.Sample(ctx, s.model, req, KeySummary, summaryRequest(in.Audience, files))
	if err != nil {
		return Output{}, err
	}
	summary, err := s.checkSummary(KeySummary, answer.Text())
	if err != nil || !s.critique {
		return Output{Files: paths, Summary: summary}, err
	}

	answer, err = model.Sample(ctx, s.model, req, KeyCritique, critiqueRequest(in.Audience, files, summary))
	if err != nil {
		return Output{}, err
	}
	summary, err = s.checkSummary(KeyCritique, answer.Text())
	return Output{Files: paths, Summary: summary}, err
}

// pick asks the model to choose files from the listing and checks its
// choice. It runs inside a memo: once it returns, the chosen paths are
// sealed into the call's state and the model's raw answer leaves it. The
// listing is read again on every round until then; the digest of the one
// the model was shown is memoised, so a listing that changed in between
// is refused rather than asked about again.
func (s *summarizer) pick(ctx context.Context, req *mrtr.Request, in Args) ([]string, error) {
	l, err := s.repo.List()
	if err != nil {
		return nil, err
	}
	shown, err := mrtr.Memo(ctx, req, "listing", func(context.Context) (string, error) { return l.Digest(), nil })
	if err != nil {
		return nil, err
	}
	if shown != l.Digest() {
		return nil, errListingChanged
	}
	answer, err := model.Sample(ctx, s.model, req, KeyPickFiles, pickRequest(in.Audience, l))
	if err != nil {
		return nil, err
	}
	picks, err := ParsePick(answer.Text(), l)
	var pe *PickError
	if errors.As(err, &pe) {
		return nil, s.invalidAnswer(KeyPickFiles, pe.Reason)
	}
	return picks, err
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

// checkSummary validates a model's summary (answer to summary or critique).
// Its size is measured as a JSON string (encodedLen), as the call's
// sealed state holds the model's answer, so that a summary that passes
// always fits in requestState.
func (s *summarizer) checkSummary(key, text string) (string, error) {
	text = strings.TrimSpace(text)
	if text == "" {
		return "", s.invalidAnswer(key, "no text")
	}
	if n := encodedLen(text); n > maxSummaryBytes {
		return "", s.invalidAnswer(key, fmt.Sprintf("summary too long: %d bytes encoded, limit %d", n, maxSummaryBytes))
	}
	return text, nil
}

// encodedLen is the length of s as a JSON string in the call's state,
// quotes left out. The state holds answers as encoding/json writes them, which escapes <, > and & as \u003c and the
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

// invalidAnswer refuses a model's answer: -32602 when the client's model
// gave it, and an internal error (-32603, logged) when the server's own
// model did, as the caller is not at fault.
func (s *summarizer) invalidAnswer(key, reason string) error {
	if s.model != model.Client() {
		return fmt.Errorf("the server's model gave an unusable answer to %s: %s", key, reason)
	}
	return mrtr.NewError(mrtr.CodeInvalidParams, "Invalid answer to "+key+": "+reason, map[string]string{"key": key})
}
