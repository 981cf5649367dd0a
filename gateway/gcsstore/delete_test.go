package gcsstore

import (
	"net/http"
	"sync"
	"testing"

	"cloud.google.com/go/storage"

	"github.com/ckgate/ckgate/gateway"
	"github.com/ckgate/ckgate/gateway/storetest"
)

// TestEmulatorIgnoresDeleteConditions documents the one deviation of
// fake-gcs-server the conformance run works around: it deletes an object
// even when the request's ifGenerationMatch does not hold, where Cloud
// Storage answers 412 conditionNotMet
// (https://cloud.google.com/storage/docs/json_api/v1/objects/delete).
// The suite therefore runs with emulator.GCSDeleteConditions, which applies
// the documented check in front of the emulator. If this test fails, the
// emulator has been fixed: drop the shim from newClient.
func TestEmulatorIgnoresDeleteConditions(t *testing.T) {
	client := newRawClient(t, http.DefaultTransport)
	s := newStoreOn(t, client, "")
	v1, err := s.Put(t.Context(), "k", []byte("one"), gateway.None())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Put(t.Context(), "k", []byte("two"), gateway.None()); err != nil {
		t.Fatal(err)
	}
	stale, _ := generation(v1)
	err = client.Bucket(s.BucketName()).Object("k").If(storage.Conditions{GenerationMatch: stale}).Delete(t.Context())
	if err != nil {
		t.Fatalf("fake-gcs-server now refuses a delete with a stale ifGenerationMatch (%v): "+
			"it honours delete preconditions; remove emulator.GCSDeleteConditions from the tests", err)
	}
}

// recorder keeps the query of every object DELETE.
type recorder struct {
	base    http.RoundTripper
	mu      sync.Mutex
	queries []map[string][]string
}

func (r *recorder) RoundTrip(req *http.Request) (*http.Response, error) {
	if isObjectDelete(req) {
		r.mu.Lock()
		r.queries = append(r.queries, req.URL.Query())
		r.mu.Unlock()
	}
	return r.base.RoundTrip(req)
}

// TestDeleteSendsGenerationMatch: the conditional delete is the service's
// check, not the store's: the request carries ifGenerationMatch with the
// version, and an unconditional delete carries none.
func TestDeleteSendsGenerationMatch(t *testing.T) {
	rec := &recorder{base: http.DefaultTransport}
	s := newStoreOn(t, newClient(t, rec), "")
	v, err := s.Put(t.Context(), "a", []byte("a"), gateway.None())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Put(t.Context(), "b", []byte("b"), gateway.None()); err != nil {
		t.Fatal(err)
	}
	if err := s.Delete(t.Context(), "a", gateway.IfMatch(v)); err != nil {
		t.Fatal(err)
	}
	if err := s.Delete(t.Context(), "b", gateway.None()); err != nil {
		t.Fatal(err)
	}
	if len(rec.queries) != 2 {
		t.Fatalf("%d DELETE requests, want 2", len(rec.queries))
	}
	if got := rec.queries[0]["ifGenerationMatch"]; len(got) != 1 || got[0] != string(v) {
		t.Errorf("conditional delete: ifGenerationMatch = %q, want %q", got, v)
	}
	if got, ok := rec.queries[1]["ifGenerationMatch"]; ok {
		t.Errorf("unconditional delete: ifGenerationMatch = %q, want none", got)
	}
}

// TestDeleteBadVersion: a version that is no generation matches nothing.
func TestDeleteBadVersion(t *testing.T) {
	s := newStore(t)
	if _, err := s.Put(t.Context(), "k", []byte("k"), gateway.None()); err != nil {
		t.Fatal(err)
	}
	for _, v := range []gateway.Version{"abc", "-3", "0", "1.5"} {
		storetest.WantKeyKind(t, "", s.Delete(t.Context(), "k", gateway.IfMatch(v)), "k", gateway.ErrPrecondition)
		_, err := s.Put(t.Context(), "k", []byte("x"), gateway.IfMatch(v))
		storetest.WantKeyKind(t, "", err, "k", gateway.ErrPrecondition)
	}
	wantObject(t, s, "k", "k", "")
}
