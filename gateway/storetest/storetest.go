// Package storetest is the conformance suite every gateway.Store backend
// must pass. A backend's test calls Run with a constructor of fresh, empty
// stores:
//
//	func TestConformance(t *testing.T) {
//		storetest.Run(t, func(t *testing.T) gateway.Store { return newEmptyStore(t) })
//	}
//
// Run checks every case twice: on the raw store ("raw") and behind
// gateway.WithPrefix ("prefixed"), so keys are exercised both at the root
// and nested. Each case gets its own store from newStore and closes it
// (gateway.Close) when the case ends; newStore must therefore not close the
// store itself, but may register cleanups for what it created (buckets,
// directories, emulators).
//
// The suite covers round trips, error kinds (positive and negative), create-
// only and compare-and-swap under races, conditional deletes, listing order
// and paging past 1,000 keys, odd and unicode keys, cancelled contexts,
// refused conditions, empty objects, a streamed 5 MiB object, ranged reads,
// listing pages (gateway.ListPage), copies (gateway.Copy) and directory
// markers (gateway.DirMarkerKey). Nothing is
// skipped: a backend that cannot do something the contract requires fails.
package storetest

import (
	"testing"

	"github.com/ckgate/ckgate/gateway"
)

// Prefix is the prefix the "prefixed" half of the suite wraps stores in.
const Prefix = "pfx/nested"

// Run runs the conformance suite against stores made by newStore. newStore
// must return a fresh, empty store isolated from every other store it
// returned (a new bucket, directory or unique prefix).
func Run(t *testing.T, newStore func(t *testing.T) gateway.Store) {
	t.Helper()
	t.Run("raw", func(t *testing.T) { runCases(t, newStore) })
	t.Run("prefixed", func(t *testing.T) {
		runCases(t, func(t *testing.T) gateway.Store {
			return gateway.WithPrefix(newStore(t), Prefix)
		})
	})
}

type testCase struct {
	name string
	run  func(t *testing.T, s gateway.Store)
}

// cases lists every conformance case; each runs on a fresh store.
var cases = []testCase{
	// roundtrip.go
	{"RoundTrip", testRoundTrip},
	{"VersionChangesOnEveryWrite", testVersionChanges},
	{"EmptyObject", testEmptyObject},
	{"Stream5MiB", testStreamLarge},
	// errors.go
	{"NotFound", testNotFound},
	{"InvalidKey", testInvalidKey},
	{"PrefixIsNotAnObject", testPrefixIsNotAnObject},
	{"CancelledContext", testCancelledContext},
	{"UnsupportedCondition", testUnsupportedCondition},
	// cond.go
	{"CreateOnlyTwice", testCreateOnlyTwice},
	{"StaleCAS", testStaleCAS},
	{"IfMatchMissing", testIfMatchMissing},
	{"ConditionalDelete", testConditionalDelete},
	// race.go
	{"RaceIfAbsent", testRaceIfAbsent},
	{"RaceCAS", testRaceCAS},
	{"RaceCASCounter", testRaceCASCounter},
	// list.go
	{"ListOrderAndPaging", testListOrderAndPaging},
	{"ListEarlyBreak", testListEarlyBreak},
	{"ListInvalidPrefix", testListInvalidPrefix},
	// keys.go
	{"OddKeys", testOddKeys},
	{"LongKey", testLongKey},
	// rangeread.go, page.go, copy.go, dirmarkers.go
	{"GetRange", testGetRange},
	{"ListPage", testListPage},
	{"ListPageMany", testListPageMany},
	{"Copy", testCopy},
	{"CopyRaceIfAbsent", testCopyRaceIfAbsent},
	{"CopyLarge", testCopyLarge},
	{"DirMarkers", testDirMarkers},
}

func runCases(t *testing.T, newStore func(t *testing.T) gateway.Store) {
	t.Helper()
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s := newStore(t)
			if s == nil {
				t.Fatal("newStore returned nil")
			}
			t.Cleanup(func() {
				if err := gateway.Close(s); err != nil {
					t.Errorf("close: %v", err)
				}
			})
			c.run(t, s)
		})
	}
}
