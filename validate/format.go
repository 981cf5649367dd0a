package validate

import (
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/ckgate/ckgate/internal/output"
)

// Formats WriteReport knows.
var Formats = []string{"table", "json", "junit"}

// WriteReport renders r to w as "table", "json" or "junit".
func WriteReport(w io.Writer, r *Report, format string) error {
	switch format {
	case "table":
		return WriteTable(w, r)
	case "json":
		return WriteJSON(w, r)
	case "junit":
		return WriteJUnit(w, r)
	}
	return usagef("format %q: want %s", format, strings.Join(Formats, ", "))
}

// WriteJSON writes r as one indented JSON object:
// {"url","principal","ok","probe_key","warnings","results":[{"layer","operation",
// "result","code","kind","message","request_id","address","duration_ms"}],
// "duration_ms"}.
func WriteJSON(w io.Writer, r *Report) error {
	return output.JSON(w, r)
}

// WriteTable writes r for a person: a header, one aligned line per probe
// and a summary line.
func WriteTable(w io.Writer, r *Report) error {
	principal := r.Principal
	if principal == "" {
		principal = "(unknown)"
	}
	fmt.Fprintf(w, "URL:       %s\nPrincipal: %s\n", r.URL, principal)
	if r.ProbeKey != "" {
		fmt.Fprintf(w, "Probe key: %s (removed)\n", r.ProbeKey)
	}
	for _, warning := range r.Warnings {
		fmt.Fprintf(w, "Warning:   %s\n", warning)
	}
	fmt.Fprintln(w)
	t := output.NewTable(w)
	t.Row("LAYER", "OPERATION", "RESULT", "CODE", "TIME", "MESSAGE")
	for _, res := range r.Results {
		msg := res.Message
		if res.RequestID != "" {
			msg += " [request id " + res.RequestID + "]"
		}
		t.Row(res.Layer, res.Operation, strings.ToUpper(string(res.Result)), output.Dash(res.Code), duration(res.DurationMS), output.Cell(msg))
	}
	if err := t.Flush(); err != nil {
		return err
	}
	verdict := "OK"
	if !r.OK {
		verdict = "FAILED"
	}
	_, err := fmt.Fprintf(w, "\n%s: %s in %s\n", verdict, r.String(), duration(r.DurationMS))
	return err
}

func duration(ms float64) string {
	switch {
	case ms == 0:
		return "-"
	case ms < 10:
		return strconv.FormatFloat(ms, 'f', 1, 64) + "ms"
	case ms < 10000:
		return strconv.FormatFloat(ms, 'f', 0, 64) + "ms"
	}
	return strconv.FormatFloat(ms/1000, 'f', 1, 64) + "s"
}

func seconds(ms float64) string { return strconv.FormatFloat(ms/1000, 'f', 3, 64) }

// WriteJUnit writes r as JUnit XML: one test suite per run, one test case
// per probe (classname "validate-access.LAYER"). A failed probe is a
// failure; a skipped one is skipped; an unknown one is skipped with a
// message that starts with "unknown:", so that CI shows it.
func WriteJUnit(w io.Writer, r *Report) error {
	suite := output.JUnitSuite{
		Name: "ckgate validate-access " + r.URL,
		Time: seconds(r.DurationMS),
		Properties: &output.JUnitProperties{Property: []output.JUnitProperty{
			{Name: "url", Value: r.URL},
			{Name: "principal", Value: r.Principal},
			{Name: "probe_key", Value: r.ProbeKey},
		}},
	}
	for _, warning := range r.Warnings {
		suite.Properties.Property = append(suite.Properties.Property, output.JUnitProperty{Name: "warning", Value: warning})
	}
	skipped := 0
	for _, res := range r.Results {
		c := output.JUnitCase{
			Name:      res.Operation,
			Classname: "validate-access." + string(res.Layer),
			Time:      seconds(res.DurationMS),
		}
		detail := res.Message
		if res.Code != "" {
			detail = res.Code + ": " + detail
		}
		if res.RequestID != "" {
			detail += " [request id " + res.RequestID + "]"
		}
		switch res.Result {
		case Fail:
			suite.Failures++
			c.Failure = &output.JUnitMessage{Message: detail, Type: res.Code, Text: detail}
		case Skip:
			skipped++
			c.Skipped = &output.JUnitMessage{Message: res.Message}
		case Unknown:
			skipped++
			c.Skipped = &output.JUnitMessage{Message: "unknown: " + detail}
		default:
			c.SystemOut = res.Message
		}
		suite.Tests++
		suite.Cases = append(suite.Cases, c)
	}
	suite.Skipped = &skipped
	return output.JUnit(w, output.JUnitSuites{Name: "ckgate validate-access", Tests: suite.Tests, Failures: suite.Failures,
		Skipped: skipped, Time: suite.Time, Suites: []output.JUnitSuite{suite}})
}
