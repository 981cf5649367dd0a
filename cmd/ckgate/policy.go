package main

import (
	"fmt"
	"io"
	"os"
	"strings"
	"sync"

	"github.com/urfave/cli/v2"

	"github.com/ckgate/ckgate/gateway"
	"github.com/ckgate/ckgate/internal/output"
	"github.com/ckgate/ckgate/policy"
)

// policyCommand is `ckgate policy test|rules|eval`: the OPA policies that
// decide every gateway mutation and the audit.
func (e *env) policyCommand() *cli.Command {
	return &cli.Command{
		Name:      "policy",
		UsageText: "ckgate policy command [command options] [arguments...]",
		Usage:     "test, list and evaluate the OPA policies that decide every mutation and the audit",
		Description: "ckgate decides every put and delete through the gateway, every checkpoint open and every\n" +
			"audit finding with OPA (Rego v1). The default policies are built in; add your own with\n" +
			"--policy DIR and data with --data FILE. The gateway reads the sets `deny` (refuse) and `warn`\n" +
			"(report, allow) of packages ckgate.gateway.rules.NAME, written ckgate's way or conftest's\n" +
			"(`deny contains msg if ...`, msg a string or {\"msg\", \"code\"}); the audit reads the set\n" +
			"`findings` of packages ckgate.audit.rules.NAME. A decision rule anywhere else (conftest's\n" +
			"package main) is refused when the policy loads. See docs/policy.md.",
		Subcommands: []*cli.Command{
			e.policyTestCommand(),
			e.policyRulesCommand(),
			e.policyEvalCommand(),
		},
	}
}

// policyFlags are the flags of every command that evaluates policies.
func policyFlags() []cli.Flag {
	return []cli.Flag{
		&cli.StringSliceFlag{Name: "policy", Usage: "add the Rego modules (and data files) under `DIR` to the default policies (repeatable)"},
		&cli.StringSliceFlag{Name: "data", Usage: "merge the JSON or YAML document `FILE` into data (repeatable)"},
	}
}

// decisionLogFlag is the --decision-log flag of commands that decide
// mutations.
func decisionLogFlag() cli.Flag {
	return &cli.StringFlag{Name: "decision-log", Usage: "write every policy decision as a JSON line to `FILE`, a regular file appended to and fsynced per record (- for stderr, which cannot record a break glass)"}
}

// policyEngine builds the engine from --policy and --data. A policy that
// does not load or compile is unreadable input.
func (e *env) policyEngine(c *cli.Context) (*policy.Engine, error) {
	eng, err := policy.New(c.Context, policy.Options{PolicyDirs: c.StringSlice("policy"), DataFiles: c.StringSlice("data")})
	if err != nil {
		return nil, &InputError{Err: err}
	}
	return eng, nil
}

// decisionLog opens --decision-log; the returned close function is never nil.
func (e *env) decisionLog(c *cli.Context) (*policy.DecisionLog, func() error, error) {
	l, closeLog, err := policy.OpenDecisionLog(c.String("decision-log"), e.stderr)
	if err != nil {
		return nil, nil, &InputError{Err: fmt.Errorf("--decision-log: %w", err)}
	}
	return l, closeLog, nil
}

// policyAndLog is policyEngine and decisionLog, for the commands whose
// writes the policy decides; the close function is never nil on success.
func (e *env) policyAndLog(c *cli.Context) (*policy.Engine, *policy.DecisionLog, func() error, error) {
	eng, err := e.policyEngine(c)
	if err != nil {
		return nil, nil, nil, err
	}
	log, closeLog, err := e.decisionLog(c)
	if err != nil {
		return nil, nil, nil, err
	}
	return eng, log, closeLog, nil
}

// loggedError is err, or else the decision log's error: a command whose
// decisions were not all logged fails.
func loggedError(log *policy.DecisionLog, err error) error {
	if lerr := log.Err(); lerr != nil && err == nil {
		return fmt.Errorf("decision log: %w", lerr)
	}
	return err
}

// warnMu keeps the warnings of concurrent writes one line each.
var warnMu sync.Mutex

// policyWarning shows an allowed write's policy warnings (rules of
// severity warn) on stderr.
func (e *env) policyWarning(w policy.Warning) {
	warnMu.Lock()
	defer warnMu.Unlock()
	fmt.Fprintf(e.stderr, "ckgate: warning: policy: %s\n", w)
}

// principalID is --principal, or the OS user when it is not given.
func principalID(c *cli.Context) string {
	if id := c.String("principal"); id != "" {
		return id
	}
	return principal()
}

func (e *env) policyTestCommand() *cli.Command {
	return &cli.Command{
		Name:      "test",
		Usage:     "run the Rego unit tests of the default policies and of DIR, as `opa test` does",
		ArgsUsage: "[DIR...]",
		Description: "Runs every rule named test_* in the default policies and in the Rego files under each DIR\n" +
			"(JSON and YAML files there are data, placed as `opa test` places them), over the policy the\n" +
			"gateway enforces. Every module is compiled as `opa check --strict` compiles it (unused\n" +
			"arguments, imports and locals are errors naming FILE:LINE), and a decision rule the gateway\n" +
			"would never read is refused. Exits 1 when a test fails and 2 when a file does not parse,\n" +
			"compile or pass those checks.",
		Flags: []cli.Flag{
			&cli.StringSliceFlag{Name: "data", Usage: "merge the JSON or YAML document `FILE` into data (repeatable)"},
			&cli.BoolFlag{Name: "no-defaults", Usage: "leave out the default policies and their tests"},
			&cli.StringFlag{Name: "run", Aliases: []string{"r"}, Usage: "run only the tests matching `REGEX` (package.rule)"},
			&cli.BoolFlag{Name: "verbose", Aliases: []string{"v"}, Usage: "list every test, not only the failures"},
			formatFlag(),
		},
		Action: e.policyTest,
	}
}

func (e *env) policyTest(c *cli.Context) error {
	dirs, f, err := argsFormat(c, 0, 1<<20)
	if err != nil {
		return err
	}
	for _, d := range dirs {
		if _, err := os.Stat(d); err != nil {
			return &InputError{Err: err}
		}
	}
	results, err := policy.RunTests(c.Context, policy.TestOptions{
		Dirs: dirs, DataFiles: c.StringSlice("data"), NoDefaults: c.Bool("no-defaults"), Run: c.String("run"),
	})
	if err != nil {
		return &InputError{Err: err}
	}
	failed := 0
	for _, r := range results {
		if r.Failed() {
			failed++
		}
	}
	if f == "json" {
		if results == nil {
			results = []policy.TestResult{}
		}
		if err := output.JSON(e.stdout, results); err != nil {
			return err
		}
	} else {
		for _, r := range results {
			if !r.Failed() && !c.Bool("verbose") {
				continue
			}
			outcome := "PASS"
			switch {
			case r.Skip:
				outcome = "SKIPPED"
			case r.Failed() && r.Error != "fail":
				outcome = "ERROR: " + r.Error
			case r.Failed():
				outcome = "FAIL"
			}
			fmt.Fprintf(e.stdout, "%s: %s.%s: %s (%s)\n", r.Location, r.Package, r.Name, outcome, r.Duration)
			if r.Output != "" {
				fmt.Fprintf(e.stdout, "  %s\n", strings.ReplaceAll(strings.TrimSpace(r.Output), "\n", "\n  "))
			}
		}
		if len(results) == 0 {
			fmt.Fprintln(e.stdout, "no tests found")
		} else {
			fmt.Fprintf(e.stdout, "PASS: %d/%d\n", len(results)-failed, len(results))
			if failed > 0 {
				fmt.Fprintf(e.stdout, "FAIL: %d/%d\n", failed, len(results))
			}
		}
	}
	if failed > 0 {
		return &FindingsError{Count: failed, What: "Rego tests failed"}
	}
	return nil
}

func (e *env) policyRulesCommand() *cli.Command {
	return &cli.Command{
		Name:        "rules",
		Usage:       "list the rules: id, name, severity, scope and what each refuses",
		Description: "Lists the rule catalogue of the default policies. Rule ids are stable: denials, decision\nlog lines and audit findings name them.",
		Flags:       append(policyFlags(), formatFlag()),
		Action:      e.policyRules,
	}
}

func (e *env) policyRules(c *cli.Context) error {
	_, f, err := argsFormat(c, 0, 0)
	if err != nil {
		return err
	}
	eng, err := e.policyEngine(c)
	if err != nil {
		return err
	}
	rules := eng.Rules()
	if f == "json" {
		return output.JSON(e.stdout, rules)
	}
	t := output.NewTable(e.stdout)
	t.Row("ID", "NAME", "SEVERITY", "SCOPE", "DESCRIPTION")
	for _, r := range rules {
		t.Row(r.ID, r.Name, r.Severity, r.Scope, r.Description)
	}
	return t.Flush()
}

func (e *env) policyEvalCommand() *cli.Command {
	return &cli.Command{
		Name:      "eval",
		Usage:     "decide one gateway input (a put, delete or open) and print the decision",
		ArgsUsage: "INPUT",
		Description: "Reads the JSON decision input INPUT (- for stdin), shaped as `go doc policy.Input` and\n" +
			"`ckgate policy rules` describe: {\"action\", \"key\", \"root\", \"cond\", \"principal\": {\"id\",\n" +
			"\"kind\"}, \"checkpoint\": {...}, \"plan\": {...}}, and prints the decision. Exits 4 when denied.",
		Flags:  append(policyFlags(), decisionLogFlag(), formatFlag()),
		Action: e.policyEval,
	}
}

// evalOutput is the JSON form of a decision.
type evalOutput struct {
	Allow      bool               `json:"allow"`
	Deny       []policy.Violation `json:"deny"`
	Warn       []policy.Violation `json:"warn,omitempty"`
	Overridden []policy.Violation `json:"overridden,omitempty"`
	BreakGlass bool               `json:"break_glass,omitempty"`
	Reason     string             `json:"reason,omitempty"`
	Error      string             `json:"error,omitempty"`
}

func (e *env) policyEval(c *cli.Context) error {
	a, f, err := argsFormat(c, 1, 1)
	if err != nil {
		return err
	}
	var data []byte
	if a[0] == "-" {
		data, err = io.ReadAll(e.stdin)
	} else {
		data, err = gateway.ReadRegularFile(a[0], 0)
	}
	if err != nil {
		return &InputError{Err: err}
	}
	in, err := policy.ParseInput(data)
	if err != nil {
		return &InputError{Err: fmt.Errorf("%s: %w", a[0], err)}
	}
	eng, log, closeLog, err := e.policyAndLog(c)
	if err != nil {
		return err
	}
	d, derr := policy.Evaluate(c.Context, eng, in, log)
	if cerr := closeLog(); cerr != nil && derr == nil {
		derr = fmt.Errorf("--decision-log: %w", cerr)
	}
	out := evalOutput{Allow: d.Allow, Deny: d.Deny, Warn: d.Warn, Overridden: d.Overridden, BreakGlass: d.BreakGlass, Reason: d.Reason}
	if out.Deny == nil {
		out.Deny = []policy.Violation{}
	}
	if d.Err != nil {
		out.Error = d.Err.Error()
	}
	if f == "json" {
		if err := output.JSON(e.stdout, out); err != nil {
			return err
		}
	} else {
		switch {
		case d.Allow && d.BreakGlass:
			fmt.Fprintf(e.stdout, "allow (break glass: %s)\n", d.Reason)
			for _, v := range d.Overridden {
				fmt.Fprintf(e.stdout, "  overridden %s: %s\n", ruleLabel(v), v.Msg)
			}
		case d.Allow:
			fmt.Fprintln(e.stdout, "allow")
		default:
			fmt.Fprintln(e.stdout, "deny")
			for _, v := range d.Deny {
				fmt.Fprintf(e.stdout, "  %s: %s\n", ruleLabel(v), v.Msg)
			}
		}
		for _, v := range d.Warn {
			fmt.Fprintf(e.stdout, "  warning %s: %s\n", ruleLabel(v), v.Msg)
		}
	}
	return derr
}

// ruleLabel is a violation's id, and its name when that says more.
func ruleLabel(v policy.Violation) string {
	if v.Name == "" || v.Name == v.ID {
		return v.ID
	}
	return v.ID + " " + v.Name
}

// housekeepingRun is what a copy that writes as housekeeping works with.
type housekeepingRun struct {
	principal policy.Principal
	eng       *policy.Engine
	log       *policy.DecisionLog
	src       gateway.Store
}

// housekeepingCopy opens what a copy that writes as housekeeping needs
// (archive, fresh-start), once its locations (named as apart takes them,
// the source first) are apart: the principal, the policy engine and
// decision log (housekeeping), and the source store. closeAll closes the
// store and the log.
func (e *env) housekeepingCopy(c *cli.Context, named ...string) (housekeepingRun, func(), error) {
	if err := apart(c, named...); err != nil {
		return housekeepingRun{}, nil, err
	}
	raw := named[1]
	p, eng, log, closeLog, err := e.housekeeping(c)
	if err != nil {
		return housekeepingRun{}, nil, err
	}
	src, err := e.openStore(c.Context, c, raw)
	if err != nil {
		closeLog()
		return housekeepingRun{}, nil, err
	}
	return housekeepingRun{principal: p, eng: eng, log: log, src: src}, func() { gateway.Close(src); closeLog() }, nil
}

// housekeeping returns the principal (--principal, or this user on this
// host), the policy engine and the decision log of a command that writes
// as kind housekeeping (archive, fresh-start).
func (e *env) housekeeping(c *cli.Context) (policy.Principal, *policy.Engine, *policy.DecisionLog, func() error, error) {
	p := policy.Principal{ID: principalID(c), Kind: policy.KindHousekeeping}
	eng, log, closeLog, err := e.policyAndLog(c)
	return p, eng, log, closeLog, err
}
