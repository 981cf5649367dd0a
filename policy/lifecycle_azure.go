package policy

import (
	"encoding/json"
	"fmt"
	"slices"
	"sort"
	"strings"
)

// azurePolicy finds the management policy ({"rules": [...]}) in the shapes
// Azure prints it: the policy itself, `az storage account management-policy
// show` ({"policy": {...}}) or the ARM resource ({"properties": {"policy":
// {...}}}).
func azurePolicy(top map[string]json.RawMessage) (map[string]json.RawMessage, bool) {
	if _, ok := top["rules"]; ok {
		return top, true
	}
	for _, path := range [][]string{{"policy"}, {"properties", "policy"}} {
		cur := top
		found := true
		for _, k := range path {
			raw, ok := cur[k]
			if !ok {
				found = false
				break
			}
			var next map[string]json.RawMessage
			if json.Unmarshal(raw, &next) != nil || next == nil {
				found = false
				break
			}
			cur = next
		}
		if _, ok := cur["rules"]; found && ok {
			return cur, true
		}
	}
	return nil, false
}

func parseAzurePolicy(p, top map[string]json.RawMessage) (Bucket, error) {
	var rules []json.RawMessage
	if _, err := get(p, "rules", &rules); err != nil {
		return Bucket{}, err
	}
	b := Bucket{Provider: "azure", Rules: make([]LifecycleRule, 0, len(rules))}
	for i, raw := range rules {
		b.Rules = append(b.Rules, parseAzureRule(i, raw))
	}
	return b, nil
}

// azureBaseTiers maps baseBlob actions to kinds.
var azureBaseTiers = map[string]string{
	"delete":        ActionExpire,
	"tierToArchive": ActionArchive,
	"tierToCool":    ActionCold,
	"tierToCold":    ActionCold,
	"tierToHot":     ActionHot,
}

var azureVersionTiers = map[string]string{
	"delete":        ActionNoncurrentExpire,
	"tierToArchive": ActionNoncurrentArchive,
	"tierToCool":    ActionNoncurrentCold,
	"tierToCold":    ActionNoncurrentCold,
	"tierToHot":     ActionHot,
}

// azureAges are the day counts an action may run after, and their basis.
var azureAges = map[string]string{
	"daysAfterModificationGreaterThan":   "modified",
	"daysAfterCreationGreaterThan":       "created",
	"daysAfterLastAccessTimeGreaterThan": "last_access",
	"daysAfterLastTierChangeGreaterThan": "tier_change",
}

func parseAzureRule(i int, raw json.RawMessage) LifecycleRule {
	r := LifecycleRule{ID: fmt.Sprintf("#%d", i+1), Enabled: true, Scope: Scope{Prefixes: []string{}, ContainerInPrefix: true}}
	m, unknown, err := fields(raw, "name", "enabled", "type", "definition")
	if err != nil {
		r.unreadable("not a rule object: %v", err)
		return r
	}
	var name, typ string
	if _, err := get(m, "name", &name); err == nil && name != "" {
		r.ID = name
	}
	if len(unknown) > 0 {
		r.unreadable("unknown fields %s", strings.Join(unknown, ", "))
	}
	var enabled *bool
	if _, err := get(m, "enabled", &enabled); err != nil {
		r.unreadable("%v", err)
	}
	if enabled != nil { // absent: enabled
		r.Enabled = *enabled
	}
	if _, err := get(m, "type", &typ); err != nil || (typ != "" && typ != "Lifecycle") {
		r.unreadable("rule type %q is not Lifecycle", typ)
	}
	def, unknown, err := fields(m["definition"], "actions", "filters")
	if err != nil {
		r.unreadable("definition: %v", err)
		return r
	}
	if len(unknown) > 0 {
		r.unreadable("unknown definition fields %s", strings.Join(unknown, ", "))
	}
	if raw, ok := def["filters"]; ok {
		var f struct {
			BlobTypes      []string `json:"blobTypes"`
			PrefixMatch    []string `json:"prefixMatch"`
			BlobIndexMatch []struct {
				Name  string `json:"name"`
				Op    string `json:"op"`
				Value string `json:"value"`
			} `json:"blobIndexMatch"`
		}
		_, unknown, err := fields(raw, "blobTypes", "prefixMatch", "blobIndexMatch")
		if err != nil {
			r.unreadable("filters: %v", err)
		} else {
			if len(unknown) > 0 {
				r.unreadable("unknown filters %s", strings.Join(unknown, ", "))
			}
			if err := json.Unmarshal(raw, &f); err != nil {
				r.unreadable("filters: %v", err)
			}
		}
		r.Scope.BlobTypes = f.BlobTypes
		for _, p := range f.PrefixMatch {
			if p != "" {
				r.Scope.Prefixes = append(r.Scope.Prefixes, p)
			}
		}
		for _, t := range f.BlobIndexMatch {
			if r.Scope.Tags == nil {
				r.Scope.Tags = map[string]string{}
			}
			r.Scope.Tags[t.Name] = t.Op + t.Value
		}
	}
	actions, unknown, err := fields(def["actions"], "baseBlob", "snapshot", "version")
	if err != nil {
		r.unreadable("actions: %v", err)
		return r
	}
	if len(unknown) > 0 {
		r.unreadable("unknown actions %s", strings.Join(unknown, ", "))
	}
	if raw, ok := actions["baseBlob"]; ok {
		r.Actions = append(r.Actions, azureActions(&r, "baseBlob", raw, azureBaseTiers)...)
	}
	if raw, ok := actions["version"]; ok {
		r.Actions = append(r.Actions, azureActions(&r, "version", raw, azureVersionTiers)...)
	}
	// Snapshots: neither Spark nor ckgate takes blob snapshots, so snapshot
	// actions touch nothing of a checkpoint; they are read, not reported.
	if raw, ok := actions["snapshot"]; ok {
		_ = azureActions(&r, "snapshot", raw, azureVersionTiers)
	}
	if len(r.Actions) == 0 && r.Unreadable == "" {
		if _, ok := actions["snapshot"]; !ok {
			r.unreadable("no action")
		}
	}
	return r
}

func azureActions(r *LifecycleRule, where string, raw json.RawMessage, kinds map[string]string) []Action {
	var m map[string]json.RawMessage
	if err := json.Unmarshal(raw, &m); err != nil {
		r.unreadable("%s: %v", where, err)
		return nil
	}
	names := make([]string, 0, len(m))
	for k := range m {
		names = append(names, k)
	}
	sort.Strings(names)
	var out []Action
	for _, name := range names {
		if name == "enableAutoTierToHotFromCool" {
			continue // moves blobs back to hot: no risk
		}
		kind, ok := kinds[name]
		if !ok {
			r.unreadable("unknown %s action %q", where, name)
			continue
		}
		var ages map[string]json.Number
		if err := json.Unmarshal(m[name], &ages); err != nil {
			r.unreadable("%s.%s: %v", where, name, err)
			continue
		}
		a := Action{Kind: kind}
		if kind != ActionHot && kind != ActionExpire && kind != ActionNoncurrentExpire {
			a.StorageClass = strings.TrimPrefix(name, "tierTo")
		}
		// Several ages: the action runs after the smallest one whose basis
		// can be met; the smallest is the conservative reading.
		first := true
		for _, k := range slices.Sorted(func(yield func(string) bool) {
			for k := range ages {
				if !yield(k) {
					return
				}
			}
		}) {
			basis, ok := azureAges[k]
			if !ok {
				r.unreadable("%s.%s: unknown condition %q", where, name, k)
				continue
			}
			d, err := days(ages[k])
			if err != nil {
				r.unreadable("%s.%s.%s: %v", where, name, k, err)
				continue
			}
			if first || d < a.AgeDays {
				a.AgeDays, a.Basis = d, basis
				first = false
			}
		}
		if first {
			r.unreadable("%s.%s has no age", where, name)
		}
		out = append(out, a)
	}
	return out
}

// parseAzureProperties reads blob service properties (soft delete,
// versioning) and container immutability, plain or under "properties".
func parseAzureProperties(top map[string]json.RawMessage) (Bucket, error) {
	if raw, ok := top["properties"]; ok {
		var inner map[string]json.RawMessage
		if err := json.Unmarshal(raw, &inner); err == nil && inner != nil {
			for k, v := range inner {
				if _, dup := top[k]; !dup {
					top[k] = v
				}
			}
		}
	}
	b := Bucket{Provider: "azure"}
	known := false
	var soft struct {
		Enabled bool         `json:"enabled"`
		Days    *json.Number `json:"days"`
	}
	if ok, err := get(top, "deleteRetentionPolicy", &soft); err != nil {
		return Bucket{}, err
	} else if ok {
		known = true
		d := 0
		if soft.Enabled && soft.Days != nil {
			n, err := days(*soft.Days)
			if err != nil {
				return Bucket{}, fmt.Errorf("deleteRetentionPolicy.days: %w", err)
			}
			d = n
		}
		b.SoftDeleteDays = &d
	}
	var ver bool
	if ok, err := get(top, "isVersioningEnabled", &ver); err != nil {
		return Bucket{}, err
	} else if ok {
		known = true
		b.Versioning = onOff(ver)
	}
	var has, hold bool
	if _, err := get(top, "hasImmutabilityPolicy", &has); err != nil {
		return Bucket{}, err
	}
	if _, err := get(top, "hasLegalHold", &hold); err != nil {
		return Bucket{}, err
	}
	var iwv struct {
		Enabled bool `json:"enabled"`
	}
	if _, err := get(top, "immutableStorageWithVersioning", &iwv); err != nil {
		return Bucket{}, err
	}
	var pol struct {
		Days  *json.Number `json:"immutabilityPeriodSinceCreationInDays"`
		State string       `json:"state"`
	}
	if ok, err := get(top, "immutabilityPolicy", &pol); err != nil {
		return Bucket{}, err
	} else if ok && pol.Days != nil {
		has = true
	}
	for _, k := range []string{"hasImmutabilityPolicy", "hasLegalHold", "immutableStorageWithVersioning", "immutabilityPolicy"} {
		if _, ok := top[k]; ok {
			known = true
		}
	}
	if has || hold || iwv.Enabled {
		// A container's settings: they apply to that container only.
		var name string
		if _, err := get(top, "name", &name); err == nil {
			b.Bucket = name
		}
		lock := &ObjectLock{Enabled: true, Mode: "immutability policy", Locked: pol.State == "Locked"}
		if hold {
			lock.Mode = "legal hold"
		}
		if pol.Days != nil {
			n, err := days(*pol.Days)
			if err != nil {
				return Bucket{}, fmt.Errorf("immutabilityPolicy.immutabilityPeriodSinceCreationInDays: %w", err)
			}
			lock.Days = n
		}
		b.ObjectLock = lock
	}
	if !known {
		return Bucket{}, fmt.Errorf("no management policy, soft delete, versioning or immutability settings")
	}
	return b, nil
}
