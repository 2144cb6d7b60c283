package flow_test

// The summarize_repo flow, without the file system: round 1 asks the model
// (key pick_files) to choose up to three of the listed files as a JSON
// array; round 2 asks it (key summary) to summarize their contents; an
// optional round 3 (key critique) asks it to critique and improve the
// summary. The flow is capped at three model rounds.

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/mrtrkit/mrtrkit/mrtr"
	"github.com/mrtrkit/mrtrkit/mrtr/flow"
	"github.com/mrtrkit/mrtrkit/mrtr/model"
	"github.com/mrtrkit/mrtrkit/mrtr/typed"
)

// repo stands in for the repository on disk.
var repo = map[string]string{
	"README.md":       "# Tide\nTide predicts tides.",
	"main.go":         "package main\n\nfunc main() { predict() }",
	"predict.go":      "package main\n\nfunc predict() {}",
	"go.mod":          "module example.com/tide",
	"docs/install.md": "Run go install.",
}

func listing() []string {
	var files []string
	for f := range repo {
		files = append(files, f)
	}
	return sortStrings(files)
}

func sortStrings(s []string) []string { slices.Sort(s); return s }

type SummarizeArgs struct {
	Path     string `json:"path" jsonschema:"the repository to summarize" validate:"required"`
	Critique bool   `json:"critique,omitempty" jsonschema:"let the model critique and improve its summary"`
}

type SummarizeState struct {
	Files   []string `json:"files,omitempty"`
	Summary string   `json:"summary,omitempty"`
}

type SummarizeOut struct {
	Files   []string `json:"files" jsonschema:"the files the summary is based on"`
	Summary string   `json:"summary" jsonschema:"the summary"`
}

type call = flow.Call[SummarizeArgs, SummarizeState]

// pickBinder checks the model's pick: a JSON array of at most three strings.
var pickBinder = func() *typed.Binder[[]string] {
	b, err := typed.NewBinder[[]string](&typed.BindOptions{Schema: &jsonschema.Schema{
		Type: "array", Items: &jsonschema.Schema{Type: "string"}, MaxItems: jsonschema.Ptr(3),
	}})
	if err != nil {
		panic(err)
	}
	return b
}()

func askPick(_ context.Context, c *call) (*mrtr.SamplingRequest, error) {
	return &mrtr.SamplingRequest{
		SystemPrompt: "You choose files. Answer with a JSON array of paths and nothing else.",
		Messages: []mrtr.SamplingMessage{mrtr.UserText(fmt.Sprintf(
			"Repository %s has these files:\n%s\nWhich three files best explain what it does?", c.In.Path, strings.Join(listing(), "\n")))},
		MaxTokens: 200,
	}, nil
}

func usePick(_ context.Context, c *call, r *mrtr.SamplingResult) error {
	files, err := pickBinder.Bind(json.RawMessage(r.Text()))
	if err != nil {
		return mrtr.InvalidParamsError("pick_files: the answer must be a JSON array of at most 3 listed paths: " + err.Error())
	}
	seen := map[string]bool{}
	for _, f := range files {
		if _, ok := repo[f]; !ok || seen[f] {
			return mrtr.InvalidParamsError(fmt.Sprintf("pick_files: %q is not a listed path, or is listed twice", f))
		}
		seen[f] = true
	}
	if len(files) == 0 {
		return mrtr.InvalidParamsError("pick_files: no file chosen")
	}
	c.State.Files = files
	return nil
}

func askSummary(_ context.Context, c *call) (*mrtr.SamplingRequest, error) {
	var b strings.Builder
	b.WriteString("Summarize this repository from these files.\n")
	for _, f := range c.State.Files {
		fmt.Fprintf(&b, "\n=== %s ===\n%s\n", f, repo[f])
	}
	return &mrtr.SamplingRequest{Messages: []mrtr.SamplingMessage{mrtr.UserText(b.String())}, MaxTokens: 500}, nil
}

func useSummary(_ context.Context, c *call, r *mrtr.SamplingResult) error {
	s := strings.TrimSpace(r.Text())
	if s == "" {
		return mrtr.InvalidParamsError("summary: the answer is empty")
	}
	c.State.Summary = s
	return nil
}

func askCritique(_ context.Context, c *call) (*mrtr.SamplingRequest, error) {
	return &mrtr.SamplingRequest{
		Messages:  []mrtr.SamplingMessage{mrtr.UserText("Critique this summary and answer with a better one:\n" + c.State.Summary)},
		MaxTokens: 500,
	}, nil
}

func useCritique(ctx context.Context, c *call, r *mrtr.SamplingResult) error {
	return useSummary(ctx, c, r)
}

func finishSummary(_ context.Context, c *call) (SummarizeOut, error) {
	return SummarizeOut{Files: c.State.Files, Summary: c.State.Summary}, nil
}

func summarizeFlow(m model.Model, opts ...flow.Option) (*flow.Flow[SummarizeArgs, SummarizeState, SummarizeOut], error) {
	return flow.New(
		[]flow.Step[SummarizeArgs, SummarizeState]{
			flow.Sample("pick_files", askPick, usePick),
			flow.Sample("summary", askSummary, useSummary),
			flow.When(func(c *call) bool { return c.In.Critique }, flow.Sample("critique", askCritique, useCritique)),
		},
		finishSummary,
		append([]flow.Option{flow.WithModel(m), flow.WithBudget(3)}, opts...)...,
	)
}
