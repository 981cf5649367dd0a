package s3store

import (
	"bytes"
	"errors"
	"net/http"
	"sync"
	"testing"

	"github.com/aws/smithy-go"

	"github.com/ckgate/ckgate/gateway"
	"github.com/ckgate/ckgate/gateway/storetest"
)

// wantStored fails unless key holds data at version v.
func wantStored(t *testing.T, s gateway.Store, key string, data []byte, v gateway.Version) {
	t.Helper()
	got, gv, err := s.Get(t.Context(), key)
	if err != nil {
		t.Fatalf("get %q: %v", key, err)
	}
	if !bytes.Equal(got, data) {
		t.Fatalf("get %q = %q, want %q", key, got, data)
	}
	if gv != v {
		t.Fatalf("get %q: version %q, want %q", key, gv, v)
	}
}

// TestAmbiguousCreate: the first attempt of a create-only PUT is applied
// but its answer is lost (a timeout), the SDK retries and S3 refuses the
// retry with 412. The write is ours: Put must succeed with its version.
func TestAmbiguousCreate(t *testing.T) {
	clean := newStore(t)
	ft := &faultTransport{match: isObjectPut, fault: lostAnswer, n: 1}
	s := New(newClient(t, ft.option), clean.d.bucket, "")

	data := []byte("offsets/0 written once")
	v, err := s.Put(t.Context(), "offsets/0", data, gateway.IfAbsent())
	if err != nil {
		t.Fatalf("ambiguous create: %v", err)
	}
	if ft.Matched() != 2 {
		t.Fatalf("%d PUTs sent, want 2 (the lost one and the SDK's retry)", ft.Matched())
	}
	wantStored(t, clean, "offsets/0", data, v)

	// The same for a compare-and-swap.
	ft.mu.Lock()
	ft.n, ft.matched = 1, 0
	ft.mu.Unlock()
	next := []byte("offsets/0 swapped once")
	v2, err := s.Put(t.Context(), "offsets/0", next, gateway.IfMatch(v))
	if err != nil {
		t.Fatalf("ambiguous CAS: %v", err)
	}
	if ft.Matched() != 2 {
		t.Fatalf("%d PUTs sent, want 2", ft.Matched())
	}
	wantStored(t, clean, "offsets/0", next, v2)
}

// TestAmbiguousCreateLostRace: the same timeout, but another writer had
// created the key: the refusal is a real lost race, ErrExists, and the
// other writer's object stays.
func TestAmbiguousCreateLostRace(t *testing.T) {
	clean := newStore(t)
	theirs := []byte("the other writer")
	v0, err := clean.Put(t.Context(), "commits/0", theirs, gateway.IfAbsent())
	if err != nil {
		t.Fatal(err)
	}
	ft := &faultTransport{match: isObjectPut, fault: lostAnswer, n: 1}
	s := New(newClient(t, ft.option), clean.d.bucket, "")
	_, err = s.Put(t.Context(), "commits/0", []byte("mine"), gateway.IfAbsent())
	storetest.WantKeyKind(t, "lost create", err, "commits/0", gateway.ErrExists)
	if ft.Matched() != 2 {
		t.Fatalf("%d PUTs sent, want 2", ft.Matched())
	}
	_, err = s.Put(t.Context(), "commits/0", []byte("mine"), gateway.IfMatch(`"0123456789abcdef0123456789abcdef"`))
	storetest.WantKeyKind(t, "stale CAS", err, "commits/0", gateway.ErrPrecondition)
	wantStored(t, clean, "commits/0", theirs, v0)
}

// TestAmbiguousCreateUnreadable: the first attempt is applied and its
// answer lost, the retry is refused with 412, and the read-back that would
// settle it is throttled: the outcome is unknown, so ErrUnknownOutcome, never
// a false ErrExists.
func TestAmbiguousCreateUnreadable(t *testing.T) {
	clean := newStore(t)
	var mu sync.Mutex
	puts := 0
	ft := &faultTransport{
		match: func(r *http.Request) bool { return isObjectPut(r) || isObjectGet(r) || r.Method == http.MethodHead },
		fault: func(r *http.Request) (*http.Response, error) {
			if r.Method == http.MethodGet || r.Method == http.MethodHead {
				return answer(http.StatusServiceUnavailable, "SlowDown")(r)
			}
			mu.Lock()
			puts++
			first := puts == 1
			mu.Unlock()
			if first {
				return lostAnswer(r)
			}
			return http.DefaultTransport.RoundTrip(r)
		},
		n: 1000,
	}
	s := New(newClient(t, ft.option), clean.d.bucket, "")
	_, err := s.Put(t.Context(), "k", []byte("y"), gateway.IfAbsent())
	storetest.WantKeyKind(t, "put with a failed read-back", err, "k", gateway.ErrUnknownOutcome)
	if errors.Is(err, gateway.ErrExists) {
		t.Fatalf("put with a failed read-back: %v is also ErrExists", err)
	}
	if puts != 2 {
		t.Fatalf("%d PUTs sent, want 2", puts)
	}
	// The write did happen.
	wantStored(t, clean, "k", []byte("y"), mustStat(t, clean, "k").Version)
}

func mustStat(t *testing.T, s gateway.Store, key string) gateway.Attrs {
	t.Helper()
	a, err := s.Stat(t.Context(), key)
	if err != nil {
		t.Fatalf("stat %q: %v", key, err)
	}
	return a
}

// TestConflictRetried: 409 ConditionalRequestConflict means a concurrent
// conditional write is in flight; it is retried, not taken for "exists".
func TestConflictRetried(t *testing.T) {
	clean := newStore(t)
	ft := &faultTransport{match: isObjectPut, fault: answer(http.StatusConflict, "ConditionalRequestConflict"), n: 3}
	s := New(newClient(t, ft.option), clean.d.bucket, "")
	s.d.backoff = 0

	v, err := s.Put(t.Context(), "commits/1", []byte("c1"), gateway.IfAbsent())
	if err != nil {
		t.Fatalf("put after three conflicts: %v", err)
	}
	if ft.Matched() != 4 {
		t.Fatalf("%d PUTs sent, want 4", ft.Matched())
	}
	wantStored(t, clean, "commits/1", []byte("c1"), v)

	// A conflict that never clears is ErrUnavailable, with the S3 error
	// reachable, and nothing is written.
	ft.mu.Lock()
	ft.n, ft.matched = 1000, 0
	ft.mu.Unlock()
	_, err = s.Put(t.Context(), "commits/2", []byte("c2"), gateway.IfAbsent())
	storetest.WantKeyKind(t, "endless conflict", err, "commits/2", gateway.ErrUnavailable)
	var ae smithy.APIError
	if !errors.As(err, &ae) || ae.ErrorCode() != "ConditionalRequestConflict" {
		t.Fatalf("endless conflict: S3 error not reachable in %v", err)
	}
	if ft.Matched() != s.d.conflictRetries+1 {
		t.Fatalf("%d PUTs sent, want %d", ft.Matched(), s.d.conflictRetries+1)
	}
	if _, err := clean.Stat(t.Context(), "commits/2"); !errors.Is(err, gateway.ErrNotFound) {
		t.Fatalf("stat after refused put: %v, want not found", err)
	}

	// Deletes retry conflicts too.
	dt := &faultTransport{match: isObjectDelete, fault: answer(http.StatusConflict, "ConditionalRequestConflict"), n: 2}
	d := New(newClient(t, dt.option), clean.d.bucket, "")
	d.d.backoff = 0
	if err := d.Delete(t.Context(), "commits/1", gateway.IfMatch(v)); err != nil {
		t.Fatalf("delete after two conflicts: %v", err)
	}
	if _, err := clean.Stat(t.Context(), "commits/1"); !errors.Is(err, gateway.ErrNotFound) {
		t.Fatalf("stat after delete: %v, want not found", err)
	}
}

// TestDeleteIsConditional: an unconditional Delete deletes with If-Match
// on the ETag it read, so an overwrite between the read and the delete is
// not removed blindly: the delete starts over and removes the new object.
func TestDeleteIsConditional(t *testing.T) {
	clean := newStore(t)
	if _, err := clean.Put(t.Context(), "k", []byte("old"), gateway.None()); err != nil {
		t.Fatal(err)
	}
	overwrote := false
	ft := &faultTransport{
		match: isObjectDelete,
		fault: func(r *http.Request) (*http.Response, error) {
			// Overwrite k after Delete read its ETag, then let the delete go.
			if _, err := clean.Put(r.Context(), "k", []byte("new"), gateway.None()); err != nil {
				return nil, err
			}
			overwrote = true
			return http.DefaultTransport.RoundTrip(r)
		},
		n: 1,
	}
	s := New(newClient(t, ft.option), clean.d.bucket, "")
	if err := s.Delete(t.Context(), "k", gateway.None()); err != nil {
		t.Fatalf("delete: %v", err)
	}
	if !overwrote || ft.Matched() != 2 {
		t.Fatalf("overwrote=%v, %d DELETEs sent; want an overwrite and 2 DELETEs (412, then the retry)", overwrote, ft.Matched())
	}
	if _, err := clean.Stat(t.Context(), "k"); !errors.Is(err, gateway.ErrNotFound) {
		t.Fatalf("stat after delete: %v, want not found", err)
	}
}
