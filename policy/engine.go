package policy

import (
	"context"
	"embed"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"slices"
	"sort"
	"strings"
	"sync"

	"github.com/open-policy-agent/opa/v1/ast"

	"github.com/ckgate/ckgate/gateway"
	"github.com/open-policy-agent/opa/v1/loader"
	"github.com/open-policy-agent/opa/v1/rego"
	"github.com/open-policy-agent/opa/v1/storage"
	"github.com/open-policy-agent/opa/v1/storage/inmem"
	"github.com/open-policy-agent/opa/v1/util"
)

// defaultPolicies holds the default Rego modules and their unit tests.
//
//go:embed rego
var defaultPolicies embed.FS

// DefaultPolicies returns the embedded default policies (rego/...), tests
// included.
func DefaultPolicies() fs.FS { return defaultPolicies }

const (
	gatewayQuery = "data.ckgate.gateway.decision"
	auditQuery   = "data.ckgate.audit.findings"
)

// Options configure New.
type Options struct {
	// PolicyDirs are directories or files of user Rego modules (and JSON or
	// YAML data, placed as `opa` places it) added to the defaults. Test
	// files (*_test.rego) are left out of evaluation.
	PolicyDirs []string
	// DataFiles are JSON or YAML documents merged into data at its root
	// (e.g. {"ckgate": {"queries": [...]}}).
	DataFiles []string
	// Data is merged into data at its root after the files.
	Data map[string]any
	// NoDefaults leaves out the embedded default policies.
	NoDefaults bool
}

// Engine holds the compiled policies and the prepared queries. It is safe
// for concurrent use.
type Engine struct {
	gateway rego.PreparedEvalQuery
	audit   rego.PreparedEvalQuery
	rules   []Rule

	compiler *ast.Compiler
	store    storage.Store
	modules  map[string]*ast.Module
	// trusted are the compiled default modules (embedded, not replaced by
	// a user module of the same name): the rules a specialised decision
	// may rely on without the equality check (special.go).
	trusted map[*ast.Module]bool
	// onlyDefaults: the decision reaches none but default rules, so the
	// check passes for every input (special.go's provablyEqual).
	onlyDefaults func() bool
	// dataOverlap: data sets a document where a rule is defined, so no
	// shape is specialised (special.go's dataOverlapsRules).
	dataOverlap error
}

// Rule is one entry of the rule catalogue (data.ckgate.catalog.rules).
type Rule struct {
	ID          string `json:"id"`
	Name        string `json:"name"`
	Severity    string `json:"severity"`
	Scope       string `json:"scope"` // gateway, open or audit
	Description string `json:"description"`
}

// New loads and compiles the policies and prepares the queries once.
func New(ctx context.Context, o Options) (*Engine, error) {
	l, err := load(loadOptions{noDefaults: o.NoDefaults, dirs: o.PolicyDirs, dataFiles: o.DataFiles})
	if err != nil {
		return nil, err
	}
	modules, defaults, data := l.modules, l.defaults, l.data
	if o.Data != nil {
		var extra any = o.Data
		if err := util.RoundTrip(&extra); err != nil {
			return nil, fmt.Errorf("policy: data: %w", err)
		}
		m, _ := extra.(map[string]any)
		if err := mergeData(data, m, "options"); err != nil {
			return nil, err
		}
	}
	if len(modules) == 0 {
		return nil, errors.New("policy: no policy modules (defaults left out and no --policy)")
	}
	if err := canonicalQueries(data); err != nil {
		return nil, err
	}
	compiler := ast.NewCompiler().WithEnablePrintStatements(false)
	compiler.Compile(modules)
	if compiler.Failed() {
		return nil, fmt.Errorf("policy: compile: %w", compiler.Errors)
	}
	store := inmem.NewFromObject(data)
	e := &Engine{compiler: compiler, store: store, modules: modules, trusted: map[*ast.Module]bool{}}
	for name, m := range defaults {
		if modules[name] == m && compiler.Modules[name] != nil {
			e.trusted[compiler.Modules[name]] = true
		}
	}
	e.dataOverlap = dataOverlapsRules(data, compiler.RuleTree.Child(ast.DefaultRootDocument.Value), ast.DefaultRootRef)
	e.onlyDefaults = sync.OnceValue(func() bool {
		user, err := e.checkEquality(ast.NewObject())
		return !user && err == nil
	})
	if e.gateway, err = prepare(ctx, compiler, store, gatewayQuery); err != nil {
		return nil, err
	}
	if e.audit, err = prepare(ctx, compiler, store, auditQuery); err != nil {
		return nil, err
	}
	if e.rules, err = catalogue(ctx, compiler, store); err != nil {
		return nil, err
	}
	return e, nil
}

func prepare(ctx context.Context, c *ast.Compiler, s storage.Store, query string) (rego.PreparedEvalQuery, error) {
	pq, err := rego.New(
		rego.Query(query),
		rego.Compiler(c),
		rego.Store(s),
		rego.StrictBuiltinErrors(true),
	).PrepareForEval(ctx)
	if err != nil {
		return rego.PreparedEvalQuery{}, fmt.Errorf("policy: prepare %s: %w", query, err)
	}
	return pq, nil
}

// catalogue reads data.ckgate.catalog.rules.
func catalogue(ctx context.Context, c *ast.Compiler, s storage.Store) ([]Rule, error) {
	rs, err := rego.New(rego.Query("data.ckgate.catalog.rules"), rego.Compiler(c), rego.Store(s)).Eval(ctx)
	if err != nil {
		return nil, fmt.Errorf("policy: rule catalogue: %w", err)
	}
	if len(rs) == 0 || len(rs[0].Expressions) == 0 {
		return nil, nil // no catalogue (defaults left out)
	}
	b, err := json.Marshal(rs[0].Expressions[0].Value)
	if err != nil {
		return nil, fmt.Errorf("policy: rule catalogue: %w", err)
	}
	var m map[string]Rule
	if err := json.Unmarshal(b, &m); err != nil {
		return nil, fmt.Errorf("policy: rule catalogue: %w", err)
	}
	out := make([]Rule, 0, len(m))
	for _, id := range slices.Sorted(maps.Keys(m)) {
		r := m[id]
		r.ID = id
		out = append(out, r)
	}
	return out, nil
}

// Rules returns the rule catalogue, sorted by id.
func (e *Engine) Rules() []Rule { return slices.Clone(e.rules) }

// skipTests leaves *_test.rego files out of evaluation.
func skipTests(abspath string, info fs.FileInfo, _ int) bool {
	return !info.IsDir() && strings.HasSuffix(info.Name(), "_test.rego")
}

func addModules(dst map[string]*ast.Module, res *loader.Result, prefix string) {
	for _, m := range res.Modules {
		dst[prefix+m.Name] = m.Parsed
	}
}

// LoadData reads a JSON or YAML data file.
func LoadData(file string) (map[string]any, error) {
	res, err := loader.NewFileLoader().WithRegoVersion(ast.RegoV1).All([]string{file})
	if err != nil {
		return nil, fmt.Errorf("policy: --data %s: %w", file, err)
	}
	if len(res.Modules) > 0 {
		return nil, fmt.Errorf("policy: --data %s: holds Rego modules; pass them with --policy", file)
	}
	return res.Documents, nil
}

// mergeData merges src into dst; two different values for one path are a
// conflict named by its path.
func mergeData(dst, src map[string]any, from string) error {
	return merge(dst, src, nil, from)
}

func merge(dst, src map[string]any, path []string, from string) error {
	keys := slices.Collect(maps.Keys(src))
	sort.Strings(keys)
	for _, k := range keys {
		v := src[k]
		cur, ok := dst[k]
		if !ok {
			dst[k] = v
			continue
		}
		cm, ok1 := cur.(map[string]any)
		vm, ok2 := v.(map[string]any)
		if ok1 && ok2 {
			if err := merge(cm, vm, append(path, k), from); err != nil {
				return err
			}
			continue
		}
		return fmt.Errorf("policy: data from %s: data.%s is already set", from, strings.Join(append(path, k), "."))
	}
	return nil
}

// canonicalQueries rewrites the roots of data.ckgate.queries to canonical
// locations (gateway.CanonicalRoot), so that rules comparing them with an
// input's locations compare the objects, not their spellings.
func canonicalQueries(data map[string]any) error {
	ck, _ := data["ckgate"].(map[string]any)
	qs, ok := ck["queries"].([]any)
	if !ok {
		if ck["queries"] != nil {
			return errors.New("policy: data.ckgate.queries: want a list of {query_id, root}")
		}
		return nil
	}
	for i, q := range qs {
		m, _ := q.(map[string]any)
		root, _ := m["root"].(string)
		if root == "" {
			return fmt.Errorf("policy: data.ckgate.queries[%d]: no root", i)
		}
		c, err := gateway.CanonicalRoot(root)
		if err != nil {
			return fmt.Errorf("policy: data.ckgate.queries[%d]: %w", i, err)
		}
		m["root"] = c
	}
	return nil
}
