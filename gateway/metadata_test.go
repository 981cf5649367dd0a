package gateway_test

import (
	"context"
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ckgate/ckgate/gateway"
	"github.com/ckgate/ckgate/gateway/memstore"
)

func TestParseMetadataID(t *testing.T) {
	for in, want := range map[string]string{
		`{"id":"dddc5e7f-1e71-454c-8362-de184444fb5a"}`: "dddc5e7f-1e71-454c-8362-de184444fb5a",
		`{"id":""}`:                     "",
		"{\n  \"id\" : \"q\"\n}\n":      "q", // Spark 2.1 pretty-printed it
		`{"id":"q","future":{"x":[1]}}`: "q",
		"  {\"id\":\"q\"}  \n":          "q",
	} {
		got, err := gateway.ParseMetadataID([]byte(in))
		if err != nil || got != want {
			t.Errorf("ParseMetadataID(%s) = %q, %v", in, got, err)
		}
	}
	for _, in := range []string{``, `   `, `[]`, `null`, `"q"`, `{}`, `{"id":1}`, `{"id":null}`,
		`{"id":"a"} {"id":"b"}`, `{"id":"a"} }`, `{"id":"a"} x`, `{"id":"a"`} {
		if id, err := gateway.ParseMetadataID([]byte(in)); err == nil || id != "" {
			t.Errorf("ParseMetadataID(%q) = %q, %v; want an error", in, id, err)
		}
	}
	// a file cut short (an empty one included) says so
	for _, in := range []string{``, `{"id":"a"`, `{"id":`} {
		if _, err := gateway.ParseMetadataID([]byte(in)); !errors.Is(err, io.ErrUnexpectedEOF) {
			t.Errorf("ParseMetadataID(%q): %v, want io.ErrUnexpectedEOF", in, err)
		}
	}
}

// TestParseMetadataIDRealCheckpoints: every checkpoint root's metadata in
// testdata (Spark 2.1 to 4.0, Delta-fed queries) gives its query id.
func TestParseMetadataIDRealCheckpoints(t *testing.T) {
	n := 0
	err := filepath.WalkDir(filepath.Join("..", "testdata"), func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || d.Name() != gateway.MetadataKey ||
			strings.Contains(filepath.ToSlash(p), "/state/") || strings.Contains(p, "_metadata") {
			return err
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		id, err := gateway.ParseMetadataID(data)
		if err != nil || len(id) != 36 {
			t.Errorf("%s: %q, %v; want a query uuid", p, id, err)
		}
		n++
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if n < 20 {
		t.Fatalf("read %d metadata files, want the 20+ in testdata", n)
	}
}

// TestReadMetadataID: no file is a new checkpoint, a bad one is
// ErrInvalidKey naming it, a store failure keeps its kind.
func TestReadMetadataID(t *testing.T) {
	ctx := context.Background()
	ms := memstore.New()
	if id, err := gateway.ReadMetadataID(ctx, ms); id != "" || err != nil {
		t.Fatalf("no metadata: %q, %v", id, err)
	}
	if _, err := ms.Put(ctx, gateway.MetadataKey, []byte(`{"id":"q1"}`), gateway.IfAbsent()); err != nil {
		t.Fatal(err)
	}
	if id, err := gateway.ReadMetadataID(ctx, ms); id != "q1" || err != nil {
		t.Fatalf("metadata: %q, %v; want q1", id, err)
	}
	if _, err := ms.Put(ctx, gateway.MetadataKey, []byte(`{}`), gateway.None()); err != nil {
		t.Fatal(err)
	}
	_, err := gateway.ReadMetadataID(ctx, ms)
	var ge *gateway.Error
	if !errors.Is(err, gateway.ErrInvalidKey) || !errors.As(err, &ge) || ge.Key != gateway.MetadataKey {
		t.Fatalf("metadata without an id: %v, want ErrInvalidKey naming %s", err, gateway.MetadataKey)
	}
	failing := gateway.Intercept(ms, func(ctx context.Context, c gateway.Call, next func(context.Context) error) error {
		return gateway.E(string(c.Op), c.Key, gateway.ErrPermission, nil)
	})
	if _, err := gateway.ReadMetadataID(ctx, failing); !errors.Is(err, gateway.ErrPermission) || errors.Is(err, gateway.ErrInvalidKey) {
		t.Fatalf("denied read: %v, want ErrPermission", err)
	}
}
