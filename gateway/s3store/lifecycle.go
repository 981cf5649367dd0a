package s3store

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/smithy-go"

	"github.com/ckgate/ckgate/gateway"
)

// S3 error codes of the bucket configuration reads.
const (
	codeNoLifecycle  = "NoSuchLifecycleConfiguration"
	codeNoObjectLock = "ObjectLockConfigurationNotFoundError"
)

// The S3 API calls BucketLifecycle makes, as errors name them.
const (
	callLifecycle  = "GetBucketLifecycleConfiguration"
	callVersioning = "GetBucketVersioning"
	callObjectLock = "GetObjectLockConfiguration"
)

// BucketLifecycle reads the bucket's lifecycle configuration live, with its
// versioning state and object lock configuration, and returns them as one
// JSON object holding the fields the AWS CLI prints for each call:
//
//	{"Rules": [...],                   get-bucket-lifecycle-configuration
//	 "Status": "Enabled", "MFADelete": get-bucket-versioning ("" never enabled)
//	 "ObjectLockConfiguration": {...}} get-object-lock-configuration ({} none)
//
// It is what an audit reads when no file gives the bucket's configuration
// (policy.LifecycleReader). It applies to the whole bucket, whatever the
// store's prefix.
//
// A bucket without a lifecycle configuration (NoSuchLifecycleConfiguration)
// has "Rules": []: readable, and empty. Any other failure of
// GetBucketLifecycleConfiguration is an error naming the bucket and the
// call, of the failure's gateway kind: ErrUnsupported for a server that
// does not implement it (versitygw answers 501 NotImplemented),
// ErrPermission for a refusal, ErrNotFound for a missing bucket. The rules
// are then unknown, never "none".
//
// Versioning and object lock only add to what is known: when either call
// fails (not implemented, refused) its fields are left out, which means
// unknown, not off. A cancelled ctx is an error.
func (s *driver) BucketLifecycle(ctx context.Context) ([]byte, error) {
	doc := map[string]any{}

	var t tracker
	lc, err := s.client.GetBucketLifecycleConfiguration(ctx, &s3.GetBucketLifecycleConfigurationInput{Bucket: &s.bucket}, t.option)
	switch {
	case err == nil:
		rules, err := withoutNulls(lc.Rules)
		if err != nil {
			return nil, s.configError(callLifecycle, gateway.ErrUnsupported, err)
		}
		if rules == nil {
			rules = []any{}
		}
		doc["Rules"] = rules
		if m := string(lc.TransitionDefaultMinimumObjectSize); m != "" {
			doc["TransitionDefaultMinimumObjectSize"] = m
		}
	case errorCode(err) == codeNoLifecycle:
		doc["Rules"] = []any{}
	default:
		return nil, s.configError(callLifecycle, classify(err), err)
	}

	var tv tracker
	v, err := s.client.GetBucketVersioning(ctx, &s3.GetBucketVersioningInput{Bucket: &s.bucket}, tv.option)
	switch {
	case err == nil:
		doc["Status"] = string(v.Status) // "": versioning was never enabled
		if v.MFADelete != "" {
			doc["MFADelete"] = string(v.MFADelete)
		}
	case ctx.Err() != nil:
		return nil, s.configError(callVersioning, gateway.ErrUnavailable, err)
	}

	var tl tracker
	ol, err := s.client.GetObjectLockConfiguration(ctx, &s3.GetObjectLockConfigurationInput{Bucket: &s.bucket}, tl.option)
	switch {
	case err == nil && ol.ObjectLockConfiguration != nil:
		c, err := withoutNulls(ol.ObjectLockConfiguration)
		if err != nil {
			return nil, s.configError(callObjectLock, gateway.ErrUnsupported, err)
		}
		doc["ObjectLockConfiguration"] = c
	case err == nil, errorCode(err) == codeNoObjectLock:
		doc["ObjectLockConfiguration"] = map[string]any{}
	case ctx.Err() != nil:
		return nil, s.configError(callObjectLock, gateway.ErrUnavailable, err)
	}

	return json.Marshal(doc)
}

// configError is a bucket configuration call that failed.
func (s *driver) configError(call string, kind, err error) error {
	return &bucketConfigError{bucket: s.bucket, call: call, kind: kind, err: err}
}

// bucketConfigError names the bucket and the S3 call. Its message carries
// the service's answer (status, code, message) without the SDK's request
// ids; errors.Is matches its gateway kind and errors.As reaches the SDK
// error.
type bucketConfigError struct {
	bucket, call string
	kind, err    error
}

func (e *bucketConfigError) Error() string {
	msg := fmt.Sprintf("s3 bucket %q: %s: %v", e.bucket, e.call, e.kind)
	var ae smithy.APIError
	switch {
	case errors.As(e.err, &ae):
		msg += ": "
		if st := httpStatus(e.err); st != 0 {
			msg += fmt.Sprintf("%d ", st)
		}
		msg += ae.ErrorCode()
		if m := ae.ErrorMessage(); m != "" {
			msg += " (" + m + ")"
		}
	case e.err != nil:
		msg += ": " + e.err.Error()
	}
	if errors.Is(e.kind, gateway.ErrUnsupported) && errorCode(e.err) == "NotImplemented" {
		msg += "; the server does not implement " + e.call
	}
	return msg
}

func (e *bucketConfigError) Unwrap() []error {
	if e.err == nil {
		return []error{e.kind}
	}
	return []error{e.kind, e.err}
}

// withoutNulls marshals v and removes every null member, recursively: the
// SDK's absent (nil) fields become absent keys, as the AWS CLI prints them.
func withoutNulls(v any) (any, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var x any
	if err := dec.Decode(&x); err != nil {
		return nil, err
	}
	return dropNulls(x), nil
}

func dropNulls(x any) any {
	switch v := x.(type) {
	case map[string]any:
		for k, e := range v {
			if e == nil {
				delete(v, k)
				continue
			}
			v[k] = dropNulls(e)
		}
	case []any:
		for i, e := range v {
			v[i] = dropNulls(e)
		}
	}
	return x
}
