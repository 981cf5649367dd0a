package checkpoint_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/ckgate/ckgate/engine/checkpoint"
	"github.com/ckgate/ckgate/gateway"
	"github.com/ckgate/ckgate/gateway/memstore"
)

// TestReadFileSinkLogTail: a sink log that starts after batch 0 (a run
// restored at a boundary) reads from its latest compaction file, or from
// its first batch, to its latest; a gap is an error naming the batch, and
// the whole-log reader refuses the same log.
func TestReadFileSinkLogTail(t *testing.T) {
	ctx := context.Background()
	write := func(st gateway.Store, name string, paths ...string) {
		var es []checkpoint.SinkFileStatus
		for _, p := range paths {
			es = append(es, checkpoint.SinkFileStatus{Path: p, Action: checkpoint.SinkActionAdd})
		}
		data, err := checkpoint.EncodeFileSinkLog(es)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := st.Put(ctx, checkpoint.SinkMetadataDir+"/"+name, data, gateway.None()); err != nil {
			t.Fatal(err)
		}
	}
	paths := func(es []checkpoint.SinkFileStatus) []string {
		var out []string
		for _, e := range es {
			out = append(out, e.Path)
		}
		return out
	}
	for _, tc := range []struct {
		name   string
		files  [][]string // name, then its paths
		want   []string
		latest int64
		gap    int64 // -1: none
	}{
		{"no compaction", [][]string{{"57", "a"}, {"58", "b"}}, []string{"a", "b"}, 58, -1},
		{"from the compaction", [][]string{{"57", "a"}, {"58", "b"}, {"59.compact", "a", "b", "c"}, {"60", "d"}}, []string{"a", "b", "c", "d"}, 60, -1},
		{"a gap", [][]string{{"57", "a"}, {"59", "c"}}, nil, 59, 58},
	} {
		t.Run(tc.name, func(t *testing.T) {
			st := memstore.New()
			for _, f := range tc.files {
				write(st, f[0], f[1:]...)
			}
			got, latest, err := checkpoint.ReadFileSinkLogTail(ctx, st, checkpoint.SinkMetadataDir)
			if tc.gap >= 0 {
				if !errors.Is(err, gateway.ErrNotFound) || !strings.Contains(err.Error(), fmt.Sprintf("batch %d", tc.gap)) {
					t.Fatalf("err = %v, want batch %d missing", err, tc.gap)
				}
				return
			}
			if err != nil || latest != tc.latest || !slices.Equal(paths(got), tc.want) {
				t.Fatalf("got %v latest %d err %v, want %v latest %d", paths(got), latest, err, tc.want, tc.latest)
			}
			if _, _, err := checkpoint.ReadFileSinkLog(ctx, st, checkpoint.SinkMetadataDir); tc.name == "no compaction" && err == nil {
				t.Fatal("the whole-log reader read a log that starts at batch 57")
			}
		})
	}
	if _, _, err := checkpoint.ReadFileSinkLogTail(ctx, memstore.New(), checkpoint.SinkMetadataDir); !errors.Is(err, gateway.ErrNotFound) {
		t.Fatalf("an absent log: %v, want ErrNotFound", err)
	}
}
