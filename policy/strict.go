package policy

import (
	"context"
	"fmt"

	"github.com/open-policy-agent/opa/v1/ast"
)

// Check loads the policies as RunTests does (tests included) and compiles
// them as `opa check --strict` does: unused arguments, imports and local
// assignments, shadowed input and data, deprecated builtins and duplicate
// imports are errors naming file:line. So what passes `ckgate policy test`
// passes the OPA tooling users run in their CI. It also refuses decision
// rules the gateway would never read (a conftest `package main`, a nested
// package, a `deny` that is not a set).
func Check(ctx context.Context, o TestOptions) error {
	l, err := load(o.loadOptions())
	if err != nil {
		return err
	}
	return strictCheck(ctx, l.modules)
}

func (o TestOptions) loadOptions() loadOptions {
	return loadOptions{noDefaults: o.NoDefaults, dirs: o.Dirs, dataFiles: o.DataFiles, tests: true}
}

// strictCheck compiles modules in strict mode, as `opa check --strict`.
func strictCheck(ctx context.Context, modules map[string]*ast.Module) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	c := ast.NewCompiler().
		WithCapabilities(ast.CapabilitiesForThisVersion(ast.CapabilitiesRegoVersion(ast.RegoV1))).
		WithEnablePrintStatements(true).
		WithStrict(true).
		WithUseTypeCheckAnnotations(true)
	c.Compile(modules)
	if c.Failed() {
		return fmt.Errorf("policy: strict check (as opa check --strict): %w", c.Errors)
	}
	return nil
}
