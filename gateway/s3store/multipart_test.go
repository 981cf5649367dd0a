package s3store

import (
	"bytes"
	"context"
	"crypto/sha256"
	"errors"
	"io"
	"math/rand/v2"
	"net/http"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/service/s3"

	"github.com/ckgate/ckgate/gateway"
	"github.com/ckgate/ckgate/gateway/backendtest"
	"github.com/ckgate/ckgate/gateway/storetest"
)

// randomBytes returns n deterministic pseudo-random bytes.
func randomBytes(n int, seed uint64) []byte {
	b := make([]byte, n)
	r := rand.NewChaCha8([32]byte{byte(seed), byte(seed >> 8)})
	_, _ = r.Read(b)
	return b
}

// wantNoUploads fails when the bucket holds unfinished multipart uploads.
func wantNoUploads(t *testing.T, s *Store) {
	t.Helper()
	out, err := s.d.client.ListMultipartUploads(t.Context(), &s3.ListMultipartUploadsInput{Bucket: &s.d.bucket})
	if err != nil {
		t.Fatalf("list multipart uploads: %v", err)
	}
	if len(out.Uploads) != 0 {
		t.Fatalf("%d multipart uploads left behind", len(out.Uploads))
	}
}

// wantStream fails unless key holds data at version v, read as a stream.
func wantStream(t *testing.T, s gateway.Store, key string, data []byte, v gateway.Version) {
	t.Helper()
	rc, a, err := s.GetStream(t.Context(), key)
	if err != nil {
		t.Fatalf("get stream %q: %v", key, err)
	}
	defer rc.Close()
	h := sha256.New()
	n, err := io.Copy(h, rc)
	if err != nil {
		t.Fatalf("read %q: %v", key, err)
	}
	if n != int64(len(data)) || !bytes.Equal(h.Sum(nil), sha256Of(data)) {
		t.Fatalf("get stream %q: %d bytes that differ from the %d written", key, n, len(data))
	}
	if a.Version != v || a.Size != int64(len(data)) {
		t.Fatalf("get stream %q: attrs %+v, want size %d version %q", key, a, len(data), v)
	}
	st, err := s.Stat(t.Context(), key)
	if err != nil || st.Version != v || st.Size != int64(len(data)) {
		t.Fatalf("stat %q = %+v, %v; want size %d version %q", key, st, err, len(data), v)
	}
}

func sha256Of(b []byte) []byte {
	h := sha256.Sum256(b)
	return h[:]
}

// TestMultipartIfAbsent: a 20 MiB stream goes up as a 3-part multipart
// upload (8 MiB parts), create-only; a second create-only stream gets
// ErrExists and leaves no upload behind; CAS streams work the same way.
func TestMultipartIfAbsent(t *testing.T) {
	s := newStore(t)
	ctx := t.Context()
	const size = 20 << 20
	first := randomBytes(size, 1)
	v, err := s.PutStream(ctx, "state/0/1/2.snapshot", backendtest.StreamOnly(bytes.NewReader(first)), gateway.IfAbsent())
	if err != nil {
		t.Fatalf("put stream: %v", err)
	}
	if !strings.HasSuffix(string(v), `-3"`) {
		t.Errorf("version %q is not the ETag of a 3-part upload", v)
	}
	wantStream(t, s, "state/0/1/2.snapshot", first, v)

	second := randomBytes(size, 2)
	_, err = s.PutStream(ctx, "state/0/1/2.snapshot", backendtest.StreamOnly(bytes.NewReader(second)), gateway.IfAbsent())
	storetest.WantKeyKind(t, "second create-only stream", err, "state/0/1/2.snapshot", gateway.ErrExists)
	wantStream(t, s, "state/0/1/2.snapshot", first, v)
	wantNoUploads(t, s)

	v2, err := s.PutStream(ctx, "state/0/1/2.snapshot", backendtest.StreamOnly(bytes.NewReader(second)), gateway.IfMatch(v))
	if err != nil {
		t.Fatalf("CAS stream: %v", err)
	}
	wantStream(t, s, "state/0/1/2.snapshot", second, v2)
	_, err = s.PutStream(ctx, "state/0/1/2.snapshot", backendtest.StreamOnly(bytes.NewReader(first)), gateway.IfMatch(v))
	storetest.WantKeyKind(t, "stale CAS stream", err, "state/0/1/2.snapshot", gateway.ErrPrecondition)
	_, err = s.PutStream(ctx, "state/gone", backendtest.StreamOnly(bytes.NewReader(first)), gateway.IfMatch(v))
	storetest.WantKeyKind(t, "CAS stream on a missing key", err, "state/gone", gateway.ErrPrecondition)
	wantStream(t, s, "state/0/1/2.snapshot", second, v2)
	wantNoUploads(t, s)

	// The ETag the backend predicts for a multipart upload is the stored one.
	if got := listVersions(t, s, "state/"); got["state/0/1/2.snapshot"] != v2 {
		t.Errorf("list reports version %q, put returned %q", got["state/0/1/2.snapshot"], v2)
	}
}

func listVersions(t *testing.T, s gateway.Store, prefix string) map[string]gateway.Version {
	t.Helper()
	out := map[string]gateway.Version{}
	for a, err := range s.List(t.Context(), prefix) {
		if err != nil {
			t.Fatalf("list: %v", err)
		}
		out[a.Key] = a.Version
	}
	return out
}

// TestPutStreamPartBoundaries: streams of exactly one part, one part and a
// byte, and exactly two parts round-trip.
func TestPutStreamPartBoundaries(t *testing.T) {
	s := newStore(t)
	s.d.partSize = MinPartSize
	for i, n := range []int{MinPartSize - 1, MinPartSize, MinPartSize + 1, 2 * MinPartSize} {
		data := randomBytes(n, uint64(10+i))
		key := "b/" + string(rune('a'+i))
		v, err := s.PutStream(t.Context(), key, backendtest.StreamOnly(bytes.NewReader(data)), gateway.IfAbsent())
		if err != nil {
			t.Fatalf("put stream of %d bytes: %v", n, err)
		}
		wantStream(t, s, key, data, v)
	}
	wantNoUploads(t, s)
}

var errSource = errors.New("source broke (injected)")

// TestPutStreamAborted: a context cancelled or a source that fails in the
// middle of a multipart upload leaves no object and no upload behind.
func TestPutStreamAborted(t *testing.T) {
	s := newStore(t)
	s.d.partSize = MinPartSize
	data := randomBytes(3*MinPartSize+1, 3)

	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	_, err := s.PutStream(ctx, "cancelled", backendtest.CancelAfter(bytes.NewReader(data), 2*MinPartSize+10, cancel), gateway.IfAbsent())
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("put stream with a context cancelled mid-way: %v, want context.Canceled", err)
	}
	if _, err := s.Stat(t.Context(), "cancelled"); !errors.Is(err, gateway.ErrNotFound) {
		t.Fatalf("stat after a cancelled stream: %v, want not found", err)
	}

	_, err = s.PutStream(t.Context(), "broken", backendtest.FailAfter(bytes.NewReader(data), 2*MinPartSize+10, errSource), gateway.None())
	if !errors.Is(err, errSource) {
		t.Fatalf("put stream from a failing source: %v, want the source's error", err)
	}
	var ge *gateway.Error
	if !errors.As(err, &ge) || ge.Key != "broken" {
		t.Fatalf("put stream from a failing source: %v does not name the key", err)
	}
	if _, err := s.Stat(t.Context(), "broken"); !errors.Is(err, gateway.ErrNotFound) {
		t.Fatalf("stat after a broken stream: %v, want not found", err)
	}
	wantNoUploads(t, s)
}

// TestAmbiguousComplete: CompleteMultipartUpload is applied but its answer
// is lost; the SDK's retry finds the upload completed. PutStream succeeds
// with the stored object's version.
func TestAmbiguousComplete(t *testing.T) {
	clean := newStore(t)
	ft := &faultTransport{match: isComplete, fault: lostAnswer, n: 1}
	s := New(newClient(t, ft.option), clean.d.bucket, "")
	s.d.partSize = MinPartSize
	data := randomBytes(2*MinPartSize+7, 4)
	v, err := s.PutStream(t.Context(), "big", backendtest.StreamOnly(bytes.NewReader(data)), gateway.IfAbsent())
	if err != nil {
		t.Fatalf("put stream with a lost completion answer: %v", err)
	}
	if ft.Matched() < 2 {
		t.Fatalf("%d completions sent, want the lost one and a retry", ft.Matched())
	}
	wantStream(t, clean, "big", data, v)
	wantNoUploads(t, clean)

	// A real lost race on the same path is still ErrExists.
	ft.mu.Lock()
	ft.n, ft.matched = 1, 0
	ft.mu.Unlock()
	_, err = s.PutStream(t.Context(), "big", backendtest.StreamOnly(bytes.NewReader(randomBytes(2*MinPartSize+7, 5))), gateway.IfAbsent())
	storetest.WantKeyKind(t, "lost create after a lost completion answer", err, "big", gateway.ErrExists)
	wantStream(t, clean, "big", data, v)
	wantNoUploads(t, clean)
}

// TestMultipartConflictRetried: 409 on CompleteMultipartUpload is retried
// with the same upload.
func TestMultipartConflictRetried(t *testing.T) {
	clean := newStore(t)
	ft := &faultTransport{match: isComplete, fault: answer(http.StatusConflict, "ConditionalRequestConflict"), n: 2}
	s := New(newClient(t, ft.option), clean.d.bucket, "")
	s.d.partSize = MinPartSize
	s.d.backoff = 0
	data := randomBytes(MinPartSize+1, 6)
	v, err := s.PutStream(t.Context(), "k", backendtest.StreamOnly(bytes.NewReader(data)), gateway.IfAbsent())
	if err != nil {
		t.Fatalf("put stream after two conflicts: %v", err)
	}
	if ft.Matched() != 3 {
		t.Fatalf("%d completions sent, want 3", ft.Matched())
	}
	wantStream(t, clean, "k", data, v)
}
