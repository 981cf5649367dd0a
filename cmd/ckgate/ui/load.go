package ui

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/ckgate/ckgate/engine/checkpoint"
	"github.com/ckgate/ckgate/gateway"
	"github.com/ckgate/ckgate/policy"
)

// Root is one URL given on the command line and its store.
type Root struct {
	URL   string // as given (redacted for display)
	Store gateway.Store
	// canon is its canonical location (gateway.CanonicalRoot).
	canon string
}

// NewRoot returns the root raw opened as s.
func NewRoot(raw string, s gateway.Store) (Root, error) {
	c, err := gateway.CanonicalRoot(raw)
	if err != nil {
		return Root{}, err
	}
	return Root{URL: raw, Store: s, canon: c}, nil
}

// Location is the root's canonical location.
func (r Root) Location() string { return r.canon }

// Loader reads what the pages draw, through the reading packages.
type Loader struct {
	Roots []Root
	// Audit, when set, discovers the checkpoints of one root and audits
	// them (policy.Engine.Audit); otherwise they are discovered with
	// policy.Discover and have no audit findings.
	Audit func(ctx context.Context, t policy.Target) (*policy.Report, error)
	// Concurrency bounds the checkpoints inspected at a time (default 32:
	// each waits on its store most of the time).
	Concurrency int
	// FleetBatches is how many of the latest batches of each checkpoint
	// the fleet page reads (default 20).
	FleetBatches int
	// Now is the clock for ages and leases (default time.Now).
	Now func() time.Time
}

func (l *Loader) now() time.Time {
	if l.Now != nil {
		return l.Now()
	}
	return time.Now()
}

// Checkpoint is one checkpoint as the pages draw it.
type Checkpoint struct {
	// URL is its canonical location (root location + its key prefix).
	URL    string
	Report *checkpoint.Report // nil when it could not be read
	Audit  []policy.Finding   // the audit findings about it
	Err    string
}

// Fleet is every checkpoint under the roots.
type Fleet struct {
	Roots       []string
	Checkpoints []Checkpoint
	// Findings are audit findings about no one checkpoint (buckets).
	Findings []policy.Finding
	Now      time.Time
	Took     time.Duration
}

// LoadFleet discovers every checkpoint under the roots (as `ckgate audit`
// finds them) and inspects each, several at a time.
func (l *Loader) LoadFleet(ctx context.Context) (*Fleet, error) {
	start := l.now()
	f := &Fleet{Now: start}
	type job struct {
		root Root
		cp   policy.Checkpoint
	}
	var jobs []job
	audit := map[string][]policy.Finding{}
	for _, r := range l.Roots {
		f.Roots = append(f.Roots, gateway.Redact(r.URL))
		var cps []policy.Checkpoint
		var findings []policy.Finding
		if l.Audit != nil {
			rep, err := l.Audit(ctx, policy.Target{URL: r.URL, Store: r.Store})
			if err != nil {
				return nil, fmt.Errorf("%s: %w", gateway.Redact(r.URL), err)
			}
			cps, findings = rep.Checkpoints, rep.Findings
		} else {
			var err error
			if cps, err = policy.Discover(ctx, policy.Target{URL: r.URL, Store: r.Store}); err != nil {
				return nil, err
			}
		}
		byURL := map[string]bool{}
		for _, cp := range cps {
			jobs = append(jobs, job{r, cp})
			byURL[cp.URL] = true
		}
		for _, fd := range findings {
			if byURL[fd.Resource] {
				audit[fd.Resource] = append(audit[fd.Resource], fd)
			} else {
				f.Findings = append(f.Findings, fd)
			}
		}
	}
	f.Checkpoints = make([]Checkpoint, len(jobs))
	n := l.Concurrency
	if n <= 0 {
		n = 32
	}
	batches := l.FleetBatches
	if batches <= 0 {
		batches = 20
	}
	var wg sync.WaitGroup
	sem := make(chan struct{}, n)
	errs := make([]error, len(jobs))
	for i, j := range jobs {
		wg.Go(func() {
			sem <- struct{}{}
			defer func() { <-sem }()
			cp, err := l.inspect(ctx, j.root, j.cp.Root, checkpoint.Options{MaxBatches: batches, MaxStateVersions: 1, Now: l.Now})
			if err != nil {
				errs[i] = err
				return
			}
			cp.Audit = audit[j.cp.URL]
			f.Checkpoints[i] = *cp
		})
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	f.Took = l.now().Sub(start).Round(time.Millisecond)
	return f, nil
}

// LoadCheckpoint inspects the checkpoint at rel under root, every batch.
func (l *Loader) LoadCheckpoint(ctx context.Context, root Root, rel string) (*Checkpoint, error) {
	return l.inspect(ctx, root, rel, checkpoint.Options{MaxBatches: 1 << 30, Now: l.Now})
}

// inspect reads one checkpoint. Only a cancelled context is an error: a
// checkpoint that cannot be read is a row that says why.
func (l *Loader) inspect(ctx context.Context, root Root, rel string, o checkpoint.Options) (*Checkpoint, error) {
	cp := &Checkpoint{URL: joinLocation(root.canon, rel)}
	st := root.Store
	if rel != "" {
		st = gateway.WithPrefix(st, rel)
	}
	r, err := checkpoint.Inspect(ctx, st, o)
	switch {
	case ctx.Err() != nil:
		return nil, ctx.Err()
	case err != nil:
		cp.Err = gateway.Redact(err.Error())
	default:
		cp.Report = r
	}
	return cp, nil
}

func joinLocation(root, rel string) string {
	if rel == "" {
		return root
	}
	return strings.TrimSuffix(root, "/") + "/" + rel
}

// Resolve finds the root that holds the location raw (a URL or a path, as
// a fleet page links it) and its key prefix under that root. A location
// outside every root is ErrOutside.
func (l *Loader) Resolve(raw string) (Root, string, error) {
	c, err := gateway.CanonicalRoot(raw)
	if err != nil {
		return Root{}, "", fmt.Errorf("%w: %s: %w", ErrOutside, gateway.Redact(raw), err)
	}
	for _, r := range l.Roots {
		switch base := strings.TrimSuffix(r.canon, "/"); {
		case c == r.canon:
			return r, "", nil
		case strings.HasPrefix(c, base+"/"):
			rel := c[len(base)+1:]
			if err := gateway.ValidateKey("read", rel); err != nil {
				return Root{}, "", fmt.Errorf("%w: %s: %w", ErrOutside, gateway.Redact(raw), err)
			}
			return r, rel, nil
		}
	}
	return Root{}, "", fmt.Errorf("%w: %s is not one of the URLs ckgate ui was started with, nor under one", ErrOutside, c)
}

// ErrOutside: a location that is not under a root the server was given.
var ErrOutside = errors.New("outside the served roots")

// LoadAll reads every checkpoint of f in full (every batch), several at a
// time, keeping each one's audit findings: the pages of a report.
func (l *Loader) LoadAll(ctx context.Context, f *Fleet) ([]*Checkpoint, error) {
	out := make([]*Checkpoint, len(f.Checkpoints))
	errs := make([]error, len(f.Checkpoints))
	n := l.Concurrency
	if n <= 0 {
		n = 32
	}
	var wg sync.WaitGroup
	sem := make(chan struct{}, n)
	for i, fc := range f.Checkpoints {
		wg.Go(func() {
			sem <- struct{}{}
			defer func() { <-sem }()
			root, rel, err := l.Resolve(fc.URL)
			if err != nil {
				errs[i] = err
				return
			}
			cp, err := l.LoadCheckpoint(ctx, root, rel)
			if err != nil {
				errs[i] = err
				return
			}
			cp.Audit = fc.Audit
			out[i] = cp
		})
	}
	wg.Wait()
	return out, errors.Join(errs...)
}
