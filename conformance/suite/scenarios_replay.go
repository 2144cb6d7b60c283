package suite

import (
	"context"
)

// The replay scenarios: a genuine state sent back with other arguments,
// another tool or another principal.

func replayOtherArgs(ctx context.Context, r *runner) Result {
	ctl, ok := r.control(ctx, "control: "+r.cfg.Tool+" with the other arguments, no requestState", r.cfg.Tool, r.cfg.AltArgs, false)
	if !ok {
		return notRun("the tool does not accept the other arguments even without a requestState (set other arguments it accepts): "+describeNoRPC(ctl), ctl.Evidence)
	}
	f, nr := r.first(ctx, false)
	if nr != nil {
		return *nr
	}
	rep := r.call(ctx, callSpec{label: "retry with the genuine state and answers but arguments " + string(r.cfg.AltArgs), tool: r.cfg.Tool, args: r.cfg.AltArgs, answers: f.answers, state: str(f.state)})
	return expectRefusal(rep, ctl.Evidence, f.Evidence)
}

func replayOtherTool(ctx context.Context, r *runner) Result {
	if r.cfg.OtherTool == "" {
		return notRun("needs a second tool (other tool not configured)")
	}
	ctl, ok := r.control(ctx, "control: "+r.cfg.OtherTool+", no requestState", r.cfg.OtherTool, r.cfg.OtherArgs, false)
	if !ok {
		return notRun("the other tool does not answer its arguments even without a requestState: "+describeNoRPC(ctl), ctl.Evidence)
	}
	f, nr := r.first(ctx, false)
	if nr != nil {
		return *nr
	}
	rep := r.call(ctx, callSpec{label: "the state and answers of " + r.cfg.Tool + " sent to " + r.cfg.OtherTool, tool: r.cfg.OtherTool, args: r.cfg.OtherArgs, answers: f.answers, state: str(f.state)})
	return expectRefusal(rep, ctl.Evidence, f.Evidence)
}

func replayOtherPrincipal(ctx context.Context, r *runner) Result {
	if r.cfg.Token == "" || r.cfg.OtherToken == "" {
		return notRun("needs two principals: set a token and another token")
	}
	ctl, ok := r.control(ctx, "control: first call as the other principal", r.cfg.Tool, r.cfg.Args, true)
	if !ok {
		return notRun("the other principal's call is not accepted even without a requestState: "+describeNoRPC(ctl), ctl.Evidence)
	}
	f, nr := r.first(ctx, false)
	if nr != nil {
		return *nr
	}
	rep := r.call(ctx, callSpec{label: "the first principal's state and answers presented by the other principal", tool: r.cfg.Tool, args: r.cfg.Args, answers: f.answers, state: str(f.state), other: true})
	return expectRefusal(rep, ctl.Evidence, f.Evidence)
}
