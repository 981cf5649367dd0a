package policy

import (
	"fmt"
	"maps"

	"github.com/open-policy-agent/opa/v1/ast"
	"github.com/open-policy-agent/opa/v1/loader"
)

// loadOptions say what to load: the engine (New) and the tests (RunTests)
// load the same modules and data the same way, so that a test sees the
// policy the gateway enforces.
type loadOptions struct {
	noDefaults bool
	dirs       []string // user directories or files of Rego modules and data
	dataFiles  []string
	tests      bool // keep *_test.rego files
}

// loaded are the modules and data of a policy.
type loaded struct {
	modules  map[string]*ast.Module
	defaults map[string]*ast.Module // the embedded modules among them
	data     map[string]any
}

// load reads the embedded defaults (unless left out), each directory and
// each data file, and checks that every user rule written to decide is
// where the decision reads it (checkRulePlacement).
func load(o loadOptions) (*loaded, error) {
	l := &loaded{modules: map[string]*ast.Module{}, defaults: map[string]*ast.Module{}, data: map[string]any{}}
	filter := skipTests
	if o.tests {
		filter = nil
	}
	if !o.noDefaults {
		res, err := loader.NewFileLoader().WithFS(defaultPolicies).WithRegoVersion(ast.RegoV1).
			WithProcessAnnotation(true).Filtered([]string{"rego"}, filter)
		if err != nil {
			return nil, fmt.Errorf("policy: default policies: %w", err)
		}
		addModules(l.modules, res, "ckgate:")
		maps.Copy(l.defaults, l.modules)
		if err := mergeData(l.data, res.Documents, "default policies"); err != nil {
			return nil, err
		}
	}
	for _, dir := range o.dirs {
		res, err := loader.NewFileLoader().WithRegoVersion(ast.RegoV1).WithProcessAnnotation(true).Filtered([]string{dir}, filter)
		if err != nil {
			return nil, fmt.Errorf("policy: --policy %s: %w", dir, err)
		}
		addModules(l.modules, res, "")
		if err := mergeData(l.data, res.Documents, dir); err != nil {
			return nil, err
		}
	}
	for _, file := range o.dataFiles {
		docs, err := LoadData(file)
		if err != nil {
			return nil, err
		}
		if err := mergeData(l.data, docs, file); err != nil {
			return nil, err
		}
	}
	if err := checkRulePlacement(l.modules); err != nil {
		return nil, err
	}
	return l, nil
}
