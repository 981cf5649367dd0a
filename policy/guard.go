package policy

import (
	"errors"
	"fmt"
	"slices"

	"github.com/ckgate/ckgate/gateway"
)

// GuardConfig says who writes through a guarded store, and where.
type GuardConfig struct {
	Engine    *Engine
	Log       *DecisionLog // nil: decisions are not logged
	Principal Principal
	// StoreURL is the URL (or plain path) the guarded store was opened at.
	StoreURL string
	// Scope is where the principal writes (a URL; default StoreURL).
	Scope string
	// CheckpointRoot says Scope is a checkpoint root even before it holds
	// a metadata file: a job's own checkpoint, the one retention plans for.
	CheckpointRoot bool
	// WriterSession says the writes come through the writer session of the
	// query owning Scope (input.writer_session).
	WriterSession bool
	Facts         Facts
	Plan          *Plan        // a retention principal's plan
	Known         []KnownQuery // other queries' roots, added to data.ckgate.queries
	// Container is a store opened at the bucket or container of StoreURL,
	// for finding the checkpoint roots above the store's root on a cloud
	// store (nil on the local disk, which is read directly). Without it
	// the guarded store itself is asked, about directories inside it only.
	Container gateway.Store
	// Roots, when set, is shared by the guards of one command (each store
	// it writes), so that what one learns protects the others.
	Roots *RootFinder
	// Warn, when set, is told every allowed write's warnings (WithWarn).
	Warn func(Warning)
	// RootOwners records the owner of every checkpoint root a job principal
	// writes and refuses other job principals' writes under it
	// (WithRootOwners): for front doors shared by many principals.
	RootOwners bool
	// DryRun decides and logs every write without enforcing it
	// (WithDryRun): for onboarding a production job. It needs Log. The
	// store's own conditions still hold; a caller that must keep log
	// entries create-only writes them IfAbsent (s3serve does).
	DryRun bool
}

// Guard returns s with every Put and Delete decided by the policy on the
// canonical location it touches, written with the condition the decision
// relied on. It is the one place every mutating command puts the policy
// in front of a store: a new command cannot forget a step.
func Guard(s gateway.Store, cfg GuardConfig) (gateway.Store, *Authorizer, error) {
	if cfg.Engine == nil {
		return nil, nil, errors.New("policy: guard without a policy engine")
	}
	if !slices.Contains(Kinds, cfg.Principal.Kind) {
		return nil, nil, fmt.Errorf("policy: principal kind %q: want one of %v", cfg.Principal.Kind, Kinds)
	}
	base, err := gateway.CanonicalRoot(cfg.StoreURL)
	if err != nil {
		return nil, nil, err
	}
	scope := base
	if cfg.Scope != "" {
		if scope, err = gateway.CanonicalRoot(cfg.Scope); err != nil {
			return nil, nil, err
		}
	}
	known := make([]KnownQuery, len(cfg.Known))
	for i, q := range cfg.Known {
		r, err := gateway.CanonicalRoot(q.Root)
		if err != nil {
			return nil, nil, fmt.Errorf("known query %s: %w", q.QueryID, err)
		}
		known[i] = KnownQuery{QueryID: q.QueryID, Root: r}
	}
	finder := cfg.Roots
	if finder == nil {
		finder = NewGuardRoots(base, s, cfg.Container)
	}
	if cfg.CheckpointRoot {
		finder.Declare(scope)
	}
	opts := []AuthorizerOption{WithStoreURL(base), WithExists(s), WithRoots(finder)}
	if cfg.Plan != nil {
		opts = append(opts, WithPlan(cfg.Plan))
	}
	if len(known) > 0 {
		opts = append(opts, WithKnownQueries(known))
	}
	if cfg.WriterSession {
		opts = append(opts, WithWriterSession())
	}
	if cfg.Warn != nil {
		opts = append(opts, WithWarn(cfg.Warn))
	}
	if cfg.RootOwners {
		opts = append(opts, WithRootOwners())
	}
	if cfg.DryRun {
		if cfg.Log == nil {
			return nil, nil, errors.New("policy: a dry run needs a decision log: it is where the refusals it lets through are recorded")
		}
		opts = append(opts, WithDryRun())
	}
	a := NewAuthorizer(cfg.Engine, cfg.Principal, scope, cfg.Facts, cfg.Log, opts...)
	return gateway.WithAuthorizer(s, a), a, nil
}

// NewGuardRoots returns the root finder for a store whose canonical root
// is base: on the local disk it reads the file system; on a cloud store it
// asks container (a store at the bucket or container), or, without one,
// s itself about the directories inside base.
func NewGuardRoots(base string, s, container gateway.Store) *RootFinder {
	top := ContainerOf(base)
	if _, local := gateway.FilePath(base); local || container != nil {
		return NewRootFinder(top, container)
	}
	return NewRootFinder(base, s)
}

// ContainerOf is the top of a canonical location: "file:///", the bucket
// ("s3://b", "gs://b") or the Azure container ("az://account/c").
func ContainerOf(loc string) string {
	if a := ancestors(loc); len(a) > 0 {
		return a[0]
	}
	return loc
}
