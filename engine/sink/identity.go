package sink

import (
	"crypto/sha256"
	"encoding/hex"
	"maps"
	"slices"
	"strings"

	"github.com/ckgate/ckgate/gateway"
)

// URLHashKey is the identity field that holds the SHA-256 of a sink's full
// URL: the plan records the URL redacted (gateway.Redact), and a restart
// with a URL that differs only in a hidden part (user info, a query value,
// the fragment — a rotated key too) is told apart by this hash.
const URLHashKey = "url_sha256"

// URLHash is the URLHashKey value of raw.
func URLHash(raw string) string {
	sum := sha256.Sum256([]byte(raw))
	return "sha256:" + hex.EncodeToString(sum[:])
}

// SameURL reports whether two sink URLs, as recorded and as given now, are
// the same once redacted, whatever the order of their query parameters: a
// plan written before the allowlist redactor recorded the URL redacted by
// a list of secret-looking names (and its query re-encoded in name order).
func SameURL(recorded, current string) bool {
	a, b := gateway.Redact(recorded), gateway.Redact(current)
	return a == b || urlKey(a) == urlKey(b)
}

// urlKey is a redacted URL with its query pairs sorted.
func urlKey(u string) string {
	base, query, ok := strings.Cut(u, "?")
	if !ok {
		return u
	}
	query, frag, _ := strings.Cut(query, "#")
	pairs := strings.FieldsFunc(query, func(r rune) bool { return r == '&' || r == ';' })
	slices.Sort(pairs)
	return base + "?" + strings.Join(pairs, "&") + "#" + frag
}

// SameIdentity compares a sink or source identity recorded in a plan with
// the current one: every field equal, except that "url" is compared with
// SameURL, and URLHashKey only when the plan has one (plans written before
// it was recorded do not).
func SameIdentity(recorded, current map[string]string) bool {
	for _, k := range slices.Sorted(maps.Keys(unionOf(recorded, current))) {
		rv, rok := recorded[k]
		cv, cok := current[k]
		switch {
		case k == URLHashKey && !rok:
		case k == "url" && rok && cok:
			if !SameURL(rv, cv) {
				return false
			}
		case rok != cok || rv != cv:
			return false
		}
	}
	return true
}

// HiddenChange reports whether recorded and current differ only in the
// hidden parts of their URL (SameIdentity is false because of URLHashKey).
func HiddenChange(recorded, current map[string]string) bool {
	if _, ok := recorded[URLHashKey]; !ok || recorded[URLHashKey] == current[URLHashKey] {
		return false
	}
	r, c := maps.Clone(recorded), maps.Clone(current)
	delete(r, URLHashKey)
	delete(c, URLHashKey)
	return SameIdentity(r, c)
}

// Stale reports whether a recorded identity that SameIdentity accepts is
// in an older form than current (no URL hash, or a URL the redactor would
// now hide more of): the plan should be written again in the current form.
func Stale(recorded, current map[string]string) bool {
	if _, ok := current[URLHashKey]; ok {
		if _, ok := recorded[URLHashKey]; !ok {
			return true
		}
	}
	u, ok := recorded["url"]
	return ok && gateway.Redact(u) != u
}

func unionOf(a, b map[string]string) map[string]bool {
	out := make(map[string]bool, len(a)+len(b))
	for k := range a {
		out[k] = true
	}
	for k := range b {
		out[k] = true
	}
	return out
}
