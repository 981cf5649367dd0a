package sink_test

import (
	"testing"

	"github.com/ckgate/ckgate/engine/sink"
)

func TestSameIdentity(t *testing.T) {
	full := "https://h/hook?x=1&token=tk&code=c1"
	cur := map[string]string{"kind": "http", "url": "https://h/hook?x=REDACTED&token=REDACTED&code=REDACTED", sink.URLHashKey: sink.URLHash(full)}
	rotated := map[string]string{"kind": "http", "url": cur["url"], sink.URLHashKey: sink.URLHash("https://h/hook?x=1&token=tk&code=c2")}
	old := map[string]string{"kind": "http", "url": "https://h/hook?code=c1&token=REDACTED&x=1"} // sorted, code= kept
	for _, tc := range []struct {
		name              string
		rec, cur          map[string]string
		same, hidden, old bool
	}{
		{"equal", cur, cur, true, false, false},
		{"rotated key", cur, rotated, false, true, false},
		{"old plan", old, cur, true, false, true},
		{"old plan, another host", map[string]string{"kind": "http", "url": "https://other/hook?code=c1&token=REDACTED&x=1"}, cur, false, false, false},
		{"old plan, another parameter", map[string]string{"kind": "http", "url": "https://h/hook?code=c1&x=1"}, cur, false, false, false},
		{"files", map[string]string{"kind": "files", "path": "/o"}, map[string]string{"kind": "files", "path": "/o"}, true, false, false},
		{"files moved", map[string]string{"kind": "files", "path": "/o"}, map[string]string{"kind": "files", "path": "/p"}, false, false, false},
	} {
		if got := sink.SameIdentity(tc.rec, tc.cur); got != tc.same {
			t.Errorf("%s: SameIdentity = %v", tc.name, got)
		}
		if got := sink.HiddenChange(tc.rec, tc.cur); got != tc.hidden {
			t.Errorf("%s: HiddenChange = %v", tc.name, got)
		}
		if got := tc.same && sink.Stale(tc.rec, tc.cur); got != tc.old {
			t.Errorf("%s: Stale = %v", tc.name, got)
		}
	}
}
