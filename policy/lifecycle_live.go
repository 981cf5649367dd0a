package policy

import "encoding/json"

// parseS3Combined reads the one document an S3 store's live read returns
// (s3store.Store.BucketLifecycle): get-bucket-lifecycle-configuration's
// {"Rules": [...]} with, beside it, the fields get-bucket-versioning prints
// ("Status", "" when versioning was never enabled; "MFADelete") and
// get-object-lock-configuration's "ObjectLockConfiguration" ({} when the
// bucket has none). A field left out is unknown. A file holding "Rules"
// alone reads as parseS3Lifecycle reads it.
//
// parseTop reaches it through its "Rules" case; until that case calls it,
// ParseLifecycle reads only the rules of such a document and leaves
// versioning and object lock unknown.
func parseS3Combined(top map[string]json.RawMessage) (Bucket, error) {
	b, err := parseS3Lifecycle(top)
	if err != nil {
		return Bucket{}, err
	}
	_, status := top["Status"]
	_, mfa := top["MFADelete"]
	if status || mfa {
		v, err := parseS3Versioning(top)
		if err != nil {
			return Bucket{}, err
		}
		b.Versioning = v.Versioning
	}
	if raw, ok := top["ObjectLockConfiguration"]; ok && string(raw) != "null" {
		l, err := parseS3ObjectLock(raw)
		if err != nil {
			return Bucket{}, err
		}
		b.ObjectLock = l.ObjectLock
	}
	return b, nil
}
