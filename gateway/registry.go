package gateway

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"path/filepath"
	"regexp"
	"sort"
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
	out := make([]string, 0, len(r.openers))
	for s := range r.openers {
		out = append(out, s)
	}
	sort.Strings(out)
	return out
}

// ParseURL parses a store URL. A plain path (no "scheme://") becomes a
// file:// URL of its absolute form.
func ParseURL(raw string) (*url.URL, error) {
	if raw == "" {
		return nil, fmt.Errorf("empty store URL")
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
		return nil, fmt.Errorf("store URL %q: %w", Redact(raw), err)
	}
	u.Scheme = strings.ToLower(u.Scheme)
	return u, nil
}

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
		return nil, fmt.Errorf("store URL %q: unknown scheme %q (known: %s)",
			Redact(raw), u.Scheme, strings.Join(r.Schemes(), ", "))
	}
	return f(ctx, u)
}

// Open opens raw through reg.
func Open(ctx context.Context, reg *Registry, raw string) (Store, error) {
	return reg.Open(ctx, raw)
}

// secretParams are query parameters whose values are never printed.
var secretParams = []string{"sig", "secret", "key", "token", "password", "sas", "credential"}

// userInfoText and secretParamText find user info and secret-looking
// parameters in text that does not parse as a URL.
var (
	userInfoText    = regexp.MustCompile(`(://)[^/?#@\s]*@`)
	secretParamText = regexp.MustCompile(`(?i)([?&;][^=&;#\s]*(?:` + strings.Join(secretParams, "|") + `)[^=&;#\s]*=)[^&;#\s]*`)
)

// Redact returns raw with user info and secret-looking query values masked,
// and the user info of URLs inside query values (?endpoint=http://u:p@h),
// for error messages and logs. A URL with nothing to mask is returned as
// it is.
func Redact(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		// Not a URL: mask what looks like user info or a secret parameter.
		raw = userInfoText.ReplaceAllString(raw, "${1}REDACTED@")
		return secretParamText.ReplaceAllString(raw, "${1}REDACTED")
	}
	if u.User == nil && u.RawQuery == "" {
		return raw
	}
	changed := false
	if u.User != nil {
		u.User = url.User("REDACTED")
		changed = true
	}
	q := u.Query()
	for name, vals := range q {
		lower := strings.ToLower(name)
		secret := false
		for _, s := range secretParams {
			if strings.Contains(lower, s) {
				secret = true
			}
		}
		for i, v := range vals {
			if secret {
				vals[i], changed = "REDACTED", true
			} else if eu, err := url.Parse(v); err == nil && eu.User != nil {
				eu.User = url.User("REDACTED")
				vals[i], changed = eu.String(), true
			}
		}
	}
	if !changed {
		return raw
	}
	u.RawQuery = q.Encode()
	return u.String()
}
