package gateway

import (
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strings"
)

// Canonical locations: every decision about a write is made on the object
// the write really touches, named one way whatever the caller typed.
//
//   - local disk: "file://" + the real absolute path, every symbolic link in
//     it resolved as far as the path exists ("/", "//", "/.", "/tmp/..",
//     "file:///", "file:////" and "." run from "/" are all "file:///");
//   - S3 and GCS: "s3://bucket/name", "gs://bucket/name", the bucket in
//     lower case and the name exactly the object name the backend uses;
//   - Azure: "az://account/container/name" ("azure://" is "az://").
//
// Query parameters (endpoints, credentials), user info and fragments are not
// part of a location. A location never ends with '/' except "file:///".

// CanonicalRoot returns the canonical location of the store root that raw
// (a store URL or a plain path) names.
func CanonicalRoot(raw string) (string, error) {
	u, err := ParseURL(raw)
	if err != nil {
		return "", err
	}
	switch u.Scheme {
	case "file":
		if u.Host != "" && u.Host != "localhost" {
			return "", fmt.Errorf("store URL %q: a file URL names no host", Redact(raw))
		}
		p, err := RealPath(filepath.FromSlash(u.Path))
		if err != nil {
			return "", fmt.Errorf("store URL %q: %w", Redact(raw), err)
		}
		return FileLocation(p), nil
	case "s3", "gs", "az", "azure":
		scheme := u.Scheme
		if scheme == "azure" {
			scheme = "az"
		}
		if u.Host == "" {
			return "", fmt.Errorf("store URL %q: no bucket", Redact(raw))
		}
		p := strings.Trim(u.Path, "/")
		if p != "" {
			if err := ValidateKey("locate", p); err != nil {
				return "", fmt.Errorf("store URL %q: path: %w", Redact(raw), err)
			}
		}
		loc := scheme + "://" + strings.ToLower(u.Host)
		if scheme == "az" {
			// az://account/container/prefix: the container is the first
			// segment of the path, lower case like the account.
			c, rest, _ := strings.Cut(p, "/")
			if c == "" {
				return "", fmt.Errorf("store URL %q: no container", Redact(raw))
			}
			p = strings.ToLower(c)
			if rest != "" {
				p += "/" + rest
			}
		}
		return JoinLocation(loc, p), nil
	}
	return "", fmt.Errorf("store URL %q: unknown scheme %q", Redact(raw), u.Scheme)
}

// FileLocation is the location of the absolute local path p.
func FileLocation(p string) string {
	p = filepath.ToSlash(filepath.Clean(p))
	if p == "/" {
		return "file:///"
	}
	return "file://" + escapeLocation(p)
}

// FilePath is the local path of a file location, and false for any other.
func FilePath(loc string) (string, bool) {
	p, ok := strings.CutPrefix(loc, "file://")
	if !ok || !strings.HasPrefix(p, "/") {
		return "", false
	}
	p, err := url.PathUnescape(p)
	if err != nil {
		return "", false
	}
	return filepath.FromSlash(p), true
}

// JoinLocation joins a location and a relative name with one '/'.
func JoinLocation(loc, name string) string {
	if name == "" {
		return loc
	}
	return strings.TrimSuffix(loc, "/") + "/" + escapeLocation(name)
}

// escapeLocation escapes the bytes of a name that would change how a
// location parses back as a URL ('%', '?', '#', control characters), so
// that a location is one string for one object and canonicalises to
// itself; every other byte stays as it is, readable.
func escapeLocation(name string) string {
	if !strings.ContainsFunc(name, func(r rune) bool { return r == '%' || r == '?' || r == '#' || r < 0x20 || r == 0x7f }) {
		return name
	}
	var b strings.Builder
	for i := 0; i < len(name); i++ {
		c := name[i]
		if c == '%' || c == '?' || c == '#' || c < 0x20 || c == 0x7f {
			fmt.Fprintf(&b, "%%%02X", c)
			continue
		}
		b.WriteByte(c)
	}
	return b.String()
}

// InsideLocation reports whether loc is strictly below root.
func InsideLocation(loc, root string) bool {
	return strings.HasPrefix(loc, strings.TrimSuffix(root, "/")+"/") && len(loc) > len(strings.TrimSuffix(root, "/"))+1
}

// ErrOutsideRoot: a key's real path leaves its store root.
var ErrOutsideRoot = errors.New("leaves the store root")

// CanonicalKey returns the canonical location of key under the store root
// whose canonical location is root. On the local disk every symbolic link
// in the key's directories is resolved, and the result must stay inside the
// root's real path (ErrInvalidKey otherwise); the last segment is not
// followed, since a write or a delete replaces or removes the name itself.
func CanonicalKey(root, key string) (string, error) {
	if err := ValidateKey("locate", key); err != nil {
		return "", err
	}
	rp, ok := FilePath(root)
	if !ok {
		return JoinLocation(root, key), nil
	}
	rp = filepath.Clean(rp)
	dir, base := filepath.Split(filepath.Join(rp, filepath.FromSlash(key)))
	real, err := RealPath(dir)
	if err != nil {
		return "", E("locate", key, ErrInvalidKey, err)
	}
	full := filepath.Join(real, base)
	if !insidePath(full, rp) {
		return "", E("locate", key, ErrInvalidKey, fmt.Errorf("its real path %s %w %s", full, ErrOutsideRoot, rp))
	}
	if fi, err := os.Lstat(full); err == nil && fi.Mode()&os.ModeSymlink != 0 {
		// a link as the key's own name: the store refuses one that leads out
		target, err := RealPath(full)
		if err != nil {
			return "", E("locate", key, ErrInvalidKey, err)
		}
		if !insidePath(target, rp) {
			return "", E("locate", key, ErrInvalidKey, fmt.Errorf("it is a link to %s, which %w %s", target, ErrOutsideRoot, rp))
		}
	}
	return FileLocation(full), nil
}

// RealPath returns the absolute form of p with every symbolic link
// resolved as far as the path exists (a dangling link is followed to where
// it points); the part that does not exist yet is appended cleaned.
func RealPath(p string) (string, error) {
	abs, err := filepath.Abs(p)
	if err != nil {
		return "", err
	}
	var rest []string
	cur := abs
	for links := 0; ; {
		real, err := filepath.EvalSymlinks(cur)
		if err == nil {
			return filepath.Join(append([]string{real}, rest...)...), nil
		}
		if !errors.Is(err, os.ErrNotExist) {
			return "", fmt.Errorf("resolve %s: %w", cur, err)
		}
		if fi, lerr := os.Lstat(cur); lerr == nil && fi.Mode()&os.ModeSymlink != 0 {
			if links++; links > 255 {
				return "", fmt.Errorf("resolve %s: too many levels of symbolic links", abs)
			}
			t, err := os.Readlink(cur)
			if err != nil {
				return "", fmt.Errorf("resolve %s: %w", cur, err)
			}
			if !filepath.IsAbs(t) {
				t = filepath.Join(filepath.Dir(cur), t)
			}
			cur = filepath.Clean(t)
			continue
		}
		parent := filepath.Dir(cur)
		if parent == cur {
			return filepath.Join(append([]string{cur}, rest...)...), nil
		}
		rest = append([]string{filepath.Base(cur)}, rest...)
		cur = parent
	}
}

// insidePath reports whether p is rp or below it.
func insidePath(p, rp string) bool {
	rel, err := filepath.Rel(rp, p)
	return err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator))
}

// ContainerURL is raw cut to its bucket or Azure container, its query
// (endpoint, options) kept, for a store that can see the directories above
// raw's root; "" for the local disk, which needs none.
func ContainerURL(raw string) (string, error) {
	u, err := ParseURL(raw)
	if err != nil {
		return "", err
	}
	switch u.Scheme {
	case "file":
		return "", nil
	case "az", "azure":
		c, _, _ := strings.Cut(strings.Trim(u.Path, "/"), "/")
		u.Path = "/" + c
	default:
		u.Path = ""
	}
	u.RawPath = ""
	return u.String(), nil
}
