package validate

import (
	"context"
	"net/url"

	"github.com/ckgate/ckgate/gateway"
)

// backend is what a run needs from one kind of store: the store the
// authorization probes use and the backend-specific probes.
type backend struct {
	shown string // the URL, redacted
	// store is nil when opening failed at the credentials layer (then
	// credentials reports why and every other probe is skipped).
	store gateway.Store
	// endpoint is the service the network and clock probes reach; nil for
	// the local disk.
	endpoint *url.URL
	red      *redactor

	credentials func(ctx context.Context) outcome
	identify    func(ctx context.Context) identity
	container   func(ctx context.Context) outcome
	info        []infoProbe
	// hint names the principal when the identity probe could not run (an
	// access key id found by the credentials probe); may be nil.
	hint func() string
	// tidy runs after the cleanup and returns a note for its result; may
	// be nil.
	tidy func() string
	// warnings go to the report as they are (Report.Warnings).
	warnings []string
	closers  []func() error
}

type infoProbe struct {
	op  string
	run func(ctx context.Context) outcome
}

func (b *backend) close() {
	for _, c := range b.closers {
		_ = c()
	}
}

// failedOpen is a backend whose store could not be opened for a reason
// of the credentials layer (a missing profile, an unreadable credentials
// file, an unset variable a forced method needs).
func failedOpen(b *backend, err error) *backend {
	b.store = nil
	b.credentials = func(context.Context) outcome { return failErr("", err) }
	b.identify = func(context.Context) identity { return identity{outcome: outcome{status: Skip}} }
	b.container = func(context.Context) outcome { return outcome{status: Skip} }
	b.info = nil
	return b
}

// openBackend opens the store of u for probing, with the identity opts
// select. Errors wrap ErrUsage.
func openBackend(ctx context.Context, u *url.URL, opts Options) (*backend, error) {
	red := &redactor{}
	id := opts.Identity
	red.add(id.AzureConnectionString, id.AzureSAS)
	switch u.Scheme {
	case "file":
		return openFile(ctx, u, red)
	case "s3":
		return openS3(ctx, u, id, red)
	case "gs":
		return openGCS(ctx, u, id, red)
	case "az":
		return openAzure(ctx, u, id, red)
	}
	return nil, usagef("store URL %q: unknown scheme %q (known: az, file, gs, s3)", gateway.Redact(u.String()), u.Scheme)
}

// params collects the URL parameters identity flags add to a store URL.
type params struct {
	have  url.Values // the URL's own
	added url.Values
}

func newParams(u *url.URL) *params { return &params{have: u.Query(), added: url.Values{}} }

// set adds name=value, refusing a different value the URL already has.
func (p *params) set(name, value, flag string) error {
	if value == "" {
		return nil
	}
	if have := p.have.Get(name); have != "" {
		if have != value {
			return usagef("the URL says %s=%s but %s says %s", name, have, flag, value)
		}
		return nil
	}
	p.added.Set(name, value)
	return nil
}

func (p *params) get(name string) string {
	if v := p.added.Get(name); v != "" {
		return v
	}
	return p.have.Get(name)
}

// apply returns u with the added parameters appended to its query, which
// is otherwise kept as the user wrote it.
func (p *params) apply(u *url.URL) url.URL {
	c := *u
	if len(p.added) > 0 {
		if c.RawQuery != "" {
			c.RawQuery += "&"
		}
		c.RawQuery += p.added.Encode()
	}
	return c
}
