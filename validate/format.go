package validate

import (
	"encoding/json"
	"encoding/xml"
	"fmt"
	"io"
	"strconv"
	"strings"
	"text/tabwriter"
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
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(r)
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
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "LAYER\tOPERATION\tRESULT\tCODE\tTIME\tMESSAGE")
	for _, res := range r.Results {
		code := res.Code
		if code == "" {
			code = "-"
		}
		msg := res.Message
		if res.RequestID != "" {
			msg += " [request id " + res.RequestID + "]"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\n", res.Layer, res.Operation, strings.ToUpper(string(res.Result)), code, duration(res.DurationMS), oneLine(msg))
	}
	if err := tw.Flush(); err != nil {
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

// oneLine keeps a table cell on one line.
func oneLine(s string) string {
	return strings.Map(func(r rune) rune {
		if r == '\n' || r == '\r' || r == '\t' {
			return ' '
		}
		return r
	}, s)
}

// JUnit XML (the subset CI systems read: Jenkins, GitLab, GitHub actions).
type junitSuites struct {
	XMLName  xml.Name     `xml:"testsuites"`
	Name     string       `xml:"name,attr"`
	Tests    int          `xml:"tests,attr"`
	Failures int          `xml:"failures,attr"`
	Skipped  int          `xml:"skipped,attr"`
	Time     string       `xml:"time,attr"`
	Suites   []junitSuite `xml:"testsuite"`
}

type junitSuite struct {
	Name       string          `xml:"name,attr"`
	Tests      int             `xml:"tests,attr"`
	Failures   int             `xml:"failures,attr"`
	Skipped    int             `xml:"skipped,attr"`
	Time       string          `xml:"time,attr"`
	Properties []junitProperty `xml:"properties>property"`
	Cases      []junitCase     `xml:"testcase"`
}

type junitProperty struct {
	Name  string `xml:"name,attr"`
	Value string `xml:"value,attr"`
}

type junitCase struct {
	Name      string        `xml:"name,attr"`
	Classname string        `xml:"classname,attr"`
	Time      string        `xml:"time,attr"`
	Failure   *junitMessage `xml:"failure,omitempty"`
	Skipped   *junitMessage `xml:"skipped,omitempty"`
	SystemOut string        `xml:"system-out,omitempty"`
}

type junitMessage struct {
	Message string `xml:"message,attr"`
	Type    string `xml:"type,attr,omitempty"`
	Text    string `xml:",chardata"`
}

func seconds(ms float64) string { return strconv.FormatFloat(ms/1000, 'f', 3, 64) }

// WriteJUnit writes r as JUnit XML: one test suite per run, one test case
// per probe (classname "validate-access.LAYER"). A failed probe is a
// failure; a skipped one is skipped; an unknown one is skipped with a
// message that starts with "unknown:", so that CI shows it.
func WriteJUnit(w io.Writer, r *Report) error {
	suite := junitSuite{
		Name: "ckgate validate-access " + r.URL,
		Time: seconds(r.DurationMS),
		Properties: []junitProperty{
			{Name: "url", Value: r.URL},
			{Name: "principal", Value: r.Principal},
			{Name: "probe_key", Value: r.ProbeKey},
		},
	}
	for _, warning := range r.Warnings {
		suite.Properties = append(suite.Properties, junitProperty{Name: "warning", Value: warning})
	}
	for _, res := range r.Results {
		c := junitCase{
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
			c.Failure = &junitMessage{Message: detail, Type: res.Code, Text: detail}
		case Skip:
			suite.Skipped++
			c.Skipped = &junitMessage{Message: res.Message}
		case Unknown:
			suite.Skipped++
			c.Skipped = &junitMessage{Message: "unknown: " + detail}
		default:
			c.SystemOut = res.Message
		}
		suite.Tests++
		suite.Cases = append(suite.Cases, c)
	}
	doc := junitSuites{Name: "ckgate validate-access", Tests: suite.Tests, Failures: suite.Failures,
		Skipped: suite.Skipped, Time: suite.Time, Suites: []junitSuite{suite}}
	if _, err := io.WriteString(w, xml.Header); err != nil {
		return err
	}
	enc := xml.NewEncoder(w)
	enc.Indent("", "  ")
	if err := enc.Encode(doc); err != nil {
		return err
	}
	_, err := io.WriteString(w, "\n")
	return err
}
