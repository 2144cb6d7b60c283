package mrtr

// A Stage is a step of the Server's validation ladder: the step that
// refused a request, as Call.RefusedAt records it. The constants are in
// the order the Server takes the steps, so a comparison says how far a
// request got: a request refused at or after StageMethod had its protocol
// version accepted. StageNone, the zero value, means the Server did not
// refuse: the handler answered, with a result or an error of its own.
//
// String returns the step's name as Call.Refusal, logs (AuditLog) and
// metrics carry it. Three names stand for two steps each: "header" (the
// version header, then the mirrored x-mcp-header values), "params" (the
// params object, then the method's own members) and "limit" (admission,
// then a listen request's own limit).
type Stage uint8

// The steps of the ladder, in the order the Server takes them.
const (
	StageNone          Stage = iota // "": not refused
	StageLimit                      // "limit": admission (WithMaxInFlight)
	StageParams                     // "params": params is not an object of the right members
	StageVersionHeader              // "header": the version header disagrees with _meta
	StageVersion                    // "version": the version claimed is not one the Server speaks
	StageMeta                       // "meta": a reserved _meta member is malformed
	StageMethod                     // "method": the method is not served
	StageTarget                     // "target": the tool, prompt or resource is unknown or hidden
	StageScope                      // "scope": the caller's token lacks a required scope
	StageHeader                     // "header": a mirrored x-mcp-header value is wrong
	StageMethodParams               // "params": a member of the method's own is malformed
	StageListenLimit                // "limit": the caller's listen requests are at their limit
	StageArguments                  // "arguments": the arguments are not a valid object
	StageState                      // "state": the requestState is refused (Call.StateReason)
	StageAnswers                    // "answers": inputResponses do not answer what was asked
	StageTaskLimit                  // "limit": the caller holds as many tasks as it may (Tasks extension)
	StageCapability                 // "capability": the client cannot answer what the handler asks
	StageRoundLimit                 // "round_limit": the handler asked past WithMaxRounds
	StageTimeout                    // "timeout": the handler ran past WithHandlerTimeout
	StagePanic                      // "panic": a handler or the Server panicked
)

var stageNames = [...]string{
	StageNone:          "",
	StageLimit:         "limit",
	StageParams:        "params",
	StageVersionHeader: "header",
	StageVersion:       "version",
	StageMeta:          "meta",
	StageMethod:        "method",
	StageTarget:        "target",
	StageScope:         "scope",
	StageHeader:        "header",
	StageMethodParams:  "params",
	StageListenLimit:   "limit",
	StageArguments:     "arguments",
	StageState:         "state",
	StageAnswers:       "answers",
	StageTaskLimit:     "limit",
	StageCapability:    "capability",
	StageRoundLimit:    "round_limit",
	StageTimeout:       "timeout",
	StagePanic:         "panic",
}

// String returns the step's name as Call.Refusal carries it; "" for
// StageNone and for a value that is no step.
func (s Stage) String() string {
	if int(s) < len(stageNames) {
		return stageNames[s]
	}
	return ""
}

// VersionAccepted reports whether a request refused at s got past the
// version steps: its protocol version, if it claimed one, is one the
// Server speaks. True for StageNone.
func (s Stage) VersionAccepted() bool {
	return s == StageNone || s >= StageMethod
}
