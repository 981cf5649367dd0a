package storetest

import (
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/ckgate/ckgate/gateway"
)

// ManyKeys is how many keys the listing test writes: more than one page of
// every cloud API (1,000).
const ManyKeys = 1500

// listKeys are keys whose byte order differs from a directory walk ('-'
// and '.' sort before '/'; upper case before lower case), and keys whose
// prefixes are strings, not directories ("offsets/1" matches "offsets/10").
var listKeys = []string{
	"a/b", "a/c/d", "a-b", "a.b", "a0", "a~", "B/x", "Z",
	"offsets/1", "offsets/10", "offsets/100", "offsets/1.compact", "offsets/2",
	"offsets-x", "offsets1", ".0.crc", "_spark_metadata/0",
}

// putMany writes data=key for every key with a few writers at once and
// returns the versions.
func putMany(t *testing.T, s gateway.Store, keys []string) map[string]gateway.Version {
	t.Helper()
	var mu sync.Mutex
	versions := make(map[string]gateway.Version, len(keys))
	work := make(chan string)
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			for k := range work {
				v, err := s.Put(t.Context(), k, []byte(k), gateway.IfAbsent())
				if err != nil {
					t.Errorf("put %q: %v", k, err)
					continue
				}
				mu.Lock()
				versions[k] = v
				mu.Unlock()
			}
		})
	}
	for _, k := range keys {
		work <- k
	}
	close(work)
	wg.Wait()
	if t.Failed() {
		t.FailNow()
	}
	return versions
}

// testListOrderAndPaging: List yields exactly the keys with the string
// prefix, in byte order, with sizes and versions, across pages.
func testListOrderAndPaging(t *testing.T, s gateway.Store) {
	all := slices.Clone(listKeys)
	for i := range ManyKeys {
		all = append(all, fmt.Sprintf("many/%04d", i))
	}
	versions := putMany(t, s, all)
	slices.Sort(all) // Go string order is byte order

	prefixes := []string{
		"", "a", "a/", "a-", "offsets", "offsets/", "offsets/1", "offsets/10",
		"many/", "many/01", "many/1499", "B", "b", ".", "_", "nope", "nope/", "many/x/",
	}
	for _, p := range prefixes {
		t.Run(fmt.Sprintf("prefix=%q", p), func(t *testing.T) {
			var want []string
			for _, k := range all {
				if strings.HasPrefix(k, p) {
					want = append(want, k)
				}
			}
			got := listAll(t, s, p)
			wantKeys(t, fmt.Sprintf("list %q", p), keysOf(got), want)
			for _, a := range got {
				if a.Size != int64(len(a.Key)) {
					t.Errorf("list %q: %q has size %d, want %d", p, a.Key, a.Size, len(a.Key))
				}
				if v, ok := versions[a.Key]; ok && a.Version != v {
					t.Errorf("list %q: %q has version %q, put returned %q", p, a.Key, a.Version, v)
				}
			}
		})
	}
}

// testListEarlyBreak: stopping a listing early is safe, yields the first
// keys, and leaves the store usable.
func testListEarlyBreak(t *testing.T, s gateway.Store) {
	keys := []string{"k/0", "k/1", "k/2", "k/3", "k/4"}
	putMany(t, s, keys)
	for _, n := range []int{1, 3} {
		var got []string
		for a, err := range s.List(t.Context(), "k/") {
			if err != nil {
				t.Fatalf("list: %v", err)
			}
			got = append(got, a.Key)
			if len(got) == n {
				break
			}
		}
		wantKeys(t, fmt.Sprintf("list stopped after %d", n), got, keys[:n])
	}
	mustPut(t, s, "k/5", []byte("k/5"), gateway.IfAbsent())
	wantKeys(t, "list after breaks", keysOf(listAll(t, s, "k/")), append(keys, "k/5"))
}

// testListInvalidPrefix: a malformed prefix yields one ErrInvalidKey error.
func testListInvalidPrefix(t *testing.T, s gateway.Store) {
	mustPut(t, s, "a/b", []byte("x"), gateway.None())
	for _, p := range []string{"/abs", "a/../b", "a//", "a\x00", `a\`, "../"} {
		n := 0
		for _, err := range s.List(t.Context(), p) {
			n++
			if n == 1 {
				WantKeyKind(t, "list", err, p, gateway.ErrInvalidKey)
			}
		}
		if n != 1 {
			t.Errorf("list %q yielded %d entries, want one error", p, n)
		}
	}
}
