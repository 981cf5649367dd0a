package gcsstore

import (
	"context"
	"crypto/rand"
	"fmt"
	"net/url"
	"strings"

	"cloud.google.com/go/storage"

	"github.com/ckgate/ckgate/gateway"
)

var _ gateway.CopyDriver = (*driver)(nil)

// Copy stores src's content under dst with a rewrite (CopierFrom), which
// Cloud Storage evaluates atomically with its conditions: the source's
// ifSourceGenerationMatch for srcVersion, the destination's
// ifGenerationMatch=0 for IfAbsent and ifGenerationMatch for IfMatch. The
// copy carries a fresh write id, so a refusal after a retried attempt is
// settled like a refused Put. An emulator (STORAGE_EMULATOR_HOST, or an
// endpoint outside googleapis.com) may ignore those conditions on a
// rewrite (fake-gcs-server 1.56 does), so there a conditional copy, or
// one pinned to srcVersion, reads src at that generation and streams it
// into PutStream(dst, c), whose conditions it does honour.
func (d *driver) Copy(ctx context.Context, src, dst string, srcVersion gateway.Version, c gateway.Cond) (gateway.Version, error) {
	if !d.condCopy && (srcVersion != "" || c.Kind != gateway.CondNone) {
		return d.streamCopy(ctx, src, dst, srcVersion, c)
	}
	from := d.bucket.Object(src)
	var srcGen int64
	if srcVersion != "" {
		g, ok := generation(srcVersion)
		if !ok {
			return "", gateway.E("copy", src, gateway.ErrPrecondition, fmt.Errorf("version %q is no GCS generation", srcVersion))
		}
		srcGen = g
		from = from.If(storage.Conditions{GenerationMatch: g})
	}
	to, err := d.conditioned(d.bucket.Object(dst), "copy", dst, c)
	if err != nil {
		return "", err
	}
	to, tries := d.track(to)
	id := rand.Text()
	cp := to.CopierFrom(from)
	cp.Metadata = map[string]string{WriteIDKey: id}
	a, err := cp.Run(ctx)
	if err == nil {
		return version(a.Generation), nil
	}
	switch {
	case isNotFound(err): // a rewrite's 404 is the source's
		return "", gateway.E("copy", src, gateway.ErrNotFound, named(ctx, err))
	case !isPrecondition(err):
		return "", copyFailed(ctx, dst, src, c, err)
	}
	// A 412 is either side's: the source's generation tells.
	if srcVersion != "" {
		sa, serr := d.bucket.Object(src).Attrs(ctx)
		switch {
		case serr != nil && isNotFound(serr):
			return "", gateway.E("copy", src, gateway.ErrNotFound, serr)
		case serr == nil && sa.Generation != srcGen:
			return "", gateway.E("copy", src, gateway.ErrPrecondition, fmt.Errorf("the source is at generation %d, not %d: %w", sa.Generation, srcGen, err))
		}
	}
	if c.Kind == gateway.CondNone {
		return "", copyFailed(ctx, dst, src, c, err)
	}
	r := gateway.Refused{Op: "copy", Key: dst, Cond: c, Err: err, Retried: tries.retried.Load()}
	return r.Settle(ctx, func(ctx context.Context) (gateway.Version, bool, error) {
		a, err := d.bucket.Object(dst).Attrs(ctx)
		if err != nil {
			return "", false, err
		}
		return version(a.Generation), a.Metadata[WriteIDKey] == id, nil
	}, isNotFound)
}

// streamCopy reads src (at srcVersion's generation, when given) and writes
// it under dst with PutStream, under c. A failed read creates nothing.
func (d *driver) streamCopy(ctx context.Context, src, dst string, srcVersion gateway.Version, c gateway.Cond) (gateway.Version, error) {
	from := d.bucket.Object(src)
	if srcVersion != "" {
		g, ok := generation(srcVersion)
		if !ok {
			return "", gateway.E("copy", src, gateway.ErrPrecondition, fmt.Errorf("version %q is no GCS generation", srcVersion))
		}
		from = from.If(storage.Conditions{GenerationMatch: g})
	}
	r, err := from.NewReader(ctx)
	if err != nil {
		return "", wrap(ctx, "copy", src, gateway.None(), err) // the source's
	}
	defer r.Close()
	// The reader reads the generation it opened; an emulator may have
	// ignored the condition, so that is the one compared.
	if srcVersion != "" && version(r.Attrs.Generation) != srcVersion {
		return "", gateway.E("copy", src, gateway.ErrPrecondition,
			fmt.Errorf("the source is at generation %d, not %s", r.Attrs.Generation, srcVersion))
	}
	return d.PutStream(ctx, dst, &reader{ctx: ctx, r: r}, c)
}

// conditioned returns obj under the condition c of a write.
func (d *driver) conditioned(obj *storage.ObjectHandle, op, name string, c gateway.Cond) (*storage.ObjectHandle, error) {
	switch c.Kind {
	case gateway.CondIfAbsent:
		return obj.If(storage.Conditions{DoesNotExist: true}), nil
	case gateway.CondIfMatch:
		gen, ok := generation(c.Version)
		if !ok {
			return nil, gateway.E(op, name, gateway.ErrPrecondition, fmt.Errorf("version %q is no GCS generation", c.Version))
		}
		return obj.If(storage.Conditions{GenerationMatch: gen}), nil
	}
	return obj, nil
}

// copyFailed is the error of a copy to dst from src, for a request that
// carried c.
func copyFailed(ctx context.Context, dst, src string, c gateway.Cond, err error) error {
	err = named(ctx, err)
	return gateway.E("copy", dst, kindOf(c, err), fmt.Errorf("from %s: %w", src, err))
}

// serviceConditions reports whether endpoint ("" for the default) is
// Cloud Storage itself, which evaluates a rewrite's conditions, rather
// than an emulator.
func serviceConditions(endpoint string) bool {
	if endpoint == "" {
		return true
	}
	u, err := url.Parse(endpoint)
	if err != nil {
		return false
	}
	h := strings.ToLower(u.Hostname())
	return h == "googleapis.com" || strings.HasSuffix(h, ".googleapis.com")
}
