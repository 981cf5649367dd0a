package output

import (
	"encoding/xml"
	"fmt"
	"io"
)

// JUnit XML, the subset CI systems read (Jenkins, GitLab, GitHub
// actions). A report is either a JUnitSuites holding one suite per run or
// a single JUnitSuite; the optional attributes are left out when empty.

// JUnitSuites is the <testsuites> root.
type JUnitSuites struct {
	XMLName  xml.Name     `xml:"testsuites"`
	Name     string       `xml:"name,attr"`
	Tests    int          `xml:"tests,attr"`
	Failures int          `xml:"failures,attr"`
	Skipped  int          `xml:"skipped,attr"`
	Time     string       `xml:"time,attr"`
	Suites   []JUnitSuite `xml:"testsuite"`
}

// JUnitSuite is one <testsuite>. Skipped, Time and Properties are
// written when set (nil or empty: left out).
type JUnitSuite struct {
	XMLName    xml.Name         `xml:"testsuite"`
	Name       string           `xml:"name,attr"`
	Tests      int              `xml:"tests,attr"`
	Failures   int              `xml:"failures,attr"`
	Skipped    *int             `xml:"skipped,attr,omitempty"`
	Time       string           `xml:"time,attr,omitempty"`
	Properties *JUnitProperties `xml:"properties,omitempty"`
	Cases      []JUnitCase      `xml:"testcase"`
}

// JUnitProperties is the <properties> of a suite.
type JUnitProperties struct {
	Property []JUnitProperty `xml:"property"`
}

// JUnitProperty is a <property name value>.
type JUnitProperty struct {
	Name  string `xml:"name,attr"`
	Value string `xml:"value,attr"`
}

// JUnitCase is one <testcase>: its name, Classname (how CI groups it),
// Time in seconds ("0.012"; empty: left out) and its outcome.
type JUnitCase struct {
	Name      string `xml:"name,attr"`
	Classname string `xml:"classname,attr"`
	Time      string `xml:"time,attr,omitempty"`
	JUnitOutcome
}

// JUnitOutcome is how a case ended: Failure or Skipped when set, passed
// when neither is; SystemOut is shown beside it (a warning, a detail).
type JUnitOutcome struct {
	Failure   *JUnitMessage `xml:"failure,omitempty"`
	Skipped   *JUnitMessage `xml:"skipped,omitempty"`
	SystemOut string        `xml:"system-out,omitempty"`
}

// JUnit writes doc (a JUnitSuites or a JUnitSuite) as an XML document
// indented by two spaces, and a newline.
func JUnit(w io.Writer, doc any) error {
	if _, err := io.WriteString(w, xml.Header); err != nil {
		return fmt.Errorf("write JUnit: %w", err)
	}
	enc := xml.NewEncoder(w)
	enc.Indent("", "  ")
	if err := enc.Encode(doc); err != nil {
		return fmt.Errorf("write JUnit: %w", err)
	}
	if _, err := io.WriteString(w, "\n"); err != nil {
		return fmt.Errorf("write JUnit: %w", err)
	}
	return nil
}

// JUnitMessage is a <failure> or <skipped> element.
type JUnitMessage struct {
	Message string `xml:"message,attr"`
	// Type classifies a failure (an error code, a severity); empty: left out.
	Type string `xml:"type,attr,omitempty"`
	// Text is the element's body: the detail CI shows when it is opened.
	Text string `xml:",chardata"`
}
