package s3serve

import (
	"strings"
	"testing"

	"github.com/ckgate/ckgate/gateway"
)

// FuzzClientKeys: every client key the front door accepts maps to one
// store name and back (a directory marker "dir/" included), and a
// start-after never continues before its own store name.
func FuzzClientKeys(f *testing.F) {
	for _, s := range []string{"offsets/", "data/dir/x", "a//", "/", "x/.dir.ckgate", ".dir.ckgate", "offsets/0", "dir/sub/"} {
		f.Add(s, "data/", "/")
	}
	f.Fuzz(func(t *testing.T, key, prefix, delim string) {
		if refusedKey(key) {
			return
		}
		stored := storedKey(key)
		if gateway.ValidateKey("put", stored) != nil {
			return // the store refuses it (InvalidArgument)
		}
		if back := clientKey(stored); back != key {
			t.Fatalf("client key %q is stored as %q, listed as %q", key, stored, back)
		}
		if strings.HasSuffix(key, "/") != gateway.IsDirMarker(stored) {
			t.Fatalf("client key %q stored as %q: a marker exactly when it ends in '/'", key, stored)
		}
		if a := storeAfter(prefix, delim, key); a < key && a != stored {
			t.Fatalf("start-after %q continues from %q", key, a)
		}
	})
}
