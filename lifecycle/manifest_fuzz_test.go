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
	f.Add([]byte(`{"version":1,"entries":[{"key":"metadata","size":2,"sha256":"` + strings.Repeat("ab", 32) + `"}]}`))
	f.Add([]byte(`{"version":1,"entries":[{"key":"../x","size":2,"sha256":"00"},{"key":"a","size":-1}]}`))
	f.Add([]byte(`{"version":1,"entries":[{"key":"a","size":1,"sha256":"` + strings.Repeat("ab", 32) + `"},{"key":"a","size":1,"sha256":"` + strings.Repeat("ab", 32) + `"}]}`))
	f.Add([]byte(`{`))
	f.Add([]byte(``))
	f.Fuzz(func(t *testing.T, data []byte) {
		ms := memstore.New()
		ctx := context.Background()
		if _, err := ms.Put(ctx, lifecycle.ManifestKey, data, gateway.None()); err != nil {
			t.Fatal(err)
		}
		m, err := lifecycle.ReadManifest(ctx, ms)
		if err != nil {
			if !strings.Contains(err.Error(), lifecycle.ManifestKey) {
				t.Fatalf("error does not name %s: %v", lifecycle.ManifestKey, err)
			}
			return
		}
		// An accepted manifest names each valid key once, with a digest.
		seen := map[string]bool{}
		for _, e := range m.Entries {
			if seen[e.Key] || gateway.ValidateKey("get", e.Key) != nil || e.Size < 0 || len(e.SHA256) != 64 {
				t.Fatalf("accepted entry %+v", e)
			}
			seen[e.Key] = true
		}
	})
}
