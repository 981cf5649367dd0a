package policy

import (
	"context"
	"fmt"
	"time"

	"github.com/open-policy-agent/opa/v1/ast"
	"github.com/open-policy-agent/opa/v1/storage/inmem"
	"github.com/open-policy-agent/opa/v1/tester"
)

// TestOptions configure RunTests.
type TestOptions struct {
	// Dirs are directories or files of Rego modules, tests and data (as
	// `opa test` loads them) run with the defaults.
	Dirs []string
	// DataFiles are merged into data.
	DataFiles []string
	// NoDefaults leaves out the embedded default policies and their tests.
	NoDefaults bool
	// Run selects tests by a regular expression on package.name, as
	// `opa test --run` does.
	Run string
}

// TestResult is the outcome of one Rego test rule.
type TestResult struct {
	Package  string        `json:"package"`
	Name     string        `json:"name"`
	Location string        `json:"location"`
	Pass     bool          `json:"pass"`
	Skip     bool          `json:"skip,omitempty"`
	Error    string        `json:"error,omitempty"`
	Output   string        `json:"output,omitempty"`
	Duration time.Duration `json:"duration_ns"`
}

// Failed reports whether the test failed or errored.
func (t TestResult) Failed() bool { return !t.Pass && !t.Skip }

// RunTests runs the Rego unit tests (rules named test_*) of the default
// policies and of o.Dirs, over the modules and data the engine (New)
// loads from the same directories. An error means the tests could not
// run: a file that does not parse, a module that does not compile or
// fails the strict check (see Check), a decision rule the gateway would
// never read.
func RunTests(ctx context.Context, o TestOptions) ([]TestResult, error) {
	l, err := load(o.loadOptions())
	if err != nil {
		return nil, err
	}
	if err := canonicalQueries(l.data); err != nil {
		return nil, err
	}
	if err := strictCheck(ctx, l.modules); err != nil {
		return nil, err
	}
	r := tester.NewRunner().SetStore(inmem.NewFromObject(l.data)).CapturePrintOutput(true).
		RaiseBuiltinErrors(true).SetDefaultRegoVersion(ast.RegoV1)
	if o.Run != "" {
		r = r.Filter(o.Run)
	}
	ch, err := r.Run(ctx, l.modules)
	if err != nil {
		return nil, fmt.Errorf("policy: tests: %w", err)
	}
	var out []TestResult
	for res := range ch {
		tr := TestResult{
			Package:  res.Package,
			Name:     res.Name,
			Pass:     res.Pass(),
			Skip:     res.Skip,
			Output:   string(res.Output),
			Duration: res.Duration,
		}
		if res.Location != nil {
			tr.Location = fmt.Sprintf("%s:%d", res.Location.File, res.Location.Row)
		}
		if res.Error != nil {
			tr.Error = res.Error.Error()
		} else if res.Fail {
			tr.Error = "fail"
		}
		out = append(out, tr)
	}
	return out, nil
}
