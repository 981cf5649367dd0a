package storetest

import (
	"bytes"
	"crypto/sha256"
	"io"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/ckgate/ckgate/gateway"
)

// testRoundTrip: Put, Get, Stat, GetStream and PutStream agree on bytes,
// size and version, and neither the caller's slice nor the returned one
// aliases the stored object.
func testRoundTrip(t *testing.T, s gateway.Store) {
	ctx := t.Context()
	data := []byte("offsets v1\n{\"batchWatermarkMs\":0}\n")
	v := mustPut(t, s, "offsets/0", data, gateway.None())
	wantObject(t, s, "offsets/0", data, v)

	// The store keeps its own copy on both sides.
	orig := bytes.Clone(data)
	data[0] = 'X'
	got, _ := mustGet(t, s, "offsets/0")
	got[1] = 'Y'
	wantObject(t, s, "offsets/0", orig, v)

	rc, a, err := s.GetStream(ctx, "offsets/0")
	if err != nil {
		t.Fatalf("get stream: %v", err)
	}
	streamed, err := io.ReadAll(rc)
	if cerr := rc.Close(); cerr != nil {
		t.Errorf("close stream: %v", cerr)
	}
	if err != nil {
		t.Fatalf("read stream: %v", err)
	}
	if !bytes.Equal(streamed, orig) {
		t.Errorf("get stream = %q, want %q", streamed, orig)
	}
	if a.Key != "offsets/0" || a.Size != int64(len(orig)) || a.Version != v {
		t.Errorf("get stream attrs = {Key:%q Size:%d Version:%q}, want {offsets/0 %d %q}", a.Key, a.Size, a.Version, len(orig), v)
	}

	sdata := "commits v1\n{}\n"
	sv, err := s.PutStream(ctx, "commits/0", strings.NewReader(sdata), gateway.IfAbsent())
	if err != nil {
		t.Fatalf("put stream: %v", err)
	}
	if sv == "" {
		t.Fatal("put stream: empty version")
	}
	wantObject(t, s, "commits/0", []byte(sdata), sv)
	wantObject(t, s, "offsets/0", orig, v) // untouched by the other key
}

// testVersionChanges: every successful write of different content yields a
// new version, and the version returned by Put is the one reads report.
// (Content-derived versions such as S3 ETags may repeat for equal bytes, so
// each write here differs.)
func testVersionChanges(t *testing.T, s gateway.Store) {
	ctx := t.Context()
	always := func(c gateway.Cond) func(gateway.Version) gateway.Cond {
		return func(gateway.Version) gateway.Cond { return c }
	}
	writes := []struct {
		stream bool
		cond   func(last gateway.Version) gateway.Cond
	}{
		{false, always(gateway.IfAbsent())},
		{true, always(gateway.None())},
		{false, always(gateway.None())},
		{false, gateway.IfMatch},
		{true, gateway.IfMatch},
		{false, gateway.IfMatch},
	}
	seen := map[gateway.Version]int{}
	var last gateway.Version
	for i, w := range writes {
		data := []byte(strings.Repeat("w", i+1))
		c := w.cond(last)
		var v gateway.Version
		var err error
		if w.stream {
			v, err = s.PutStream(ctx, "metadata", bytes.NewReader(data), c)
		} else {
			v, err = s.Put(ctx, "metadata", data, c)
		}
		if err != nil {
			t.Fatalf("write %d (%v): %v", i, c, err)
		}
		if j, dup := seen[v]; dup {
			t.Errorf("write %d returned version %q, already returned by write %d", i, v, j)
		}
		seen[v] = i
		wantObject(t, s, "metadata", data, v)
		last = v
	}
}

// testEmptyObject: a zero-byte object exists, has size 0 and blocks a
// create-only write.
func testEmptyObject(t *testing.T, s gateway.Store) {
	ctx := t.Context()
	v := mustPut(t, s, "empty", nil, gateway.IfAbsent())
	wantObject(t, s, "empty", []byte{}, v)
	_, err := s.Put(ctx, "empty", []byte("x"), gateway.IfAbsent())
	WantKeyKind(t, "put if-absent", err, "empty", gateway.ErrExists)

	sv, err := s.PutStream(ctx, "empty-stream", strings.NewReader(""), gateway.IfAbsent())
	if err != nil {
		t.Fatalf("put stream empty: %v", err)
	}
	wantObject(t, s, "empty-stream", []byte{}, sv)

	as := listAll(t, s, "empty")
	wantKeys(t, "list empty", keysOf(as), []string{"empty", "empty-stream"})
	for _, a := range as {
		if a.Size != 0 {
			t.Errorf("list: %q has size %d, want 0", a.Key, a.Size)
		}
	}
}

// onlyReader hides every method but Read, so the backend cannot seek or
// learn the length: PutStream must really stream.
type onlyReader struct{ r io.Reader }

func (o onlyReader) Read(p []byte) (int, error) { return o.r.Read(p) }

// testStreamLarge: a 5 MiB object streamed in and out keeps every byte.
func testStreamLarge(t *testing.T, s gateway.Store) {
	ctx := t.Context()
	const size = 5 << 20
	const key = "state/0/0/1.snapshot"
	in := sha256.New()
	src := io.TeeReader(io.LimitReader(rand.NewChaCha8([32]byte{'c', 'k'}), size), in)
	v, err := s.PutStream(ctx, key, onlyReader{src}, gateway.IfAbsent())
	if err != nil {
		t.Fatalf("put stream: %v", err)
	}

	rc, a, err := s.GetStream(ctx, key)
	if err != nil {
		t.Fatalf("get stream: %v", err)
	}
	out := sha256.New()
	n, err := io.Copy(out, rc)
	if cerr := rc.Close(); cerr != nil {
		t.Errorf("close stream: %v", cerr)
	}
	if err != nil {
		t.Fatalf("read stream after %d bytes: %v", n, err)
	}
	if n != size {
		t.Errorf("read %d bytes, want %d", n, size)
	}
	if !bytes.Equal(in.Sum(nil), out.Sum(nil)) {
		t.Error("streamed object differs from what was written")
	}
	if a.Size != size || a.Version != v {
		t.Errorf("get stream attrs = {Size:%d Version:%q}, want {%d %q}", a.Size, a.Version, size, v)
	}

	_, err = s.PutStream(ctx, key, strings.NewReader("small"), gateway.IfAbsent())
	WantKeyKind(t, "put stream if-absent", err, key, gateway.ErrExists)
	st, err := s.Stat(ctx, key)
	if err != nil || st.Size != size {
		t.Errorf("stat after refused overwrite = %+v, %v; want size %d", st, err, size)
	}
}
