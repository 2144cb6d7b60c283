package suite

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"
)

// Status is the outcome of one scenario.
type Status string

const (
	// Pass: the server behaved as the scenario requires.
	Pass Status = "PASS"
	// Fail: it did not. The suite's callers treat any Fail as failure.
	Fail Status = "FAIL"
	// NotRun: the scenario could not be judged, for want of configuration
	// (a second tool, two principals) or because a precondition did not
	// hold (the baseline failed, the server refused the control call).
	// It is neither a pass nor a failure.
	NotRun Status = "NOT-RUN"
	// Info: the scenario records behaviour the specification leaves to the
	// server. It never fails.
	Info Status = "INFO"
)

// Result is the outcome of one scenario.
type Result struct {
	// ID names the scenario, such as "state.flip-middle".
	ID string `json:"id"`
	// Title describes the scenario in a few words.
	Title string `json:"title"`
	// Status is the verdict.
	Status Status `json:"status"`
	// Reason explains the verdict in one line.
	Reason string `json:"reason"`
	// Evidence holds every exchange the verdict rests on, in order.
	Evidence []Evidence `json:"evidence,omitempty"`

	// inapplicable marks a NotRun whose property does not apply to the
	// server (its state is opaque, so it cannot be forged); Config.Strict
	// does not count it as a failure.
	inapplicable bool
}

// Report is the outcome of one run of the suite.
type Report struct {
	// URL is the endpoint checked.
	URL string `json:"url"`
	// Tool and OtherTool are the tools used.
	Tool      string `json:"tool"`
	OtherTool string `json:"otherTool,omitempty"`
	// Started is when the run began; ElapsedMS how long it took.
	Started   time.Time `json:"started"`
	ElapsedMS int64     `json:"elapsedMs"`
	// Results are in the order of Scenarios.
	Results []Result `json:"results"`
	// Counts holds the number of results of each status.
	Counts map[Status]int `json:"counts"`
}

// Failed reports whether any scenario failed.
func (r *Report) Failed() bool { return r.Counts[Fail] > 0 }

// Result returns the result of the scenario id, if it ran.
func (r *Report) Result(id string) (Result, bool) {
	for _, res := range r.Results {
		if res.ID == id {
			return res, true
		}
	}
	return Result{}, false
}

// WriteText writes the report as a table, one scenario a line, followed
// by the counts. With verbose, every exchange of every scenario follows
// its line; otherwise only those of failed scenarios do.
func (r *Report) WriteText(w io.Writer, verbose bool) error {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintf(tw, "mrtrcheck %s (tool %s", r.URL, r.Tool)
	if r.OtherTool != "" {
		fmt.Fprintf(tw, ", other tool %s", r.OtherTool)
	}
	fmt.Fprintf(tw, ")\n\n")
	fmt.Fprintf(tw, "SCENARIO\tRESULT\tREASON\n")
	for _, res := range r.Results {
		fmt.Fprintf(tw, "%s\t%s\t%s\n", res.ID, res.Status, oneLine(res.Reason))
		if verbose || res.Status == Fail {
			for _, e := range res.Evidence {
				fmt.Fprintf(tw, "\t\t  · %s → %s (%d ms)\n", oneLine(e.Probe), oneLine(e.String()), e.ElapsedMS)
			}
		}
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	_, err := fmt.Fprintf(w, "\n%d scenarios: %d PASS, %d FAIL, %d NOT-RUN, %d INFO (%d ms)\n",
		len(r.Results), r.Counts[Pass], r.Counts[Fail], r.Counts[NotRun], r.Counts[Info], r.ElapsedMS)
	return err
}

// oneLine keeps s on one line, so that the table stays aligned.
func oneLine(s string) string {
	return strings.Join(strings.Fields(strings.ReplaceAll(s, "\t", " ")), " ")
}
