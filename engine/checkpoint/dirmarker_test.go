package checkpoint

import (
	"context"
	"encoding/json"
	"path"
	"testing"

	"github.com/ckgate/ckgate/gateway"
)

// addDirMarkers writes a directory marker (gateway.DirMarkerKey) for every
// directory of every key of st, as Hadoop's mkdirs through ckgate serve
// leaves them, and returns how many.
func addDirMarkers(t testing.TB, st gateway.Store) int {
	t.Helper()
	dirs := map[string]bool{}
	for a, err := range st.List(context.Background(), "") {
		if err != nil {
			t.Fatal(err)
		}
		for d := path.Dir(a.Key); d != "."; d = path.Dir(d) {
			dirs[d] = true
		}
	}
	for d := range dirs {
		put(t, st, gateway.DirMarkerKey(d), nil)
	}
	return len(dirs)
}

// TestInspectIgnoresDirMarkers: a Spark checkpoint with a directory
// marker in every directory inspects exactly as without them (no finding,
// no file counted).
func TestInspectIgnoresDirMarkers(t *testing.T) {
	for _, c := range sparkCases {
		t.Run(c.dir, func(t *testing.T) {
			st := memCopy(t, c.dir, "")
			want, err := json.Marshal(inspect(t, st, Options{}))
			if err != nil {
				t.Fatal(err)
			}
			if addDirMarkers(t, st) == 0 {
				t.Fatal("no directories")
			}
			got, err := json.Marshal(inspect(t, st, Options{}))
			if err != nil {
				t.Fatal(err)
			}
			if string(got) != string(want) {
				t.Errorf("with directory markers the report differs:\n got %s\nwant %s", got, want)
			}
		})
	}
}
