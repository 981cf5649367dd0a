package checkpoint

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ckgate/ckgate/gateway"
	"github.com/ckgate/ckgate/gateway/memstore"
)

// readers are the Read* helpers: each reads one kind of file at key
// through a store. Every rejection must name the key.
var readers = []struct {
	key  string
	seed func(rel string) bool
	read func(ctx context.Context, st gateway.Store) error
}{
	{MetadataKey, func(rel string) bool { return strings.HasSuffix(rel, "/metadata") && !strings.Contains(rel, "/state/") },
		func(ctx context.Context, st gateway.Store) error { _, err := ReadStreamMetadata(ctx, st); return err }},
	{"offsets/7", under("/offsets"),
		func(ctx context.Context, st gateway.Store) error { _, err := ReadOffsets(ctx, st, 7); return err }},
	{"commits/7", func(rel string) bool { return under("/commits")(rel) || strings.HasPrefix(rel, "testCommitLog") },
		func(ctx context.Context, st gateway.Store) error { _, err := ReadCommit(ctx, st, 7); return err }},
	{"state/0/_metadata/metadata", func(rel string) bool {
		return strings.HasSuffix(rel, "_metadata/metadata") || under("_metadata/v2")(rel)
	},
		func(ctx context.Context, st gateway.Store) error {
			_, err := ReadOperatorMetadata(ctx, st, "state/0/_metadata/metadata")
			return err
		}},
	{"state/0/0/_metadata/schema", func(rel string) bool {
		return strings.HasSuffix(rel, "/_metadata/schema") || under("_stateSchema/default")(rel)
	}, func(ctx context.Context, st gateway.Store) error {
		_, err := ReadStateSchema(ctx, st, "state/0/0/_metadata/schema")
		return err
	}},
	{"sources/0/0", func(rel string) bool { return strings.HasPrefix(rel, "file-source-log") },
		func(ctx context.Context, st gateway.Store) error {
			_, _, err := ReadFileSourceLog(ctx, st, "sources/0")
			return err
		}},
	{"_spark_metadata/0", func(rel string) bool {
		return strings.HasPrefix(rel, "file-sink-log") && !strings.HasSuffix(rel, ".compact")
	},
		func(ctx context.Context, st gateway.Store) error {
			_, _, err := ReadFileSinkLog(ctx, st, SinkMetadataDir)
			return err
		}},
	{"_spark_metadata/9.compact", func(rel string) bool {
		return strings.HasPrefix(rel, "file-sink-log") && strings.HasSuffix(rel, ".compact")
	},
		func(ctx context.Context, st gateway.Store) error {
			_, _, err := ReadFileSinkLog(ctx, st, SinkMetadataDir)
			return err
		}},
}

// FuzzReaders puts fuzzed bytes at the key of one Read* helper (the first
// byte picks which) and checks it never panics and that every rejection is
// one of this package's error kinds and names the key.
func FuzzReaders(f *testing.F) {
	for i, r := range readers {
		sparkSeeds(f, byte(i), r.seed)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		if len(data) == 0 {
			return
		}
		r := readers[int(data[0])%len(readers)]
		ms := memstore.New()
		ctx := context.Background()
		if _, err := ms.Put(ctx, r.key, data[1:], gateway.None()); err != nil {
			t.Fatal(err)
		}
		err := r.read(ctx, ms)
		if err == nil {
			return
		}
		if !strings.Contains(err.Error(), r.key) {
			t.Fatalf("error does not name %s: %v", r.key, err)
		}
		if !errors.Is(err, ErrCorrupt) && !errors.Is(err, ErrUnsupportedVersion) {
			t.Fatalf("%s: error of no kind: %v", r.key, err)
		}
		var ke *KeyError
		if !errors.As(err, &ke) || ke.Key != r.key {
			t.Fatalf("%s: not a *KeyError naming it: %v", r.key, err)
		}
	})
}

// sparkSeeds adds, for every testdata file that match accepts, the input
// prefix + its bytes.
func sparkSeeds(f *testing.F, prefix byte, match func(rel string) bool) {
	f.Helper()
	n := 0
	err := filepath.WalkDir(sparkRoot, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || strings.HasPrefix(d.Name(), ".") {
			return err
		}
		rel, _ := filepath.Rel(sparkRoot, p)
		if !match(filepath.ToSlash(rel)) {
			return nil
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		f.Add(append([]byte{prefix}, b...))
		n++
		return nil
	})
	if err != nil {
		f.Fatal(err)
	}
	if n == 0 {
		f.Fatalf("no seed for reader %d", prefix)
	}
}
