package policy

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/open-policy-agent/opa/v1/ast"
)

// The gateway reads the sets `deny` and `warn` of every package
// ckgate.gateway.rules.NAME (one level below rules), and the audit the set
// `findings` of every package ckgate.audit.rules.NAME. A rule written to
// decide anywhere else would be tested (`ckgate policy test` runs it) but
// never enforced, so the policy does not load: conftest's default package
// `main`, a nested package, a `deny` that is not a set, conftest's other
// names (deny_x, warn_x, violation).

var (
	gatewayRulesRef = ast.MustParseRef("data.ckgate.gateway.rules")
	auditRulesRef   = ast.MustParseRef("data.ckgate.audit.rules")
	defaultRulesRef = gatewayRulesRef.Append(ast.StringTerm("defaults"))
)

// checkRulePlacement returns an error naming file:line of every decision
// rule (deny, warn, violation, deny_*, warn_*, violation_*; functions
// aside) of a non-test module that the gateway would not read, or would not read as a set.
func checkRulePlacement(modules map[string]*ast.Module) error {
	var errs []string
	for _, name := range slices.Sorted(maps.Keys(modules)) {
		m := modules[name]
		if strings.HasSuffix(name, "_test.rego") || m == nil || m.Package == nil {
			continue
		}
		pkg := m.Package.Path
		if pkg.Equal(defaultRulesRef) && !strings.HasPrefix(name, "ckgate:") {
			errs = append(errs, fmt.Sprintf("%s: package %s is ckgate's own (its rules are read as ckgate builds them): name yours ckgate.gateway.rules.<team>",
				where(m.Package.Location, name), pkgName(pkg)))
			continue
		}
		for _, r := range m.Rules {
			head := r.Head.Ref()
			rule, ok := head[0].Value.(ast.Var)
			if !ok || len(r.Head.Args) > 0 || !decisionName(string(rule)) {
				continue
			}
			if why := misplaced(pkg, head, r); why != "" {
				errs = append(errs, fmt.Sprintf("%s: package %s: rule %v %s", where(r.Location, name), pkgName(pkg), head, why))
			}
		}
	}
	if len(errs) == 0 {
		return nil
	}
	slices.Sort(errs)
	errs = slices.Compact(errs)
	return errors.New("policy: rules that would never be enforced:\n  " + strings.Join(errs, "\n  "))
}

// decisionName: a rule name conftest or ckgate treat as a decision.
func decisionName(n string) bool {
	for _, p := range []string{"deny", "warn", "violation"} {
		if n == p || strings.HasPrefix(n, p+"_") {
			return true
		}
	}
	return false
}

// misplaced says why the gateway would not enforce rule r of package pkg
// ("" when it would).
func misplaced(pkg, head ast.Ref, r *ast.Rule) string {
	name := head[0].Value.(ast.Var)
	const how = "(the gateway reads the sets deny and warn of packages ckgate.gateway.rules.NAME)"
	switch {
	case pkg.HasPrefix(auditRulesRef):
		return "is not read: audit rules contribute the set findings ({id, name, severity, resource, msg})"
	case !pkg.HasPrefix(gatewayRulesRef):
		return "is not enforced: ckgate reads no package " + pkgName(pkg) + " " + how + "; rename the package to ckgate.gateway.rules.<name>"
	case len(pkg) != len(gatewayRulesRef)+1:
		return "is not enforced: the package is not one level below ckgate.gateway.rules " + how
	case name != "deny" && name != "warn":
		return "is not enforced: only rules named deny and warn are " + how
	case len(head) != 1 || r.Head.RuleKind() != ast.MultiValue:
		return fmt.Sprintf("is not a set: write `%s contains msg if { ... }` (msg a string or an object with msg)", name)
	}
	return ""
}

func pkgName(p ast.Ref) string { return strings.TrimPrefix(p.String(), "data.") }

// where is file:line of loc, or name.
func where(loc *ast.Location, name string) string {
	if loc == nil {
		return name
	}
	return fmt.Sprintf("%s:%d", loc.File, loc.Row)
}
