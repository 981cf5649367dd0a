package s3store

import (
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/ckgate/ckgate/gateway"
	"github.com/ckgate/ckgate/gateway/storetest"
	"github.com/ckgate/ckgate/internal/emulator"
)

// The fanned-out listing yields what a flat one does, in the same order:
// keys of the level between its directories (names that sort just before
// and after "a/": "a-b", "a.x", "a0"), a directory of more than one page,
// nested directories; behind a backend prefix too; and
// it stops when the reader does.
func TestListFansOutInOrder(t *testing.T) {
	emulator.Require(t, startErr)
	for _, root := range []string{"", "tenant/q1"} {
		t.Run("prefix="+root, func(t *testing.T) {
			s := newStoreOn(t, newClient(t), root)
			// (versitygw keeps objects as files, so no key is also a directory)
			keys := []string{"a-b", "a.x", "a/c", "a/d/e", "a0", "b/x", "c", "offsets/.0.tmp"}
			for i := range 1100 {
				keys = append(keys, fmt.Sprintf("offsets/%d", i))
			}
			var wg sync.WaitGroup
			sem := make(chan struct{}, 32)
			for _, k := range keys {
				sem <- struct{}{}
				wg.Go(func() {
					defer func() { <-sem }()
					if _, err := s.Put(t.Context(), k, []byte(k), gateway.None()); err != nil {
						t.Errorf("put %s: %v", k, err)
					}
				})
			}
			wg.Wait()
			slices.Sort(keys)
			if got := storetest.Keys(t, s, ""); !slices.Equal(got, keys) {
				t.Fatalf("List(\"\") gave %d keys, want %d; first %v", len(got), len(keys), got[:min(len(got), 8)])
			}
			var flat []string
			s.d.listFlat(t.Context(), s.Prefix(), "", func(a gateway.Attrs, err error) bool {
				if err != nil {
					t.Fatal(err)
				}
				flat = append(flat, strings.TrimPrefix(a.Key, s.Prefix())) // the driver lists full names
				return true
			})
			if !slices.Equal(flat, keys) {
				t.Fatalf("flat listing gave %d keys, want %d", len(flat), len(keys))
			}
			for _, p := range []string{"a", "a/", "a.", "offsets/", "offsets/10", "zz"} {
				var want []string
				for _, k := range keys {
					if len(k) >= len(p) && k[:len(p)] == p {
						want = append(want, k)
					}
				}
				if got := storetest.Keys(t, s, p); !slices.Equal(got, want) {
					t.Fatalf("List(%q) = %d keys %v…, want %d", p, len(got), got[:min(len(got), 5)], len(want))
				}
			}
			n := 0
			for _, err := range s.List(t.Context(), "") {
				if err != nil {
					t.Fatal(err)
				}
				if n++; n == 700 {
					break // stop inside the big directory: no goroutine may hang on
				}
			}
		})
	}
}
