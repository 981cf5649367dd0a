package gcsstore

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"strconv"
	"time"

	"cloud.google.com/go/storage"
	"google.golang.org/api/googleapi"
	raw "google.golang.org/api/storage/v1"

	"github.com/ckgate/ckgate/gateway"
)

// callBucketsGet is the JSON API call BucketLifecycle makes, as errors name
// it.
const callBucketsGet = "buckets.get"

// BucketLifecycle reads the bucket's attributes live (buckets.get) and
// returns its lifecycle configuration, versioning, soft delete policy and
// retention policy as a JSON API bucket resource:
//
//	{"kind": "storage#bucket", "name", "projectNumber",
//	 "lifecycle": {"rule": [{"action": {...}, "condition": {...}}]},
//	 "versioning": {"enabled": bool},
//	 "softDeletePolicy": {"retentionDurationSeconds": "604800"},
//	 "retentionPolicy": {"retentionPeriod": "86400", "isLocked": bool}}
//
// It is what an audit reads when no file gives the bucket's configuration
// (policy.LifecycleReader). It applies to the whole bucket, whatever the
// store's prefix. A soft delete or retention policy the answer does not
// carry is left out (unknown).
//
// A failed read is an error naming the bucket and the call, of the
// failure's gateway kind (ErrPermission for a principal without
// storage.buckets.get, ErrNotFound for a missing bucket, ...).
//
// Cloud Storage leaves the lifecycle out of a bucket that has none, so an
// answer without rules means "no rules" only when it comes from Cloud
// Storage. From an emulator (STORAGE_EMULATOR_HOST set) or from a server
// that does not report the bucket's project number, as Cloud Storage always
// does, an answer without rules is an ErrUnsupported error instead:
// fake-gcs-server accepts a lifecycle configuration and drops it, so its
// silence is no evidence. Rules such a server does return are used.
func (s *Store) BucketLifecycle(ctx context.Context) ([]byte, error) {
	a, err := s.d.bucket.Attrs(ctx)
	if err != nil {
		return nil, &bucketConfigError{bucket: s.d.name, call: callBucketsGet, kind: kindOf(gateway.None(), err), err: err}
	}
	if len(a.Lifecycle.Rules) == 0 {
		why := ""
		switch h := os.Getenv(EmulatorHostEnv); {
		case h != "":
			why = fmt.Sprintf("the answer comes from an emulator (%s=%s)", EmulatorHostEnv, h)
		case a.ProjectNumber == 0:
			why = "the answer does not name the bucket's project, as Cloud Storage always does"
		}
		if why != "" {
			return nil, &bucketConfigError{bucket: s.d.name, call: callBucketsGet, kind: gateway.ErrUnsupported,
				reason: why + " and holds no lifecycle configuration: an emulator's silence is no evidence " +
					"that there is none (fake-gcs-server drops lifecycle configuration)"}
		}
	}
	return json.Marshal(bucketResource(a))
}

// bucketResource turns the library's bucket attributes back into the JSON
// API resource they were read from, as far as the audit needs it. The
// lifecycle follows the library's own conversion (toRawLifecycle): a rule
// on all objects is "age": 0, a liveness is "isLive".
func bucketResource(a *storage.BucketAttrs) *raw.Bucket {
	b := &raw.Bucket{
		Kind:          "storage#bucket",
		Id:            a.Name,
		Name:          a.Name,
		ProjectNumber: a.ProjectNumber,
		Lifecycle:     &raw.BucketLifecycle{Rule: []*raw.BucketLifecycleRule{}, ForceSendFields: []string{"Rule"}},
		// The library reads an absent versioning as off, as the audit does.
		Versioning: &raw.BucketVersioning{Enabled: a.VersioningEnabled, ForceSendFields: []string{"Enabled"}},
	}
	for _, r := range a.Lifecycle.Rules {
		c := r.Condition
		rc := &raw.BucketLifecycleRuleCondition{
			DaysSinceCustomTime:     c.DaysSinceCustomTime,
			DaysSinceNoncurrentTime: c.DaysSinceNoncurrentTime,
			MatchesPrefix:           c.MatchesPrefix,
			MatchesStorageClass:     c.MatchesStorageClasses,
			MatchesSuffix:           c.MatchesSuffix,
			NumNewerVersions:        c.NumNewerVersions,
			CreatedBefore:           date(c.CreatedBefore),
			CustomTimeBefore:        date(c.CustomTimeBefore),
			NoncurrentTimeBefore:    date(c.NoncurrentTimeBefore),
		}
		switch {
		case c.AllObjects:
			rc.Age = googleapi.Int64(0)
			rc.ForceSendFields = []string{"Age"}
		case c.AgeInDays > 0:
			rc.Age = googleapi.Int64(c.AgeInDays)
		}
		switch c.Liveness {
		case storage.Live:
			rc.IsLive = googleapi.Bool(true)
		case storage.Archived:
			rc.IsLive = googleapi.Bool(false)
		}
		b.Lifecycle.Rule = append(b.Lifecycle.Rule, &raw.BucketLifecycleRule{
			Action:    &raw.BucketLifecycleRuleAction{Type: r.Action.Type, StorageClass: r.Action.StorageClass},
			Condition: rc,
		})
	}
	if p := a.SoftDeletePolicy; p != nil {
		b.SoftDeletePolicy = &raw.BucketSoftDeletePolicy{
			RetentionDurationSeconds: int64(p.RetentionDuration / time.Second),
			ForceSendFields:          []string{"RetentionDurationSeconds"}, // 0: soft delete off
		}
	}
	if p := a.RetentionPolicy; p != nil {
		b.RetentionPolicy = &raw.BucketRetentionPolicy{
			RetentionPeriod: int64(p.RetentionPeriod / time.Second),
			IsLocked:        p.IsLocked,
			ForceSendFields: []string{"RetentionPeriod"},
		}
	}
	return b
}

// date formats a lifecycle condition date as the JSON API does
// (YYYY-MM-DD); the zero time is absent.
func date(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return t.Format(time.DateOnly)
}

// bucketConfigError names the bucket and the JSON API call. errors.Is
// matches its gateway kind and errors.As reaches the library's error.
type bucketConfigError struct {
	bucket, call string
	kind, err    error
	reason       string // why an answer was not usable, when err is nil
}

func (e *bucketConfigError) Error() string {
	msg := "gcs bucket " + strconv.Quote(e.bucket) + ": " + e.call + ": " + e.kind.Error()
	if e.err != nil {
		msg += ": " + e.err.Error()
	}
	if e.reason != "" {
		msg += ": " + e.reason
	}
	return msg
}

func (e *bucketConfigError) Unwrap() []error {
	if e.err == nil {
		return []error{e.kind}
	}
	return []error{e.kind, e.err}
}
