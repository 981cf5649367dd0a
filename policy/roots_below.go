package policy

import (
	"context"
	"errors"
	"strings"

	"github.com/ckgate/ckgate/gateway"
)

// Below is what a bounded look below a directory found: the directory
// itself may be a checkpoint root, or hold one somewhere below it.
type Below struct {
	// Self: the directory is a checkpoint root itself (nothing below it
	// was listed).
	Self bool
	// Root is the first checkpoint root found below it in lexical order,
	// as a '/'-separated name relative to it; "" for none.
	Root string
	// Entries counts the keys listed that are not ckgate's own bookkeeping
	// (_ckgate/, .ckgate-locks/).
	Entries int
	// Truncated: the look stopped after limit keys without finding a root.
	Truncated bool
}

// LookBelow looks for a checkpoint root below the directory s is opened
// at (a store of any backend: it only lists). It stops at the first root
// (a `metadata` entry, or a log-entry name in an `offsets/` or `commits/`
// directory, by the rule the root finder applies above a location) or
// after limit keys. A directory that does not exist yet holds nothing.
func LookBelow(ctx context.Context, s gateway.Store, limit int) (Below, error) {
	var b Below
	self, err := storeIsRoot(ctx, s, "")
	switch {
	case errors.Is(err, gateway.ErrNotFound):
		return b, nil
	case err != nil:
		return b, err
	case self:
		b.Self = true
		return b, nil
	}
	n := 0
	for a, err := range s.List(ctx, "") {
		if errors.Is(err, gateway.ErrNotFound) {
			return b, nil
		}
		if err != nil {
			return b, err
		}
		if n++; n > limit {
			b.Truncated = true
			return b, nil
		}
		if first, _, _ := strings.Cut(a.Key, "/"); first == "_ckgate" || first == ".ckgate-locks" {
			continue
		}
		b.Entries++
		if root, ok := rootOfKey(a.Key); ok {
			b.Root = root
			return b, nil
		}
	}
	return b, nil
}

// rootOfKey is the checkpoint root that key (relative to a directory that
// is not a root) shows below that directory: "a/b" for "a/b/metadata",
// "a/b/metadata/x" (a damaged metadata still marks its root) or
// "a/b/offsets/7".
func rootOfKey(key string) (string, bool) {
	segs := strings.Split(key, "/")
	for i := 1; i < len(segs); i++ {
		parent := strings.Join(segs[:i], "/")
		switch {
		case segs[0] == "":
			return "", false // not a key
		case segs[i] == "metadata" && !operatorMetadataDir(parent):
			return parent, true
		case i == len(segs)-1 && i >= 2 && gateway.AllDigits(segs[i]) && (segs[i-1] == "offsets" || segs[i-1] == "commits"):
			return strings.Join(segs[:i-1], "/"), true
		}
	}
	return "", false
}
