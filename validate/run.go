package validate

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"time"

	"github.com/ckgate/ckgate/gateway"
)

// ErrUsage is wrapped by every error about the request itself (a bad URL,
// contradicting identity flags, --as-user on a cloud store); such a run
// probes nothing.
var ErrUsage = errors.New("usage")

// usageError is an error about the request; its message is the cause's.
type usageError struct{ err error }

func (e *usageError) Error() string   { return e.err.Error() }
func (e *usageError) Unwrap() []error { return []error{ErrUsage, e.err} }

func usagef(format string, args ...any) error {
	return &usageError{err: fmt.Errorf(format, args...)}
}

// Defaults of Options.
const (
	DefaultTimeout = 30 * time.Second
	DefaultMaxSkew = 5 * time.Minute
)

// Options configure a run.
type Options struct {
	// Identity selects the credentials, as the job's own flags or
	// environment would.
	Identity Identity
	// ExpectPrincipal, when set, fails the identity probe unless the store
	// sees this principal (see Report.Principal for the forms).
	ExpectPrincipal string
	// Timeout bounds the probes (default DefaultTimeout). Removing the
	// probe keys has its own budget, so it happens after a timeout too.
	Timeout time.Duration
	// MaxSkew is the largest clock difference to the server that passes
	// (default DefaultMaxSkew; AWS refuses signatures beyond 15 minutes).
	MaxSkew time.Duration
	// AsUser runs the probes of a local-disk store in a child process with
	// this user's uid and gid (NAME or UID[:GID], see ParseUserSpec), so
	// the kernel checks the permissions of the job's user even when the
	// caller is root.
	AsUser string
	// Child is the command line that starts the child process for AsUser
	// (a program that calls ServeChild), e.g. {"/usr/bin/ckgate",
	// "validate-access", "--child"}.
	Child []string
	// Wrap, when set, decorates the store the authorization probes use
	// (request logging, or a fault a test injects).
	Wrap func(gateway.Store) gateway.Store
}

func (o Options) timeout() time.Duration {
	if o.Timeout > 0 {
		return o.Timeout
	}
	return DefaultTimeout
}

func (o Options) maxSkew() time.Duration {
	if o.MaxSkew > 0 {
		return o.MaxSkew
	}
	return DefaultMaxSkew
}

// Run probes the store named by raw (a URL or a plain path) as the
// principal the options and the environment select, layer by layer, and
// reports one result per probe. It returns an error wrapping ErrUsage for
// a request it cannot run (nothing was probed), and the report together
// with the context's error when ctx ended during the run; the probe keys
// are removed in every case.
func Run(ctx context.Context, raw string, opts Options) (*Report, error) {
	start := time.Now()
	u, err := gateway.ParseURL(raw)
	if err == nil {
		var d time.Duration
		if u, d, err = gateway.TakeTryTimeout(u); d > 0 {
			ctx = gateway.WithTryTimeout(ctx, d)
		}
	}
	if err != nil {
		return nil, usagef("%w", err)
	}
	if opts.AsUser != "" {
		return runAsUser(ctx, u, opts)
	}
	b, err := openBackend(ctx, u, opts)
	if err != nil {
		return nil, err
	}
	defer b.close()
	rep := probe(ctx, b, opts)
	rep.finish(time.Since(start))
	if err := ctx.Err(); err != nil {
		return rep, fmt.Errorf("validate-access %s: %s: %w", rep.URL, stopReason(err), err)
	}
	return rep, nil
}

// probe builds the probe graph of b, runs it and removes the probe keys.
func probe(parent context.Context, b *backend, opts Options) *Report {
	ctx, cancel := context.WithTimeout(parent, opts.timeout())
	defer cancel()
	keys := newProbeKeys(time.Now())
	rep := &Report{URL: b.shown, Warnings: b.warnings}
	g := &graph{red: b.red}

	var principal identity
	creds := g.add(LayerCredentials, OpResolve, b.credentials)
	who := g.add(LayerIdentity, OpWhoAmI, func(ctx context.Context) outcome {
		principal = b.identify(ctx)
		return checkPrincipal(principal, opts.ExpectPrincipal)
	}, creds)
	var netDone *node
	if b.endpoint != nil {
		netDone = addNetwork(g, b.endpoint)
		who.needs = append(who.needs, netDone)
		g.add(LayerClock, OpSkew, func(ctx context.Context) outcome {
			return clockSkew(ctx, b.endpoint, opts.maxSkew())
		}, netDone)
	}
	container := g.add(LayerContainer, OpExists, b.container, creds)
	if netDone != nil {
		container.needs = append(container.needs, netDone)
	}

	// The authorization probes: two reads, and two chains of writes (the
	// probe key: put, compare-and-swap, get, delete; the create-only key).
	// Without a store (opening failed at the credentials layer) they are
	// all skipped.
	st := b.store
	if st != nil && opts.Wrap != nil {
		st = opts.Wrap(st)
	}
	ops := &opsState{st: st, keys: keys, written: map[string]bool{}}
	if st != nil {
		rep.ProbeKey = keys.key
	}
	g.add(LayerAuthorization, OpList, ops.list, container, who)
	g.add(LayerAuthorization, OpGetMetadata, ops.getMetadata, container, who)
	put := g.add(LayerAuthorization, OpPut, ops.putPlain, container, who)
	create := g.add(LayerAuthorization, OpPutIfAbsent, ops.putIfAbsent, container, who)
	cas := g.add(LayerAuthorization, OpPutIfMatch, ops.putIfMatch, put)
	get := g.add(LayerAuthorization, OpGet, ops.getAfterWrite, put)
	get.after = []*node{cas}
	del := g.add(LayerAuthorization, OpDelete, ops.delete, put)
	del.after = []*node{get}
	for _, n := range []*node{put, create, cas, get, del} {
		n.writes = true
	}
	for _, p := range b.info {
		g.add(LayerInfo, p.op, p.run, container)
	}
	g.execute(ctx)

	for _, n := range g.nodes {
		rep.Results = append(rep.Results, n.res)
	}
	if st != nil {
		start := time.Now()
		o := ops.cleanup(parent)
		if b.tidy != nil {
			if note := b.tidy(); note != "" {
				o.message += "; " + note
			}
		}
		res := g.result(Result{Layer: LayerCleanup, Operation: OpRemove}, o)
		res.DurationMS = ms(time.Since(start))
		rep.Results = append(rep.Results, res)
	}
	if principal.principal == "" && b.hint != nil {
		principal.principal = b.hint()
	}
	rep.Principal = b.red.clean(principal.principal)
	return rep
}

// addNetwork adds the DNS, TCP and (for https) TLS probes of endpoint and
// returns the last one.
func addNetwork(g *graph, endpoint *url.URL) *node {
	t := newNetTarget(endpoint)
	dns := g.add(LayerNetwork, OpDNS, t.dns)
	last := g.add(LayerNetwork, OpTCP, t.tcp, dns)
	if t.tls {
		last = g.add(LayerNetwork, OpTLS, t.handshake, last)
	}
	return last
}
