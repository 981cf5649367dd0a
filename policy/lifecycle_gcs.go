package policy

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
)

// gcsColdClasses are GCS's colder storage classes; all of them stay online.
var gcsColdClasses = map[string]bool{"NEARLINE": true, "COLDLINE": true, "ARCHIVE": true}

// gcsHotClasses are classes a transition to which is no risk.
var gcsHotClasses = map[string]bool{"STANDARD": true, "MULTI_REGIONAL": true, "REGIONAL": true, "DURABLE_REDUCED_AVAILABILITY": true}

// parseGCS reads a GCS lifecycle configuration, a JSON API bucket resource
// or gcloud's bucket description.
func parseGCS(top map[string]json.RawMessage) (Bucket, error) {
	b := Bucket{Provider: "gcs"}
	var name string
	if _, err := get(top, "name", &name); err != nil {
		return Bucket{}, err
	}
	b.Bucket = name
	lc := top
	for _, k := range []string{"lifecycle", "lifecycle_config"} {
		if raw, ok := top[k]; ok && string(raw) != "null" {
			if err := json.Unmarshal(raw, &lc); err != nil {
				return Bucket{}, fmt.Errorf("%s: %w", k, err)
			}
		}
	}
	var rules []json.RawMessage
	if _, err := get(lc, "rule", &rules); err != nil {
		return Bucket{}, err
	}
	b.Rules = make([]LifecycleRule, 0, len(rules))
	for i, raw := range rules {
		b.Rules = append(b.Rules, parseGCSRule(i, raw))
	}
	// Versioning: {"versioning": {"enabled": bool}} or gcloud's
	// "versioning_enabled". A bucket resource without it has it off.
	var ver struct {
		Enabled bool `json:"enabled"`
	}
	var verOn bool
	if ok, err := get(top, "versioning", &ver); err != nil {
		return Bucket{}, err
	} else if ok {
		b.Versioning = onOff(ver.Enabled)
	}
	if ok, err := get(top, "versioning_enabled", &verOn); err != nil {
		return Bucket{}, err
	} else if ok {
		b.Versioning = onOff(verOn)
	}
	if b.Versioning == "" && isBucketResource(top) {
		b.Versioning = "off"
	}
	for _, k := range []string{"softDeletePolicy", "soft_delete_policy"} {
		var sd struct {
			RetentionDurationSeconds json.Number `json:"retentionDurationSeconds"`
		}
		if ok, err := get(top, k, &sd); err != nil {
			return Bucket{}, err
		} else if ok {
			secs, err := seconds(sd.RetentionDurationSeconds)
			if err != nil {
				return Bucket{}, fmt.Errorf("%s.retentionDurationSeconds: %w", k, err)
			}
			d := int(secs / 86400)
			if secs > 0 && d == 0 {
				d = 1
			}
			b.SoftDeleteDays = &d
		}
	}
	for _, k := range []string{"retentionPolicy", "retention_policy"} {
		var rp struct {
			RetentionPeriod json.Number `json:"retentionPeriod"`
			IsLocked        bool        `json:"isLocked"`
		}
		if ok, err := get(top, k, &rp); err != nil {
			return Bucket{}, err
		} else if ok {
			secs, err := seconds(rp.RetentionPeriod)
			if err != nil {
				return Bucket{}, fmt.Errorf("%s.retentionPeriod: %w", k, err)
			}
			if secs > 0 {
				b.ObjectLock = &ObjectLock{Enabled: true, Mode: "retention policy", Days: int((secs + 86399) / 86400), Locked: rp.IsLocked}
			}
		}
	}
	return b, nil
}

func isBucketResource(top map[string]json.RawMessage) bool {
	_, a := top["kind"]
	_, c := top["storage_url"]
	return a || c
}

func onOff(on bool) string {
	if on {
		return "enabled"
	}
	return "off"
}

// seconds reads a duration in seconds, which the JSON API prints as a
// string ("604800") and gcloud as a number.
func seconds(n json.Number) (int64, error) {
	s := strings.Trim(n.String(), `"`)
	if s == "" {
		return 0, nil
	}
	v, err := strconv.ParseInt(s, 10, 64)
	if err != nil || v < 0 {
		return 0, fmt.Errorf("%q is not a whole number of seconds", s)
	}
	return v, nil
}

func parseGCSRule(i int, raw json.RawMessage) LifecycleRule {
	r := LifecycleRule{ID: fmt.Sprintf("#%d", i+1), Enabled: true, Scope: Scope{Prefixes: []string{}}}
	m, unknown, err := fields(raw, "action", "condition")
	if err != nil {
		r.unreadable("not a rule object: %v", err)
		return r
	}
	if len(unknown) > 0 {
		r.unreadable("unknown fields %s", strings.Join(unknown, ", "))
	}
	var action struct {
		Type         string `json:"type"`
		StorageClass string `json:"storageClass"`
	}
	if _, err := get(m, "action", &action); err != nil {
		r.unreadable("%v", err)
	}
	r.ID = fmt.Sprintf("#%d %s", i+1, action.Type)
	if action.StorageClass != "" {
		r.ID += " " + action.StorageClass
	}
	cond := map[string]json.RawMessage{}
	if raw, ok := m["condition"]; ok {
		c, unknownCond, err := fields(raw, "age", "createdBefore", "customTimeBefore", "daysSinceCustomTime",
			"daysSinceNoncurrentTime", "isLive", "matchesPrefix", "matchesSuffix", "matchesStorageClass",
			"noncurrentTimeBefore", "numNewerVersions")
		if err != nil {
			r.unreadable("condition: %v", err)
			return r
		}
		if len(unknownCond) > 0 {
			r.unreadable("unknown conditions %s", strings.Join(unknownCond, ", "))
		}
		cond = c
	}
	var (
		age, sinceNoncurrent, newer           *json.Number
		sinceCustom                           *json.Number
		createdBefore, customBefore, ncBefore string
		isLive                                *bool
	)
	for k, v := range map[string]any{
		"age": &age, "daysSinceNoncurrentTime": &sinceNoncurrent, "numNewerVersions": &newer,
		"daysSinceCustomTime": &sinceCustom, "createdBefore": &createdBefore, "customTimeBefore": &customBefore,
		"noncurrentTimeBefore": &ncBefore, "isLive": &isLive, "matchesPrefix": &r.Scope.Prefixes,
		"matchesSuffix": &r.Scope.Suffixes, "matchesStorageClass": &r.Scope.StorageClasses,
	} {
		if _, err := get(cond, k, v); err != nil {
			r.unreadable("condition %v", err)
		}
	}
	if r.Scope.Prefixes == nil {
		r.Scope.Prefixes = []string{}
	}
	if sinceCustom != nil || customBefore != "" {
		r.Scope.Requires = append(r.Scope.Requires, "customTime")
	}
	noncurrent := (isLive != nil && !*isLive) || sinceNoncurrent != nil || newer != nil || ncBefore != ""
	a := Action{Basis: "created"}
	switch {
	case noncurrent && sinceNoncurrent != nil:
		a.AgeDays, a.Basis = r.daysOf("daysSinceNoncurrentTime", *sinceNoncurrent), "noncurrent"
	case age != nil:
		a.AgeDays = r.daysOf("age", *age)
	case createdBefore != "":
		a.Date = createdBefore
	case noncurrent && ncBefore != "":
		a.Date, a.Basis = ncBefore, "noncurrent"
	case noncurrent && newer != nil:
		a.Basis = "newer_versions" // by count: as soon as enough newer versions exist
	}
	switch action.Type {
	case "Delete":
		a.Kind = ActionExpire
		if noncurrent {
			a.Kind = ActionNoncurrentExpire
		}
	case "SetStorageClass":
		a.StorageClass = action.StorageClass
		switch {
		case gcsColdClasses[action.StorageClass] && noncurrent:
			a.Kind = ActionNoncurrentCold
		case gcsColdClasses[action.StorageClass]:
			a.Kind = ActionCold
		case gcsHotClasses[action.StorageClass]:
			a.Kind = ActionHot
		default:
			r.unreadable("unknown storage class %q", action.StorageClass)
			a.Kind = ActionCold
		}
	case "AbortIncompleteMultipartUpload":
		a.Kind = ActionAbortMultipart
	default:
		r.unreadable("unknown action type %q", action.Type)
		a.Kind = ActionExpire
	}
	r.Actions = []Action{a}
	return r
}

func (r *LifecycleRule) daysOf(field string, n json.Number) int {
	d, err := days(n)
	if err != nil {
		r.unreadable("%s: %v", field, err)
	}
	return d
}
