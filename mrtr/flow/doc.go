// Package flow lets you write a call that needs several rounds of input
// (from the user, from a model, from the client's roots) as a list of
// typed steps, while the framework keeps track of where the call stands.
//
// A flow is typed by its input In (the tool arguments), its state S and
// its output Out. Each step asks one question or several (Sample, Elicit,
// Form, Roots, All) and receives the validated answer to exactly that
// question, with the typed state to update. After the last step, finish
// turns the state into the output:
//
//	type Args struct {
//		Path     string `json:"path" validate:"required"`
//		Critique bool   `json:"critique,omitempty"`
//	}
//	type State struct {
//		Files   []string `json:"files,omitempty"`
//		Summary string   `json:"summary,omitempty"`
//	}
//	type Out struct {
//		Files   []string `json:"files"`
//		Summary string   `json:"summary"`
//	}
//
//	f, err := flow.New(
//		[]flow.Step[Args, State]{
//			flow.Sample("pick_files", askPick, usePick),
//			flow.Sample("summary", askSummary, useSummary),
//			flow.When(wantsCritique, flow.Sample("critique", askCritique, useCritique)),
//		},
//		func(ctx context.Context, c *flow.Call[Args, State]) (Out, error) {
//			return Out{Files: c.State.Files, Summary: c.State.Summary}, nil
//		},
//		flow.WithModel(m), flow.WithBudget(3))
//	err = typed.AddTool(srv, mrtr.Tool{Name: "summarize_repo"}, f)
//
// with, for instance:
//
//	func usePick(ctx context.Context, c *flow.Call[Args, State], r *mrtr.SamplingResult) error {
//		files, err := parsePick(r.Text())
//		if err != nil {
//			return mrtr.InvalidParamsError("pick_files: " + err.Error())
//		}
//		c.State.Files = files
//		return nil
//	}
//
// # Position and state
//
// User code never names a phase. Whenever the flow needs the client, it
// returns input_required with every open question of the current step and
// a state holding the step's index, which of its questions are settled,
// the questions put so far and S encoded as JSON; the server
// seals that state (package state) and verifies it on the retry before the
// flow sees it. On the retry the flow resumes at the recorded step, hands
// each answer to the use function of the question asked under that key at
// that step, and moves on. Answers to keys that step did not ask are
// ignored; a question left unanswered is asked again; a state replayed
// from an earlier round resumes from that round's position, as it did the
// first time. A state sealed by a flow with other steps (a new release
// during a rolling deploy) is refused as an invalid requestState.
//
// # Answers are untrusted
//
// The server has checked each answer's shape; its meaning is the step's to
// check. A use function that finds an answer unusable returns an error,
// typically mrtr.InvalidParamsError (-32602), and the call ends with it:
// nothing of the answer is kept; or it returns AskAgain to put the
// question again.
//
// # Forms
//
// Form and FormFunc ask the user to fill in a form generated from a
// struct F by typed.NewForm (see typed.Form): `jsonschema` tags give
// descriptions, `mcp` tags titles, defaults and enum titles, and the
// bounds, lengths, formats and enums of `validate` tags become the form's
// keywords. The submitted content is checked against the schema that was
// asked and F's validate tags before use sees it, decoded into F. Content
// that fails ends the call with -32602 naming each problem, or, with
// ReaskInvalid, is asked again, the message followed by what was wrong
// (each asking counts against the budget). FormFunc builds the message
// from the call's arguments and state. A declined or cancelled form
// reaches use with its action (FormAnswer.Declined, Cancelled): go on
// without the answer, or end the call; do not ask the same form again.
//
// # Models
//
// Sample steps go through the flow's model (WithModel). With the default,
// model.Client(), the client's model answers: the step returns
// input_required with an embedded sampling/createMessage and resumes on
// the retry. With a model the server calls itself, such as the
// chat-completions adapter in package mrtr/model/openai, the step
// completes inline and the flow moves on in the same round; a flow of
// Sample steps then finishes in one round. The steps are the same either
// way. A use function that refuses the server's own model's answer with an
// *mrtr.Error ends the call with -32603 instead, as the client sent
// nothing wrong.
//
// # Budget
//
// Each time a flow puts a step's questions, to the client or to its model,
// it spends one of its budget (5, or WithBudget), including
// asking again for a missing answer or after AskAgain. A call that needs
// more ends with an isError tool result saying so (wrapping ErrBudget);
// for prompts and resources, with -32603. The budget is the flow's own;
// the Server's round limit (mrtr.WithMaxRounds) counts input_required
// rounds, and typed.AddTool refuses a flow whose budget exceeds it.
package flow
