package lifecycle

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"

	"github.com/ckgate/ckgate/gateway"
)

// Location is where a store URL really points, for telling whether two
// locations overlap: on the local disk the absolute path with every
// symbolic link of its existing part resolved; on a cloud store the scheme,
// the service (endpoint) and bucket or account, and the object path.
type Location struct {
	Scheme   string // "file", "s3", "gs", "az", ...
	Endpoint string // the endpoint parameter, if any (another service)
	Host     string // the bucket, or the account; "" on the local disk
	Path     string // '/'-separated, absolute, clean, no trailing '/'
}

// Locate returns the canonical Location of a store URL or plain path. A
// local path need not exist: the symbolic links of its nearest existing
// ancestor are resolved and the rest is appended.
func Locate(raw string) (Location, error) {
	u, err := gateway.ParseURL(raw)
	if err != nil {
		return Location{}, err
	}
	if u.Scheme == "file" {
		p, err := realPath(filepath.FromSlash(u.Path))
		if err != nil {
			return Location{}, fmt.Errorf("%s: %w", gateway.Redact(raw), err)
		}
		return Location{Scheme: "file", Path: filepath.ToSlash(p)}, nil
	}
	return Location{Scheme: u.Scheme, Endpoint: strings.ToLower(strings.TrimSuffix(u.Query().Get("endpoint"), "/")),
		Host: strings.ToLower(u.Host), Path: path.Clean("/" + u.Path)}, nil
}

// realPath is filepath.Abs of p with the symbolic links of its nearest
// existing ancestor resolved.
func realPath(p string) (string, error) {
	abs, err := filepath.Abs(p)
	if err != nil {
		return "", err
	}
	var rest []string
	for cur := abs; ; {
		if _, err := os.Lstat(cur); err == nil {
			real, err := filepath.EvalSymlinks(cur)
			if err != nil {
				return "", err
			}
			return filepath.Join(append([]string{real}, rest...)...), nil
		} else if !errors.Is(err, fs.ErrNotExist) {
			return "", err
		}
		parent := filepath.Dir(cur)
		if parent == cur {
			return abs, nil
		}
		rest = append([]string{filepath.Base(cur)}, rest...)
		cur = parent
	}
}

// Within reports whether l is o or lies inside it (a '/' boundary: /a/bc
// is not inside /a/b).
func (l Location) Within(o Location) bool {
	if l.Scheme != o.Scheme || l.Endpoint != o.Endpoint || l.Host != o.Host {
		return false
	}
	if o.Path == "/" || l.Path == o.Path {
		return true
	}
	return strings.HasPrefix(l.Path, o.Path+"/")
}

func (l Location) String() string {
	if l.Scheme == "file" {
		return l.Path
	}
	return l.Scheme + "://" + l.Host + l.Path
}

// ErrOverlap: two locations a copy needs apart are the same, or one is
// inside the other (an archive into its own checkpoint copies itself).
var ErrOverlap = errors.New("the locations overlap")

// CheckApart returns an ErrOverlap error when the location named a (as
// aName) and the one named b overlap: equal, b inside a, or a inside b.
func CheckApart(aName, a, bName, b string) error {
	la, err := Locate(a)
	if err != nil {
		return err
	}
	lb, err := Locate(b)
	if err != nil {
		return err
	}
	const must = "; they must be different locations, neither inside the other"
	switch {
	case la == lb:
		return fmt.Errorf("%w: %s %s and %s %s are the same location (%s)%s", ErrOverlap, aName, gateway.Redact(a), bName, gateway.Redact(b), la, must)
	case lb.Within(la):
		return fmt.Errorf("%w: %s %s is inside %s %s (%s is under %s)%s", ErrOverlap, bName, gateway.Redact(b), aName, gateway.Redact(a), lb, la, must)
	case la.Within(lb):
		return fmt.Errorf("%w: %s %s is inside %s %s (%s is under %s)%s", ErrOverlap, aName, gateway.Redact(a), bName, gateway.Redact(b), la, lb, must)
	}
	return nil
}
