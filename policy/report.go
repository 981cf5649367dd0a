package policy

import (
	"bytes"
	"fmt"
	"strings"

	"github.com/ckgate/ckgate/internal/output"
)

// JUnit encodes r as a JUnit XML report: one test case per checkpoint and
// rule pair that has findings (deny and unknown are failures, warn is
// reported in system-out), and one passing case per clean checkpoint.
func (r *Report) JUnit() ([]byte, error) {
	s := output.JUnitSuite{Name: "ckgate audit"}
	byResource := map[string][]Finding{}
	var order []string
	for _, f := range r.Findings {
		if _, ok := byResource[f.Resource]; !ok {
			order = append(order, f.Resource)
		}
		byResource[f.Resource] = append(byResource[f.Resource], f)
	}
	for _, cp := range r.Checkpoints {
		if _, ok := byResource[cp.URL]; !ok {
			s.Cases = append(s.Cases, output.JUnitCase{Name: cp.URL, Classname: "checkpoint"})
		}
	}
	for _, res := range order {
		for _, f := range byResource[res] {
			tc := output.JUnitCase{Name: f.ID + " " + f.Name + ": " + res, Classname: f.ID}
			if f.Severity == SeverityWarn {
				tc.SystemOut = "warn: " + f.Msg
			} else {
				tc.Failure = &output.JUnitMessage{Message: f.Msg, Type: f.Severity, Text: f.Msg}
				s.Failures++
			}
			s.Cases = append(s.Cases, tc)
		}
	}
	s.Tests = len(s.Cases)
	var b bytes.Buffer
	if err := output.JUnit(&b, s); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

// SARIF encodes r as a SARIF 2.1.0 log with the rule catalogue as the
// tool's rules: deny → error, warn → warning, unknown → note with the
// "unknown" property (never "none").
func (r *Report) SARIF(rules []Rule) ([]byte, error) {
	type text struct {
		Text string `json:"text"`
	}
	type sarifRule struct {
		ID               string         `json:"id"`
		Name             string         `json:"name"`
		ShortDescription text           `json:"shortDescription"`
		Properties       map[string]any `json:"properties,omitempty"`
	}
	type location struct {
		PhysicalLocation struct {
			ArtifactLocation struct {
				URI string `json:"uri"`
			} `json:"artifactLocation"`
		} `json:"physicalLocation"`
	}
	type result struct {
		RuleID     string         `json:"ruleId"`
		Level      string         `json:"level"`
		Message    text           `json:"message"`
		Locations  []location     `json:"locations"`
		Properties map[string]any `json:"properties"`
	}
	var srules []sarifRule
	seen := map[string]bool{}
	for _, ru := range rules {
		if ru.Scope != "audit" {
			continue
		}
		seen[ru.ID] = true
		srules = append(srules, sarifRule{ID: ru.ID, Name: ru.Name, ShortDescription: text{ru.Description},
			Properties: map[string]any{"severity": ru.Severity}})
	}
	results := []result{}
	for _, f := range r.Findings {
		if !seen[f.ID] {
			seen[f.ID] = true
			srules = append(srules, sarifRule{ID: f.ID, Name: f.Name, ShortDescription: text{f.Name}})
		}
		level := map[string]string{SeverityDeny: "error", SeverityWarn: "warning"}[f.Severity]
		if level == "" {
			level = "note"
		}
		var loc location
		loc.PhysicalLocation.ArtifactLocation.URI = f.Resource
		results = append(results, result{RuleID: f.ID, Level: level, Message: text{f.Msg},
			Locations: []location{loc}, Properties: map[string]any{"severity": f.Severity}})
	}
	log := map[string]any{
		"$schema": "https://json.schemastore.org/sarif-2.1.0.json",
		"version": "2.1.0",
		"runs": []any{map[string]any{
			"tool": map[string]any{"driver": map[string]any{
				"name":           "ckgate audit",
				"informationUri": "https://github.com/ckgate/ckgate",
				"rules":          srules,
			}},
			"results": results,
		}},
	}
	var b bytes.Buffer
	if err := output.JSON(&b, log); err != nil {
		return nil, fmt.Errorf("sarif: %w", err)
	}
	return b.Bytes(), nil
}

// Summary is one line: "3 checkpoints, 2 deny, 1 warn, 0 unknown".
func (r *Report) Summary() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%d checkpoint", len(r.Checkpoints))
	if len(r.Checkpoints) != 1 {
		b.WriteString("s")
	}
	fmt.Fprintf(&b, ", %d deny, %d warn, %d unknown", r.Count(SeverityDeny), r.Count(SeverityWarn), r.Count(SeverityUnknown))
	return b.String()
}
