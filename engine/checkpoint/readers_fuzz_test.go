package checkpoint

import (
	"context"
	"errors"
	"io"
	"path"
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

// oversized announces every object as far larger than any checkpoint
// file may be (1 TiB), as a store holding a giant would.
type oversized struct{ gateway.Store }

func (o oversized) GetStream(ctx context.Context, key string) (io.ReadCloser, gateway.Attrs, error) {
	rc, a, err := o.Store.GetStream(ctx, key)
	a.Size = 1 << 40
	return rc, a, err
}

// FuzzReaders puts fuzzed bytes at the key of one Read* helper (the low 7
// bits of the first byte pick which) and checks it never panics and that
// every rejection is one of this package's error kinds and names the key.
// With the high bit set the store announces the object as 1 TiB: a helper
// that reads it whole must refuse it (gateway.ErrTooLarge naming the key)
// without reading it; the compactible logs, streamed by line, read it.
func FuzzReaders(f *testing.F) {
	for i, r := range readers {
		sparkSeeds(f, byte(i), r.seed)
		f.Add(append([]byte{byte(i) | 0x80}, "v1\n{}"...))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		if len(data) == 0 {
			return
		}
		r := readers[int(data[0]&0x7f)%len(readers)]
		ms := memstore.New()
		ctx := context.Background()
		if _, err := ms.Put(ctx, r.key, data[1:], gateway.None()); err != nil {
			t.Fatal(err)
		}
		var st gateway.Store = ms
		giant := data[0]&0x80 != 0
		if giant {
			st = oversized{ms}
		}
		err := r.read(ctx, st)
		streamed := strings.HasPrefix(r.key, "sources/") || strings.HasPrefix(r.key, SinkMetadataDir)
		if giant && !streamed {
			var ge *gateway.Error
			if !errors.Is(err, gateway.ErrTooLarge) || !errors.As(err, &ge) || ge.Key != r.key {
				t.Fatalf("%s announced as 1 TiB: %v, want ErrTooLarge naming it", r.key, err)
			}
			return
		}
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
	walkSpark(f, func(rel string, b []byte) {
		if !strings.HasPrefix(path.Base(rel), ".") && match(rel) {
			f.Add(append([]byte{prefix}, b...))
			n++
		}
	})
	if n == 0 {
		f.Fatalf("no seed for reader %d", prefix)
	}
}
