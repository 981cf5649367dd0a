package lifecycle_test

import (
	"context"
	"strings"
	"testing"

	"github.com/ckgate/ckgate/gateway"
	"github.com/ckgate/ckgate/gateway/memstore"
	"github.com/ckgate/ckgate/lifecycle"
)

// FuzzReadManifest puts fuzzed bytes at an archive's manifest key and
// checks that ReadManifest never panics and that a rejection names the key.
func FuzzReadManifest(f *testing.F) {
	f.Add([]byte(`{"version":1,"source":"file:///a","files":[{"key":"metadata","size":45,"sha256":"00"}]}`))
	f.Add([]byte(`{"files":null}`))
	f.Add([]byte(`{`))
	f.Add([]byte(``))
	f.Fuzz(func(t *testing.T, data []byte) {
		ms := memstore.New()
		ctx := context.Background()
		if _, err := ms.Put(ctx, lifecycle.ManifestKey, data, gateway.None()); err != nil {
			t.Fatal(err)
		}
		if _, err := lifecycle.ReadManifest(ctx, ms); err != nil && !strings.Contains(err.Error(), lifecycle.ManifestKey) {
			t.Fatalf("error does not name %s: %v", lifecycle.ManifestKey, err)
		}
	})
}
