package gateway

import (
	"net/url"
	"regexp"
	"strings"
)

// Redacted replaces every hidden value.
const Redacted = "REDACTED"

// safeParams are the query parameters whose values Redact shows: the
// store URLs' documented settings that are names, switches and sizes (not
// external_id, a shared secret, nor credentials_file, a path that may say
// too much), and the non-secret fields of an Azure connection string. Every other query
// value is hidden, whatever its name. Names compare case-insensitively
// after percent-decoding. A value that holds a URL (?endpoint=http://…)
// is itself redacted; a value with '=' or '\' in it (a smuggled pair) is
// hidden.
var safeParams = map[string]bool{
	// s3://
	"region": true, "endpoint": true, "path_style": true, "force_path_style": true,
	"use_path_style": true, "disable_ssl": true, "profile": true, "part_size": true,
	"max_attempts": true, "role_arn": true, "role_session_name": true,
	// every cloud scheme
	"try_timeout": true,
	// gs://
	"project": true, "anonymous": true, "impersonate": true, "delegates": true,
	// Azure connection strings (AccountKey and SharedAccessSignature are not here).
	"defaultendpointsprotocol": true, "accountname": true, "endpointsuffix": true,
	"blobendpoint": true,
}

// safeSchemeParams are safe on one scheme only: az://'s auth names a
// method (key, sas, …), an http URL's auth= is often a token.
var safeSchemeParams = map[string]map[string]bool{
	"az": {"auth": true},
}

// SafeParam reports whether Redact shows the value of the query parameter
// name in a URL of scheme ("" for text that is not a URL).
func SafeParam(scheme, name string) bool {
	n := name
	if d, err := url.QueryUnescape(name); err == nil {
		n = d
	}
	n = strings.ToLower(n)
	return safeParams[n] || safeSchemeParams[strings.ToLower(scheme)][n]
}

// Redact returns s — a URL, a path, or a message that may hold URLs, query
// strings and connection strings — with its secrets hidden, for every
// message, log, decision log, progress event and file ckgate writes:
//
//   - in a URL (scheme://…): the user info, the fragment and every query
//     value except those of SafeParam;
//   - in a word with a query (path?a=b, a=b&c=d, a=b;c=d): the same;
//   - in other text: values of secret-looking name=value pairs (password
//     = x, AccountKey=x, code=x, …), bearer tokens, JSON web tokens and
//     Google access tokens; AWS access key ids keep their last 4
//     characters (MaskID).
//
// Everything else is returned as it is, byte for byte. Redact never fails
// and is idempotent.
func Redact(s string) string {
	if len(s) < 16 && !strings.ContainsAny(s, "=:?#@") {
		return s
	}
	var b strings.Builder
	prose := 0 // start of the text not yet written
	for i := 0; i < len(s); {
		if isWordSep(s[i]) {
			i++
			continue
		}
		j := i
		for j < len(s) && !isWordSep(s[j]) {
			j++
		}
		if pre, red, ok := redactWord(s[i:j]); ok {
			b.WriteString(redactProse(s[prose:i] + pre))
			b.WriteString(red)
			prose = j
		}
		i = j
	}
	b.WriteString(redactProse(s[prose:]))
	return tokens(b.String())
}

// isWordSep ends a word: URLs and query strings do not hold these
// unescaped, and messages quote URLs with them.
func isWordSep(c byte) bool {
	switch c {
	case ' ', '\t', '\n', '\r', '\v', '\f', '"', '\'', '`', '<', '>':
		return true
	}
	return false
}

// schemeStart finds "scheme://" in a word; opaqueScheme, "scheme:" at
// its start.
var (
	schemeStart  = regexp.MustCompile(`[A-Za-z][A-Za-z0-9+.-]*://`)
	opaqueScheme = regexp.MustCompile(`^[A-Za-z][A-Za-z0-9+.-]*:`)
)

// redactWord redacts a word holding a URL or a query string: pre is the
// text before it (left to the prose rules), red the redacted rest. ok is
// false for a word of plain text.
func redactWord(w string) (pre, red string, ok bool) {
	if !strings.ContainsAny(w, ":?=#") {
		return "", "", false
	}
	start := -1
	if strings.Contains(w, "://") {
		if loc := schemeStart.FindStringIndex(w); loc != nil && !strings.ContainsAny(w[:loc[0]], "?&;#") {
			start = loc[0]
		}
	}
	if start < 0 && strings.ContainsAny(w, "?#") && opaqueScheme.MatchString(w) {
		start = 0 // scheme:opaque?query#fragment
	}
	if start >= 0 {
		u := w[start:]
		// Trailing punctuation of the sentence around the URL; at most two
		// bytes, so that no hidden value can be kept out this way.
		cut := len(u)
		for n := 0; n < 2 && cut > 0 && strings.IndexByte(".,;:!?)]}", u[cut-1]) >= 0; n++ {
			cut--
		}
		return w[:start], redactURL(u[:cut]) + u[cut:], true
	}
	if q := strings.IndexByte(w, '?'); q >= 0 && strings.IndexByte(w[q:], '=') >= 0 {
		return "", w[:q+1] + redactQuery("", w[q+1:]), true
	}
	if strings.IndexByte(w, '=') >= 0 && strings.ContainsAny(w, "&;") {
		return "", redactQuery("", w), true
	}
	return "", "", false
}

// redactURL redacts one URL that starts with its scheme.
func redactURL(u string) string {
	i := strings.IndexByte(u, ':')
	if i < 0 {
		return u
	}
	scheme, rest := u[:i], u[i+1:]
	var b strings.Builder
	b.WriteString(u[:i+1])
	if strings.HasPrefix(rest, "//") {
		b.WriteString("//")
		rest = rest[2:]
		end := strings.IndexAny(rest, "/?#")
		if end < 0 {
			end = len(rest)
		}
		if at := userInfoEnd(rest, end); at >= 0 {
			b.WriteString(Redacted)
			rest = rest[at:]
		}
	}
	// rest: authority, path, ?query, #fragment.
	if q := strings.IndexAny(rest, "?#"); q >= 0 {
		b.WriteString(rest[:q])
		if rest[q] == '?' {
			b.WriteByte('?')
			b.WriteString(redactQuery(scheme, rest[q+1:]))
		} else {
			b.WriteString(redactFragment(rest[q:]))
		}
		return b.String()
	}
	b.WriteString(rest)
	return b.String()
}

// userInfoEnd returns the index of the '@' that ends rest's user info, or
// -1. The user info ends at the last '@' of the authority (rest[:end]);
// when the authority is "user:pass" without '@' (a password with an
// unescaped '/' in it), at the last '@' before the query or fragment.
func userInfoEnd(rest string, end int) int {
	if at := strings.LastIndexByte(rest[:end], '@'); at >= 0 {
		return at
	}
	auth := rest[:end]
	c := strings.IndexByte(auth, ':')
	if c < 0 || strings.HasPrefix(auth, "[") || allDigits(auth[c+1:]) {
		return -1
	}
	qf := strings.IndexAny(rest, "?#")
	if qf < 0 {
		qf = len(rest)
	}
	return strings.LastIndexByte(rest[:qf], '@')
}

func allDigits(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

// redactQuery redacts a query string (and a #fragment after it): pairs
// are separated by '&' or ';', and every value but a safe one is hidden.
// A pair without '=' is a value.
func redactQuery(scheme, q string) string {
	frag := ""
	if h := strings.IndexByte(q, '#'); h >= 0 {
		q, frag = q[:h], redactFragment(q[h:])
	}
	var b strings.Builder
	for q != "" {
		pair := q
		sep := strings.IndexAny(q, "&;")
		if sep >= 0 {
			pair = q[:sep]
		}
		name, value, has := strings.Cut(pair, "=")
		switch {
		case !has && pair != "":
			b.WriteString(Redacted)
		case !has:
		case value == "":
			b.WriteString(pair)
		case SafeParam(scheme, name):
			b.WriteString(name + "=" + safeValue(value))
		default:
			b.WriteString(name + "=" + Redacted)
		}
		if sep < 0 {
			break
		}
		b.WriteByte(q[sep])
		q = q[sep+1:]
	}
	return b.String() + frag
}

func redactFragment(f string) string {
	if f == "#" {
		return f
	}
	return "#" + Redacted
}

// safeValue is the value of a safe parameter as shown: a URL in it is
// redacted (and escaped again if it was), a smuggled pair is hidden.
func safeValue(v string) string {
	dec, err := url.QueryUnescape(v)
	if err != nil {
		return Redacted
	}
	if strings.Contains(dec, "://") {
		red := Redact(dec)
		switch {
		case red == dec:
			return v
		case dec != v:
			return url.QueryEscape(red)
		}
		return red
	}
	if strings.ContainsAny(dec, "=\\") {
		return Redacted
	}
	return v
}

// secretAssign matches name=value (and name: value) pairs of plain text
// whose name looks secret; secretShort, pairs whose whole name is a short
// secret one (code=, auth=, pwd=, jwt=, sig=, sas=). These are the rules for
// text; URLs and query strings are redacted by allowlist.
var (
	secretAssign = regexp.MustCompile(`(?i)\b([a-z0-9_.-]*(?:secret|token|password|passwd|credential|accountkey|access_?key|api_?key|signature)[a-z0-9_.-]*)(\s*[=:]\s*)("[^"]*"|[^\s&;,"']+)`)
	secretShort  = regexp.MustCompile(`(?i)(^|[^a-z0-9_.-])(code|auth|pwd|jwt|sig|sas|sharedaccesssignature)(\s*=\s*)("[^"]*"|[^\s&;,"']+)`)
	bearer       = regexp.MustCompile(`(?i)\b(bearer\s+)[A-Za-z0-9._~+/=-]{8,}`)
)

// Words the text rules look for (lower case), a cheap test before the
// expressions.
var (
	assignMarkers = []string{"secret", "token", "passw", "credential", "accountkey", "key", "signature"}
	shortMarkers  = []string{"code", "auth", "pwd", "jwt", "sig", "sas"}
)

// redactProse applies the rules for text that is not a URL or query.
func redactProse(s string) string {
	if !strings.ContainsAny(s, "=:") && !strings.Contains(s, "earer") && !strings.Contains(s, "EARER") {
		return s
	}
	lower := strings.ToLower(s)
	if containsAny(lower, assignMarkers) {
		s = secretAssign.ReplaceAllString(s, "${1}${2}"+Redacted)
	}
	if strings.IndexByte(s, '=') >= 0 && containsAny(lower, shortMarkers) {
		s = secretShort.ReplaceAllString(s, "${1}${2}${3}"+Redacted)
	}
	if strings.Contains(lower, "bearer") {
		s = bearer.ReplaceAllString(s, "${1}"+Redacted)
	}
	return s
}

func containsAny(s string, words []string) bool {
	for _, w := range words {
		if strings.Contains(s, w) {
			return true
		}
	}
	return false
}

// Token shapes hidden anywhere, URLs included.
var (
	accessKeyID = regexp.MustCompile(`\b(?:AKIA|ASIA|AROA|AIDA|AGPA|ANPA|ANVA|APKA|ABIA|ACCA)[0-9A-Z]{16}\b`)
	jwt         = regexp.MustCompile(`\beyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}`)
	googleToken = regexp.MustCompile(`\bya29\.[A-Za-z0-9_-]{10,}`)
)

func tokens(s string) string {
	if len(s) < 16 {
		return s
	}
	if upperRun(s, 20) {
		s = accessKeyID.ReplaceAllStringFunc(s, MaskID)
	}
	if strings.Contains(s, "eyJ") {
		s = jwt.ReplaceAllString(s, Redacted)
	}
	if strings.Contains(s, "ya29.") {
		s = googleToken.ReplaceAllString(s, Redacted)
	}
	return s
}

// upperRun reports whether s has n upper-case letters and digits in a row
// (the shape of an access key id), a cheap test before the expression.
func upperRun(s string, n int) bool {
	run := 0
	for i := 0; i < len(s); i++ {
		if c := s[i]; c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' {
			if run++; run >= n {
				return true
			}
		} else {
			run = 0
		}
	}
	return false
}

// MaskID returns an identifier that is not a secret but should not be
// shown whole (an AWS access key id): "****" and its last 4 characters, or
// only "****" when it is shorter than 12 characters.
func MaskID(id string) string {
	if id == "" {
		return ""
	}
	if len(id) < 12 {
		return "****"
	}
	return "****" + id[len(id)-4:]
}
