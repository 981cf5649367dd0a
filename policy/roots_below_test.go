package policy

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/ckgate/ckgate/gateway"
	"github.com/ckgate/ckgate/gateway/memstore"
)

func TestLookBelow(t *testing.T) {
	ctx := context.Background()
	for _, tc := range []struct {
		name string
		keys []string
		want Below
	}{
		{"empty", nil, Below{}},
		{"self", []string{"metadata", "offsets/0", "q/metadata"}, Below{Self: true}},
		{"self by log", []string{"commits/3"}, Below{Self: true}},
		{"plain data", []string{"a.txt", "b/c.json"}, Below{Entries: 2}},
		{"ckgate's own only", []string{"_ckgate/writer", ".ckgate-locks/x"}, Below{}},
		{"metadata below", []string{"a.txt", "demo/checkpoint/metadata", "zzz"}, Below{Root: "demo/checkpoint", Entries: 2}},
		{"metadata directory", []string{"x/metadata/junk"}, Below{Root: "x", Entries: 1}},
		{"log entry, no metadata", []string{"x/y/offsets/12"}, Below{Root: "x/y", Entries: 1}},
		{"operator metadata is not a root", []string{"old/state/0/_metadata/metadata", "old/state/0/0/1.delta"}, Below{Entries: 2}},
		{"not a log name", []string{"x/offsets/12.tmp", "x/commits/a"}, Below{Entries: 2}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := memstore.New()
			for _, k := range tc.keys {
				if _, err := s.Put(ctx, k, []byte("{}"), gateway.IfAbsent()); err != nil {
					t.Fatal(err)
				}
			}
			got, err := LookBelow(ctx, s, 100)
			if err != nil || got != tc.want {
				t.Fatalf("LookBelow = %+v, %v; want %+v", got, err, tc.want)
			}
		})
	}
}

func TestLookBelowStopsAtLimit(t *testing.T) {
	ctx := context.Background()
	s := memstore.New()
	for i := range 50 {
		s.Put(ctx, fmt.Sprintf("data/%03d", i), nil, gateway.IfAbsent())
	}
	s.Put(ctx, "z/metadata", []byte("{}"), gateway.IfAbsent())
	got, err := LookBelow(ctx, s, 10)
	if err != nil || !got.Truncated || got.Root != "" || got.Entries != 10 {
		t.Fatalf("LookBelow = %+v, %v", got, err)
	}
}

// FuzzRootOfKey: a root found below is a proper directory prefix of the
// key, never the directory itself, and never an operator's metadata.
func FuzzRootOfKey(f *testing.F) {
	for _, k := range []string{"a/metadata", "a/b/offsets/7", "offsets/7", "s/state/0/_metadata/metadata", "x/metadata/y", "", "/", "a//metadata", "/metadata", "//offsets/1"} {
		f.Add(k)
	}
	f.Fuzz(func(t *testing.T, key string) {
		root, ok := rootOfKey(key)
		if !ok {
			return
		}
		if root == "" || !strings.HasPrefix(key, root+"/") || operatorMetadataDir(root) {
			t.Fatalf("rootOfKey(%q) = %q", key, root)
		}
	})
}
