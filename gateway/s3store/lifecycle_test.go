package s3store

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"strconv"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"

	"github.com/ckgate/ckgate/gateway"
	"github.com/ckgate/ckgate/gateway/backendtest"
	"github.com/ckgate/ckgate/internal/emulator"
)

// isConfigGet matches a GET of the bucket subresource sub (lifecycle,
// versioning, object-lock).
func isConfigGet(sub string) func(*http.Request) bool {
	return func(r *http.Request) bool { return r.Method == http.MethodGet && r.URL.Query().Has(sub) }
}

// answerXML answers 200 with an S3 XML body and headers, without sending
// the request: what S3 itself would say where versitygw cannot.
func answerXML(body string, header ...string) func(*http.Request) (*http.Response, error) {
	return func(r *http.Request) (*http.Response, error) {
		resp := emulator.Response(r, http.StatusOK, "application/xml", body)
		for i := 0; i+1 < len(header); i += 2 {
			resp.Header.Set(header[i], header[i+1])
		}
		return resp, nil
	}
}

// storeWith returns a store on a new bucket of the emulator whose client
// sends the requests ft matches to ft's fault (every one of them).
func storeWith(t *testing.T, ft *faultTransport) *Store {
	t.Helper()
	ft.n = 1 << 30
	return newStoreOn(t, newClient(t, ft.option), "team/q1")
}

// readDoc calls BucketLifecycle and decodes its document.
func readDoc(t *testing.T, s *Store) map[string]any {
	t.Helper()
	b, err := s.BucketLifecycle(t.Context())
	if err != nil {
		t.Fatalf("bucket lifecycle: %v", err)
	}
	var doc map[string]any
	if err := json.Unmarshal(b, &doc); err != nil {
		t.Fatalf("bucket lifecycle %s: %v", b, err)
	}
	return doc
}

// TestBucketLifecycleNotImplemented: versitygw v1.8.0 implements neither
// PutBucketLifecycleConfiguration nor GetBucketLifecycleConfiguration
// (501 NotImplemented). The configuration is then unreadable, never empty.
func TestBucketLifecycleNotImplemented(t *testing.T) {
	s := newStore(t)
	ctx := t.Context()
	_, err := s.d.client.PutBucketLifecycleConfiguration(ctx, &s3.PutBucketLifecycleConfigurationInput{
		Bucket: &s.d.bucket,
		LifecycleConfiguration: &types.BucketLifecycleConfiguration{Rules: []types.LifecycleRule{{
			ID: aws.String("expire-checkpoints"), Status: types.ExpirationStatusEnabled,
			Filter:     &types.LifecycleRuleFilter{Prefix: aws.String("team/")},
			Expiration: &types.LifecycleExpiration{Days: aws.Int32(7)},
		}}},
	})
	if errorCode(err) != "NotImplemented" {
		t.Fatalf("put lifecycle on versitygw: %v; if the emulator keeps lifecycle rules now, test reading them here", err)
	}
	b, err := s.BucketLifecycle(ctx)
	if b != nil {
		t.Errorf("bucket lifecycle returned %s with its error", b)
	}
	backendtest.WantErrorSays(t, err, gateway.ErrUnsupported, strconv.Quote(s.d.bucket), callLifecycle, "501 NotImplemented", "does not implement")
	if errors.Is(err, gateway.ErrNotFound) {
		t.Errorf("not implemented must not read as not found: %v", err)
	}
}

// TestBucketLifecycleNone: NoSuchLifecycleConfiguration is a bucket with no
// rules, readable. Versioning and object lock come from versitygw itself:
// never enabled, no lock configuration.
func TestBucketLifecycleNone(t *testing.T) {
	ft := &faultTransport{match: isConfigGet("lifecycle"), fault: answer(http.StatusNotFound, codeNoLifecycle)}
	s := storeWith(t, ft)
	doc := readDoc(t, s)
	if ft.Matched() != 1 {
		t.Fatalf("%d lifecycle requests, want 1", ft.Matched())
	}
	rules, ok := doc["Rules"].([]any)
	if !ok || len(rules) != 0 {
		t.Errorf("Rules = %#v, want []", doc["Rules"])
	}
	if st, ok := doc["Status"]; !ok || st != "" {
		t.Errorf("Status = %#v (present %v), want \"\" (read, never enabled)", st, ok)
	}
	if ol, ok := doc["ObjectLockConfiguration"].(map[string]any); !ok || len(ol) != 0 {
		t.Errorf("ObjectLockConfiguration = %#v, want {}", doc["ObjectLockConfiguration"])
	}
}

// TestBucketLifecycleRefused: a refused read is a permission error, not
// "no rules" and not "no bucket".
func TestBucketLifecycleRefused(t *testing.T) {
	s := storeWith(t, &faultTransport{match: isConfigGet("lifecycle"), fault: answer(http.StatusForbidden, "AccessDenied")})
	_, err := s.BucketLifecycle(t.Context())
	backendtest.WantErrorSays(t, err, gateway.ErrPermission, strconv.Quote(s.d.bucket), callLifecycle, "403 AccessDenied")
	if errors.Is(err, gateway.ErrNotFound) {
		t.Errorf("a refusal must not read as not found: %v", err)
	}
}

func TestBucketLifecycleNoBucket(t *testing.T) {
	s := New(newClient(t), bucketName(), "")
	_, err := s.BucketLifecycle(t.Context())
	backendtest.WantErrorSays(t, err, gateway.ErrNotFound, strconv.Quote(s.d.bucket), callLifecycle, "NoSuchBucket")
}

// TestBucketLifecycleRules: the rules S3 returns come out in the AWS CLI's
// JSON shape, absent members absent (never null), through decorators.
func TestBucketLifecycleRules(t *testing.T) {
	const xml = `<?xml version="1.0" encoding="UTF-8"?>
<LifecycleConfiguration xmlns="http://s3.amazonaws.com/doc/2006-03-01/">
<Rule><ID>expire-checkpoints</ID><Filter><Prefix>team/</Prefix></Filter><Status>Enabled</Status><Expiration><Days>7</Days></Expiration></Rule>
<Rule><ID>everything</ID><Filter></Filter><Status>Disabled</Status><Transition><Days>30</Days><StorageClass>GLACIER</StorageClass></Transition></Rule>
</LifecycleConfiguration>`
	s := storeWith(t, &faultTransport{match: isConfigGet("lifecycle"), fault: answerXML(xml, "x-amz-transition-default-minimum-object-size", "all_storage_classes_128K")})
	b := backendtest.BucketLifecycleThroughDecorator(t, s)
	if strings.Contains(string(b), "null") {
		t.Errorf("document holds nulls: %s", b)
	}
	var doc struct {
		Rules []struct {
			ID          string
			Status      string
			Filter      map[string]any
			Expiration  *struct{ Days int }
			Transitions []struct {
				Days         int
				StorageClass string
			}
		}
		TransitionDefaultMinimumObjectSize string
	}
	if err := json.Unmarshal(b, &doc); err != nil {
		t.Fatal(err)
	}
	if len(doc.Rules) != 2 {
		t.Fatalf("rules: %s", b)
	}
	r0, r1 := doc.Rules[0], doc.Rules[1]
	if r0.ID != "expire-checkpoints" || r0.Status != "Enabled" || r0.Filter["Prefix"] != "team/" || r0.Expiration == nil || r0.Expiration.Days != 7 {
		t.Errorf("rule 1: %s", b)
	}
	if r1.ID != "everything" || r1.Status != "Disabled" || r1.Filter == nil || len(r1.Filter) != 0 ||
		len(r1.Transitions) != 1 || r1.Transitions[0].Days != 30 || r1.Transitions[0].StorageClass != "GLACIER" {
		t.Errorf("rule 2 (an empty filter is the whole bucket and must stay {}): %s", b)
	}
	if doc.TransitionDefaultMinimumObjectSize != "all_storage_classes_128K" {
		t.Errorf("TransitionDefaultMinimumObjectSize: %s", b)
	}
}

// TestBucketLifecycleExtrasUnknown: when versioning and object lock cannot
// be read, their fields are left out (unknown), and the rules still count.
func TestBucketLifecycleExtrasUnknown(t *testing.T) {
	ft := &faultTransport{
		match: func(r *http.Request) bool {
			return isConfigGet("lifecycle")(r) || isConfigGet("versioning")(r) || isConfigGet("object-lock")(r)
		},
		fault: func(r *http.Request) (*http.Response, error) {
			if r.URL.Query().Has("lifecycle") {
				return answer(http.StatusNotFound, codeNoLifecycle)(r)
			}
			return answer(http.StatusForbidden, "AccessDenied")(r)
		},
	}
	doc := readDoc(t, storeWith(t, ft))
	if _, ok := doc["Rules"]; !ok {
		t.Errorf("Rules missing: %v", doc)
	}
	for _, k := range []string{"Status", "MFADelete", "ObjectLockConfiguration"} {
		if v, ok := doc[k]; ok {
			t.Errorf("%s = %#v, want it left out (unknown)", k, v)
		}
	}
}

// TestBucketLifecycleObjectLock: a lock configuration comes out as the AWS
// CLI prints it.
func TestBucketLifecycleObjectLock(t *testing.T) {
	const lock = `<?xml version="1.0" encoding="UTF-8"?><ObjectLockConfiguration xmlns="http://s3.amazonaws.com/doc/2006-03-01/">` +
		`<ObjectLockEnabled>Enabled</ObjectLockEnabled><Rule><DefaultRetention><Mode>GOVERNANCE</Mode><Days>30</Days></DefaultRetention></Rule></ObjectLockConfiguration>`
	const ver = `<?xml version="1.0" encoding="UTF-8"?><VersioningConfiguration xmlns="http://s3.amazonaws.com/doc/2006-03-01/"><Status>Enabled</Status></VersioningConfiguration>`
	ft := &faultTransport{
		match: func(r *http.Request) bool {
			return isConfigGet("lifecycle")(r) || isConfigGet("versioning")(r) || isConfigGet("object-lock")(r)
		},
		fault: func(r *http.Request) (*http.Response, error) {
			switch q := r.URL.Query(); {
			case q.Has("object-lock"):
				return answerXML(lock)(r)
			case q.Has("versioning"):
				return answerXML(ver)(r)
			}
			return answer(http.StatusNotFound, codeNoLifecycle)(r)
		},
	}
	doc := readDoc(t, storeWith(t, ft))
	b, _ := json.Marshal(doc)
	const want = `{"ObjectLockConfiguration":{"ObjectLockEnabled":"Enabled","Rule":{"DefaultRetention":{"Days":30,"Mode":"GOVERNANCE"}}},"Rules":[],"Status":"Enabled"}`
	if string(b) != want {
		t.Errorf("document\n%s\nwant\n%s", b, want)
	}
}

func TestBucketLifecycleCancelled(t *testing.T) {
	s := newStore(t)
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	if b, err := s.BucketLifecycle(ctx); err == nil || !strings.Contains(err.Error(), strconv.Quote(s.d.bucket)) {
		t.Fatalf("bucket lifecycle with a cancelled context: %s, %v", b, err)
	}
}
