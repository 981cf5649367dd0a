package policy

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"sort"
	"strings"
)

// Bucket is the storage configuration the audit knows about one bucket
// (an S3 or GCS bucket, an Azure container or account), normalised from
// whichever API shape it was read in. Fields left at their zero value are
// unknown, not "off".
type Bucket struct {
	Bucket     string `json:"bucket"`               // name; "" applies to every audited checkpoint
	Provider   string `json:"provider"`             // s3, gcs or azure
	Source     string `json:"source"`               // the file or API it was read from
	Versioning string `json:"versioning,omitempty"` // enabled, suspended or off; "" unknown
	// SoftDeleteDays is how long deleted objects stay recoverable: nil
	// unknown, 0 off.
	SoftDeleteDays *int            `json:"soft_delete_days,omitempty"`
	ObjectLock     *ObjectLock     `json:"object_lock,omitempty"`
	Rules          []LifecycleRule `json:"rules"`
	// Error: the configuration could not be read at all (an unknown).
	Error string `json:"error,omitempty"`
}

// ObjectLock is a bucket-wide lock on deletes: S3 object lock default
// retention, a GCS retention policy, an Azure immutability policy.
type ObjectLock struct {
	Enabled bool   `json:"enabled"`
	Mode    string `json:"mode,omitempty"` // GOVERNANCE, COMPLIANCE, retention policy, ...
	Days    int    `json:"days,omitempty"`
	Locked  bool   `json:"locked,omitempty"` // cannot be shortened or removed
}

// LifecycleRule is one lifecycle rule in the normalised model.
type LifecycleRule struct {
	ID      string   `json:"id"`
	Enabled bool     `json:"enabled"`
	Scope   Scope    `json:"scope"`
	Actions []Action `json:"actions"`
	// Unreadable says why the auditor could not read this rule; its effect
	// is unknown, never a pass.
	Unreadable string `json:"unreadable,omitempty"`
}

// Scope says which objects a rule reaches. Empty lists mean "any".
type Scope struct {
	// Prefixes are key prefixes; none means the whole bucket.
	Prefixes []string `json:"prefixes"`
	// ContainerInPrefix: prefixes start with the container name (Azure).
	ContainerInPrefix bool     `json:"container_in_prefix,omitempty"`
	Suffixes          []string `json:"suffixes,omitempty"`
	// Tags the objects must carry (S3 tags, Azure blob index tags).
	Tags map[string]string `json:"tags,omitempty"`
	// Requires lists object properties the rule needs and that Spark's and
	// ckgate's files never have (a GCS custom time).
	Requires       []string `json:"requires,omitempty"`
	MinSize        *int64   `json:"min_size,omitempty"`
	MaxSize        *int64   `json:"max_size,omitempty"`
	StorageClasses []string `json:"storage_classes,omitempty"`
	BlobTypes      []string `json:"blob_types,omitempty"`
}

// Action kinds.
const (
	ActionExpire            = "expire"             // delete current objects
	ActionArchive           = "archive"            // move to an offline tier
	ActionCold              = "cold"               // move to an online cold tier
	ActionNoncurrentExpire  = "noncurrent_expire"  // delete old versions
	ActionNoncurrentArchive = "noncurrent_archive" // move old versions to an offline tier
	ActionNoncurrentCold    = "noncurrent_cold"    // move old versions to a cold tier
	ActionDeleteMarker      = "delete_marker"      // remove expired delete markers
	ActionAbortMultipart    = "abort_multipart"    // abort incomplete uploads
	ActionHot               = "hot"                // move back to the hot tier
)

// Action is what a rule does and when: after AgeDays days (since
// modification, creation, last access or becoming noncurrent: Basis), or
// on Date.
type Action struct {
	Kind         string `json:"kind"`
	AgeDays      int    `json:"age_days"`
	Date         string `json:"date,omitempty"`
	Basis        string `json:"basis,omitempty"`
	StorageClass string `json:"storage_class,omitempty"`
}

// ParseLifecycle reads one configuration file in any of the shapes the
// clouds' APIs and CLIs print and normalises it:
//
//   - S3: get-bucket-lifecycle-configuration ({"Rules": [...]}),
//     get-bucket-versioning ({"Status": ...}) and
//     get-object-lock-configuration ({"ObjectLockConfiguration": ...});
//   - GCS: a lifecycle configuration ({"rule": [...]} or {"lifecycle":
//     {"rule": [...]}}), the JSON API bucket resource, or `gcloud storage
//     buckets describe --format=json`;
//   - Azure: a management policy (`az storage account management-policy
//     show`, the ARM resource, or {"rules": [...]}), blob service
//     properties (soft delete, versioning) or a container's immutability.
//
// A rule the parser cannot read is kept with Unreadable set; a file it
// cannot recognise at all is an error naming source.
func ParseLifecycle(source string, data []byte) (Bucket, error) {
	var top map[string]json.RawMessage
	if err := strictUnmarshal(data, &top); err != nil {
		return Bucket{}, fmt.Errorf("lifecycle %s: %w", source, err)
	}
	if top == nil {
		return Bucket{}, fmt.Errorf("lifecycle %s: not a JSON object", source)
	}
	b, err := parseTop(top)
	if err != nil {
		return Bucket{}, fmt.Errorf("lifecycle %s: %w", source, err)
	}
	b.Source = source
	if b.Rules == nil {
		b.Rules = []LifecycleRule{}
	}
	return b, nil
}

func parseTop(top map[string]json.RawMessage) (Bucket, error) {
	has := func(k string) bool { _, ok := top[k]; return ok }
	switch {
	case has("Rules"):
		return parseS3Combined(top)
	case has("ObjectLockConfiguration"):
		return parseS3ObjectLock(top["ObjectLockConfiguration"])
	case has("Status") || has("MFADelete"):
		return parseS3Versioning(top)
	case has("rule"), has("lifecycle"), has("lifecycle_config"), has("kind") && string(top["kind"]) == `"storage#bucket"`,
		has("versioning_enabled"), has("soft_delete_policy"), has("softDeletePolicy"), has("retentionPolicy"):
		return parseGCS(top)
	case has("policy"), has("rules"), has("properties"):
		if p, ok := azurePolicy(top); ok {
			return parseAzurePolicy(p, top)
		}
		return parseAzureProperties(top)
	case has("deleteRetentionPolicy"), has("isVersioningEnabled"), has("hasImmutabilityPolicy"),
		has("immutableStorageWithVersioning"), has("immutabilityPolicy"), has("hasLegalHold"):
		return parseAzureProperties(top)
	}
	return Bucket{}, fmt.Errorf("not a lifecycle, versioning, soft delete or lock configuration of S3, GCS or Azure (top-level fields: %s)", strings.Join(slices.Sorted(maps.Keys(top)), ", "))
}

// strictUnmarshal decodes one JSON value with numbers kept exact and no
// trailing data.
func strictUnmarshal(data []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	if err := dec.Decode(v); err != nil {
		return err
	}
	if dec.More() {
		return errors.New("trailing data after the JSON value")
	}
	return nil
}

// fields decodes a JSON object into its fields and reports the ones not in
// known, sorted.
func fields(raw json.RawMessage, known ...string) (map[string]json.RawMessage, []string, error) {
	var m map[string]json.RawMessage
	if err := json.Unmarshal(raw, &m); err != nil {
		return nil, nil, err
	}
	if m == nil {
		return nil, nil, errors.New("null where an object belongs")
	}
	var unknown []string
	for k := range m {
		if !slices.Contains(known, k) {
			unknown = append(unknown, k)
		}
	}
	sort.Strings(unknown)
	return m, unknown, nil
}

// get decodes field k of m into v when present; absent is not an error.
func get(m map[string]json.RawMessage, k string, v any) (bool, error) {
	raw, ok := m[k]
	if !ok || string(raw) == "null" {
		return false, nil
	}
	if err := json.Unmarshal(raw, v); err != nil {
		return true, fmt.Errorf("%s: %w", k, err)
	}
	return true, nil
}

// unreadable marks r as unreadable for the reason; the first reason wins.
func (r *LifecycleRule) unreadable(format string, args ...any) {
	if r.Unreadable == "" {
		r.Unreadable = fmt.Sprintf(format, args...)
	}
}

// days converts a JSON number of days, refusing negatives and fractions.
func days(v json.Number) (int, error) {
	n, err := v.Int64()
	if err != nil || n < 0 || n > 1<<31 {
		return 0, fmt.Errorf("%q is not a whole number of days", v.String())
	}
	return int(n), nil
}
