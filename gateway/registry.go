package gateway

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"net/url"
	"path/filepath"
	"slices"
	"strings"
)

// OpenFunc opens a Store for a parsed URL of its scheme.
type OpenFunc func(ctx context.Context, u *url.URL) (Store, error)

// Registry maps URL schemes to backends. It is built explicitly (see package
// stores for the default one); nothing registers itself at init time.
type Registry struct {
	openers map[string]OpenFunc
}

// NewRegistry returns an empty registry.
func NewRegistry() *Registry { return &Registry{openers: map[string]OpenFunc{}} }

// Register adds or replaces the opener of scheme.
func (r *Registry) Register(scheme string, f OpenFunc) *Registry {
	r.openers[strings.ToLower(scheme)] = f
	return r
}

// Schemes lists the registered schemes in order.
func (r *Registry) Schemes() []string {
	return slices.Sorted(maps.Keys(r.openers))
}

// ParseURL parses a store URL. A plain path (no "scheme://") becomes a
// file:// URL of its absolute form.
func ParseURL(raw string) (*url.URL, error) {
	if raw == "" {
		return nil, fmt.Errorf("%w: empty store URL", ErrInvalidURL)
	}
	if scheme, rest, ok := strings.Cut(raw, ":"); ok && !strings.Contains(raw, "://") && !hasFileScheme(raw) &&
		slices.Contains(urlSchemes, strings.ToLower(scheme)) {
		// "s3:bucket" or "gs:/b" is a mistyped URL, never a local directory
		return nil, fmt.Errorf("%w %q: did you mean %s://%s?", ErrInvalidURL, Redact(raw), strings.ToLower(scheme), strings.TrimLeft(rest, "/"))
	}
	if !strings.Contains(raw, "://") && !hasFileScheme(raw) {
		abs, err := filepath.Abs(raw)
		if err != nil {
			return nil, fmt.Errorf("store path %q: %w", raw, err)
		}
		return &url.URL{Scheme: "file", Path: filepath.ToSlash(abs)}, nil
	}
	u, err := url.Parse(raw)
	if err != nil {
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err // its message repeats the whole URL, secrets included
		}
		return nil, fmt.Errorf("%w %q: %w", ErrInvalidURL, Redact(raw), err)
	}
	u.Scheme = strings.ToLower(u.Scheme)
	return u, nil
}

// urlSchemes are the schemes of store URLs: a plain path that starts with
// one and a colon is a mistyped URL.
var urlSchemes = []string{"s3", "gs", "az", "azure", "file"}

// hasFileScheme reports whether raw is a file URL without "//" ("file:/x").
func hasFileScheme(raw string) bool {
	return len(raw) > 5 && strings.EqualFold(raw[:5], "file:") && raw[5] == '/'
}

// Open opens the store named by raw (a URL or a plain path).
func (r *Registry) Open(ctx context.Context, raw string) (Store, error) {
	u, err := ParseURL(raw)
	if err != nil {
		return nil, err
	}
	f, ok := r.openers[u.Scheme]
	if !ok {
		return nil, fmt.Errorf("%w %q: unknown scheme %q (known: %s)",
			ErrInvalidURL, Redact(raw), u.Scheme, strings.Join(r.Schemes(), ", "))
	}
	u, d, err := TakeTryTimeout(u)
	if err != nil {
		return nil, err
	}
	if d > 0 {
		ctx = WithTryTimeout(ctx, d)
	}
	return f(ctx, u)
}

// Open opens raw through reg.
func Open(ctx context.Context, reg *Registry, raw string) (Store, error) {
	return reg.Open(ctx, raw)
}
