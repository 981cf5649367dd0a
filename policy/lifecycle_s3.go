package policy

import (
	"encoding/json"
	"fmt"
	"strings"
)

// s3Tiers maps S3 storage classes to the tier kind of a transition.
var s3Tiers = map[string]string{
	"GLACIER":             ActionArchive, // Glacier Flexible Retrieval: restore before reading
	"DEEP_ARCHIVE":        ActionArchive,
	"GLACIER_IR":          ActionCold, // Glacier Instant Retrieval: online
	"STANDARD_IA":         ActionCold,
	"ONEZONE_IA":          ActionCold,
	"INTELLIGENT_TIERING": ActionCold,
}

type s3Tag struct {
	Key   string `json:"Key"`
	Value string `json:"Value"`
}

type s3And struct {
	Prefix                *string      `json:"Prefix"`
	Tags                  []s3Tag      `json:"Tags"`
	ObjectSizeGreaterThan *json.Number `json:"ObjectSizeGreaterThan"`
	ObjectSizeLessThan    *json.Number `json:"ObjectSizeLessThan"`
}

type s3Days struct {
	Days                      *json.Number `json:"Days"`
	Date                      string       `json:"Date"`
	ExpiredObjectDeleteMarker *bool        `json:"ExpiredObjectDeleteMarker"`
	StorageClass              string       `json:"StorageClass"`
	NoncurrentDays            *json.Number `json:"NoncurrentDays"`
	NewerNoncurrentVersions   *json.Number `json:"NewerNoncurrentVersions"`
	DaysAfterInitiation       *json.Number `json:"DaysAfterInitiation"`
}

func parseS3Lifecycle(top map[string]json.RawMessage) (Bucket, error) {
	var rules []json.RawMessage
	if _, err := get(top, "Rules", &rules); err != nil {
		return Bucket{}, err
	}
	b := Bucket{Provider: "s3", Rules: make([]LifecycleRule, 0, len(rules))}
	for i, raw := range rules {
		b.Rules = append(b.Rules, parseS3Rule(i, raw))
	}
	return b, nil
}

func parseS3Rule(i int, raw json.RawMessage) LifecycleRule {
	r := LifecycleRule{ID: fmt.Sprintf("#%d", i+1), Enabled: true}
	m, unknown, err := fields(raw, "ID", "Status", "Filter", "Prefix", "Expiration", "Transitions", "Transition",
		"NoncurrentVersionTransitions", "NoncurrentVersionTransition", "NoncurrentVersionExpiration", "AbortIncompleteMultipartUpload")
	if err != nil {
		r.unreadable("not a rule object: %v", err)
		return r
	}
	var id string
	if _, err := get(m, "ID", &id); err == nil && id != "" {
		r.ID = id
	}
	if len(unknown) > 0 {
		r.unreadable("unknown fields %s", strings.Join(unknown, ", "))
	}
	var status string
	if _, err := get(m, "Status", &status); err != nil {
		r.unreadable("%v", err)
	}
	switch status {
	case "Enabled":
	case "Disabled":
		r.Enabled = false
	default:
		r.unreadable("status %q is neither Enabled nor Disabled", status)
	}
	r.Scope = s3Scope(&r, m)
	r.Actions = s3Actions(&r, m)
	if len(r.Actions) == 0 {
		r.unreadable("no action")
	}
	return r
}

func s3Scope(r *LifecycleRule, m map[string]json.RawMessage) Scope {
	s := Scope{Prefixes: []string{}}
	var legacy *string
	if _, err := get(m, "Prefix", &legacy); err != nil {
		r.unreadable("%v", err)
	}
	raw, hasFilter := m["Filter"]
	if !hasFilter || string(raw) == "null" {
		// The legacy top-level Prefix, or nothing at all: the whole bucket
		// when empty or absent.
		if legacy != nil && *legacy != "" {
			s.Prefixes = []string{*legacy}
		}
		return s
	}
	fm, unknown, err := fields(raw, "Prefix", "Tag", "And", "ObjectSizeGreaterThan", "ObjectSizeLessThan")
	if err != nil {
		r.unreadable("Filter: %v", err)
		return s
	}
	if len(unknown) > 0 {
		r.unreadable("unknown Filter fields %s", strings.Join(unknown, ", "))
	}
	var prefix *string
	var tag *s3Tag
	var and *s3And
	var gt, lt *json.Number
	for k, v := range map[string]any{"Prefix": &prefix, "Tag": &tag, "And": &and, "ObjectSizeGreaterThan": &gt, "ObjectSizeLessThan": &lt} {
		if _, err := get(fm, k, v); err != nil {
			r.unreadable("Filter.%v", err)
		}
	}
	if and != nil {
		prefix = and.Prefix
		gt, lt = and.ObjectSizeGreaterThan, and.ObjectSizeLessThan
		for _, t := range and.Tags {
			if s.Tags == nil {
				s.Tags = map[string]string{}
			}
			s.Tags[t.Key] = t.Value
		}
	}
	if tag != nil {
		s.Tags = map[string]string{tag.Key: tag.Value}
	}
	// An empty filter ({}) or an empty prefix: the whole bucket.
	if prefix != nil && *prefix != "" {
		s.Prefixes = []string{*prefix}
	}
	if gt != nil {
		n, err := gt.Int64()
		if err != nil {
			r.unreadable("ObjectSizeGreaterThan %q", gt.String())
		}
		s.MinSize = &n
	}
	if lt != nil {
		n, err := lt.Int64()
		if err != nil {
			r.unreadable("ObjectSizeLessThan %q", lt.String())
		}
		s.MaxSize = &n
	}
	return s
}

func s3Actions(r *LifecycleRule, m map[string]json.RawMessage) []Action {
	var out []Action
	one := func(field string, d s3Days, kind string) {
		a := Action{Kind: kind, StorageClass: d.StorageClass, Basis: "created"}
		switch {
		case d.Days != nil:
			n, err := days(*d.Days)
			if err != nil {
				r.unreadable("%s: %v", field, err)
			}
			a.AgeDays = n
		case d.Date != "":
			a.Date = d.Date
		case d.NoncurrentDays != nil:
			n, err := days(*d.NoncurrentDays)
			if err != nil {
				r.unreadable("%s: %v", field, err)
			}
			a.AgeDays, a.Basis = n, "noncurrent"
		case d.DaysAfterInitiation != nil:
			n, err := days(*d.DaysAfterInitiation)
			if err != nil {
				r.unreadable("%s: %v", field, err)
			}
			a.AgeDays, a.Basis = n, "initiated"
		case d.ExpiredObjectDeleteMarker != nil:
			if !*d.ExpiredObjectDeleteMarker {
				return // no action
			}
		default:
			r.unreadable("%s has no Days, Date or NoncurrentDays", field)
		}
		out = append(out, a)
	}
	tier := func(field, class string, current bool) string {
		kind, ok := s3Tiers[class]
		if !ok {
			r.unreadable("%s: unknown storage class %q", field, class)
			return ActionArchive // the worse guess, should it be read anyway
		}
		if current {
			return kind
		}
		if kind == ActionArchive {
			return ActionNoncurrentArchive
		}
		return ActionNoncurrentCold
	}
	var exp s3Days
	if ok, err := get(m, "Expiration", &exp); err != nil {
		r.unreadable("%v", err)
	} else if ok {
		switch {
		case exp.ExpiredObjectDeleteMarker != nil && exp.Days == nil && exp.Date == "":
			if *exp.ExpiredObjectDeleteMarker {
				out = append(out, Action{Kind: ActionDeleteMarker})
			}
		default:
			one("Expiration", exp, ActionExpire)
		}
	}
	var trs []s3Days
	if _, err := get(m, "Transitions", &trs); err != nil {
		r.unreadable("%v", err)
	}
	var tr s3Days
	if ok, err := get(m, "Transition", &tr); err != nil {
		r.unreadable("%v", err)
	} else if ok {
		trs = append(trs, tr)
	}
	for _, t := range trs {
		one("Transition", t, tier("Transition", t.StorageClass, true))
	}
	var ntrs []s3Days
	if _, err := get(m, "NoncurrentVersionTransitions", &ntrs); err != nil {
		r.unreadable("%v", err)
	}
	var ntr s3Days
	if ok, err := get(m, "NoncurrentVersionTransition", &ntr); err != nil {
		r.unreadable("%v", err)
	} else if ok {
		ntrs = append(ntrs, ntr)
	}
	for _, t := range ntrs {
		one("NoncurrentVersionTransition", t, tier("NoncurrentVersionTransition", t.StorageClass, false))
	}
	var nexp s3Days
	if ok, err := get(m, "NoncurrentVersionExpiration", &nexp); err != nil {
		r.unreadable("%v", err)
	} else if ok {
		if nexp.NoncurrentDays == nil && nexp.NewerNoncurrentVersions != nil {
			nexp.NoncurrentDays = new(json.Number("0"))
		}
		one("NoncurrentVersionExpiration", nexp, ActionNoncurrentExpire)
	}
	var abort s3Days
	if ok, err := get(m, "AbortIncompleteMultipartUpload", &abort); err != nil {
		r.unreadable("%v", err)
	} else if ok {
		one("AbortIncompleteMultipartUpload", abort, ActionAbortMultipart)
	}
	return out
}

func parseS3Versioning(top map[string]json.RawMessage) (Bucket, error) {
	var status string
	if _, err := get(top, "Status", &status); err != nil {
		return Bucket{}, err
	}
	b := Bucket{Provider: "s3"}
	switch status {
	case "Enabled":
		b.Versioning = "enabled"
	case "Suspended":
		b.Versioning = "suspended"
	case "":
		b.Versioning = "off" // never enabled: the API answers without a Status
	default:
		return Bucket{}, fmt.Errorf("versioning status %q is neither Enabled nor Suspended", status)
	}
	return b, nil
}

func parseS3ObjectLock(raw json.RawMessage) (Bucket, error) {
	var c struct {
		ObjectLockEnabled string `json:"ObjectLockEnabled"`
		Rule              *struct {
			DefaultRetention *struct {
				Mode  string       `json:"Mode"`
				Days  *json.Number `json:"Days"`
				Years *json.Number `json:"Years"`
			} `json:"DefaultRetention"`
		} `json:"Rule"`
	}
	if err := json.Unmarshal(raw, &c); err != nil {
		return Bucket{}, fmt.Errorf("ObjectLockConfiguration: %w", err)
	}
	b := Bucket{Provider: "s3"}
	if c.ObjectLockEnabled != "Enabled" {
		return b, nil
	}
	if c.Rule == nil || c.Rule.DefaultRetention == nil {
		// Enabled without a default retention: only objects written with a
		// retention of their own are locked, and Spark and ckgate set none.
		return b, nil
	}
	lock := &ObjectLock{Enabled: true}
	{
		d := c.Rule.DefaultRetention
		lock.Mode = d.Mode
		lock.Locked = d.Mode == "COMPLIANCE"
		switch {
		case d.Days != nil:
			n, err := days(*d.Days)
			if err != nil {
				return Bucket{}, fmt.Errorf("DefaultRetention.Days: %w", err)
			}
			lock.Days = n
		case d.Years != nil:
			n, err := days(*d.Years)
			if err != nil {
				return Bucket{}, fmt.Errorf("DefaultRetention.Years: %w", err)
			}
			lock.Days = n * 365
		}
	}
	b.ObjectLock = lock
	return b, nil
}
