package gcsstore

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"cloud.google.com/go/storage"
	"google.golang.org/api/option"

	"github.com/ckgate/ckgate/gateway"
	"github.com/ckgate/ckgate/gateway/backendtest"
)

// isBucketGet matches buckets.get of any bucket.
func isBucketGet(req *http.Request) bool {
	return req.Method == http.MethodGet && strings.HasPrefix(req.URL.Path, "/storage/v1/b/") &&
		strings.Count(strings.TrimPrefix(req.URL.Path, "/storage/v1/b/"), "/") == 0
}

// bucketFields passes every request to the emulator and adds fields to its
// buckets.get answers: what Cloud Storage would report where
// fake-gcs-server keeps nothing (lifecycle, soft delete, retention).
func bucketFields(fields map[string]any) http.RoundTripper {
	return roundTripFunc(func(req *http.Request) (*http.Response, error) {
		resp, err := http.DefaultTransport.RoundTrip(req)
		if err != nil || !isBucketGet(req) || resp.StatusCode != http.StatusOK {
			return resp, err
		}
		defer resp.Body.Close()
		var m map[string]any
		if err := json.NewDecoder(resp.Body).Decode(&m); err != nil {
			return nil, err
		}
		for k, v := range fields {
			m[k] = v
		}
		b, err := json.Marshal(m)
		if err != nil {
			return nil, err
		}
		resp.Body, resp.ContentLength = io.NopCloser(bytes.NewReader(b)), int64(len(b))
		resp.Header.Del("Content-Length")
		return resp, nil
	})
}

// TestBucketLifecycleEmulator: fake-gcs-server v1.56.1 accepts a bucket
// update with a lifecycle (and soft delete and retention policies) and
// drops them; it keeps versioning. Its answer without rules is no evidence
// of "no rules": unreadable, never empty.
func TestBucketLifecycleEmulator(t *testing.T) {
	s := newStore(t)
	ctx := t.Context()
	a, err := s.d.bucket.Update(ctx, storage.BucketAttrsToUpdate{
		VersioningEnabled: true,
		Lifecycle: &storage.Lifecycle{Rules: []storage.LifecycleRule{{
			Action:    storage.LifecycleAction{Type: storage.DeleteAction},
			Condition: storage.LifecycleCondition{AgeInDays: 7, MatchesPrefix: []string{"team/"}},
		}}},
		SoftDeletePolicy: &storage.SoftDeletePolicy{RetentionDuration: 7 * 24 * time.Hour},
	})
	if err != nil {
		t.Fatalf("bucket update: %v", err)
	}
	if len(a.Lifecycle.Rules) != 0 || a.SoftDeletePolicy != nil || !a.VersioningEnabled || a.ProjectNumber != 0 {
		t.Fatalf("fake-gcs-server kept lifecycle %+v, soft delete %+v, versioning %v, project %d: "+
			"if it keeps lifecycle rules now, test reading them here", a.Lifecycle, a.SoftDeletePolicy, a.VersioningEnabled, a.ProjectNumber)
	}
	b, err := s.BucketLifecycle(ctx)
	if b != nil {
		t.Errorf("bucket lifecycle returned %s with its error", b)
	}
	backendtest.WantErrorSays(t, err, gateway.ErrUnsupported, strconv.Quote(s.BucketName()), callBucketsGet, EmulatorHostEnv+"="+emu.Host, "no evidence")

	// Through endpoint= rather than the environment: the answer itself
	// gives the emulator away (no project number).
	t.Setenv(EmulatorHostEnv, "")
	c, err := storage.NewClient(ctx, option.WithEndpoint(emu.Endpoint), option.WithoutAuthentication())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	_, err = New(c, s.BucketName(), "").BucketLifecycle(ctx)
	backendtest.WantErrorSays(t, err, gateway.ErrUnsupported, strconv.Quote(s.BucketName()), callBucketsGet, "project")
}

// TestBucketLifecycleResource: what the service reports comes out as a
// JSON API bucket resource, through decorators; an emulator's rules are
// used.
func TestBucketLifecycleResource(t *testing.T) {
	rt := bucketFields(map[string]any{
		"lifecycle": map[string]any{"rule": []any{
			map[string]any{"action": map[string]any{"type": "Delete"}, "condition": map[string]any{"age": 7, "matchesPrefix": []string{"team/"}}},
			map[string]any{"action": map[string]any{"type": "SetStorageClass", "storageClass": "COLDLINE"},
				"condition": map[string]any{"age": 0, "isLive": false, "createdBefore": "2024-01-02", "numNewerVersions": 3}},
		}},
		"softDeletePolicy": map[string]any{"retentionDurationSeconds": "0", "effectiveTime": "2024-04-05T10:00:00.000Z"},
		"retentionPolicy":  map[string]any{"retentionPeriod": "86400", "isLocked": true, "effectiveTime": "2024-04-05T10:00:00.000Z"},
	})
	s := newStoreOn(t, newClient(t, rt), "team/q1")
	b := backendtest.BucketLifecycleThroughDecorator(t, s)
	var got map[string]any
	if err := json.Unmarshal(b, &got); err != nil {
		t.Fatal(err)
	}
	want := map[string]any{
		"kind": "storage#bucket", "id": s.BucketName(), "name": s.BucketName(),
		"lifecycle": map[string]any{"rule": []any{
			map[string]any{"action": map[string]any{"type": "Delete"}, "condition": map[string]any{"age": 7.0, "matchesPrefix": []any{"team/"}}},
			map[string]any{"action": map[string]any{"type": "SetStorageClass", "storageClass": "COLDLINE"},
				"condition": map[string]any{"age": 0.0, "isLive": false, "createdBefore": "2024-01-02", "numNewerVersions": 3.0}},
		}},
		"versioning":       map[string]any{"enabled": false},
		"softDeletePolicy": map[string]any{"retentionDurationSeconds": "0"},
		"retentionPolicy":  map[string]any{"retentionPeriod": "86400", "isLocked": true},
	}
	wb, _ := json.Marshal(want)
	gb, _ := json.Marshal(got)
	if !bytes.Equal(gb, wb) {
		t.Errorf("resource\n%s\nwant\n%s", gb, wb)
	}
}

// TestBucketLifecycleNoRules: Cloud Storage (a project number, no
// emulator) leaves the lifecycle out of a bucket without one: no rules.
func TestBucketLifecycleNoRules(t *testing.T) {
	rt := bucketFields(map[string]any{"projectNumber": "123456789012"})
	s := newStoreOn(t, newClient(t, rt), "")
	t.Setenv(EmulatorHostEnv, "")
	c, err := storage.NewClient(t.Context(), option.WithEndpoint(emu.Endpoint), option.WithoutAuthentication(),
		option.WithHTTPClient(&http.Client{Transport: rt}))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	b, err := New(c, s.BucketName(), "").BucketLifecycle(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	var got struct {
		ProjectNumber string `json:"projectNumber"`
		Lifecycle     struct {
			Rule []any `json:"rule"`
		} `json:"lifecycle"`
		Versioning *struct {
			Enabled bool `json:"enabled"`
		} `json:"versioning"`
	}
	if err := json.Unmarshal(b, &got); err != nil {
		t.Fatal(err)
	}
	if got.ProjectNumber != "123456789012" || got.Lifecycle.Rule == nil || len(got.Lifecycle.Rule) != 0 || got.Versioning == nil || got.Versioning.Enabled {
		t.Errorf("resource %s: want project 123456789012, \"rule\": [], versioning off", b)
	}
	if strings.Contains(string(b), "softDeletePolicy") || strings.Contains(string(b), "retentionPolicy") {
		t.Errorf("resource %s reports policies the answer did not carry", b)
	}
}

func TestBucketLifecycleRefused(t *testing.T) {
	s := newStore(t)
	rt := roundTripFunc(func(req *http.Request) (*http.Response, error) {
		if isBucketGet(req) {
			return (&statusTransport{code: http.StatusForbidden}).RoundTrip(req)
		}
		return http.DefaultTransport.RoundTrip(req)
	})
	_, err := New(newClient(t, rt), s.BucketName(), "").BucketLifecycle(t.Context())
	backendtest.WantErrorSays(t, err, gateway.ErrPermission, strconv.Quote(s.BucketName()), callBucketsGet, "403")
	if errors.Is(err, gateway.ErrNotFound) || errors.Is(err, gateway.ErrUnsupported) {
		t.Errorf("a refusal must be only a refusal: %v", err)
	}
}

func TestBucketLifecycleNoBucket(t *testing.T) {
	s := New(newClient(t, nil), bucketName(), "")
	_, err := s.BucketLifecycle(t.Context())
	backendtest.WantErrorSays(t, err, gateway.ErrNotFound, strconv.Quote(s.BucketName()), callBucketsGet)
}
