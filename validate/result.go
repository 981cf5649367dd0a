package validate

import (
	"fmt"
	"time"
)

// Status is the outcome of one probe.
type Status string

const (
	// Pass: the probe did what a job needs and the store answered as the
	// gateway contract says.
	Pass Status = "pass"
	// Fail: the probe found a problem the job would hit.
	Fail Status = "fail"
	// Skip: the probe did not run because a probe it depends on failed
	// (or the run was interrupted first).
	Skip Status = "skip"
	// Unknown: the probe ran but could not tell (existence when the
	// principal may not read bucket metadata, identity when no identity
	// service answers, a setting the data plane cannot read).
	Unknown Status = "unknown"
)

// Layer groups probes; the layers are reported in this order.
type Layer string

const (
	LayerCredentials   Layer = "credentials"
	LayerIdentity      Layer = "identity"
	LayerNetwork       Layer = "network"
	LayerClock         Layer = "clock"
	LayerContainer     Layer = "container"
	LayerAuthorization Layer = "authorization"
	LayerInfo          Layer = "info"
	LayerCleanup       Layer = "cleanup"
)

// Operations, as they appear in results.
const (
	OpResolve     = "resolve"
	OpWhoAmI      = "whoami"
	OpDNS         = "dns"
	OpTCP         = "tcp"
	OpTLS         = "tls"
	OpSkew        = "skew"
	OpExists      = "exists"
	OpList        = "list"
	OpGetMetadata = "get metadata"
	OpPut         = "put"
	OpPutIfAbsent = "put if-absent"
	OpPutIfMatch  = "put if-match"
	OpGet         = "get"
	OpDelete      = "delete"
	OpVersioning  = "versioning"
	OpSoftDelete  = "soft delete"
	OpObjectLock  = "object lock"
	OpRemove      = "remove probe keys"
)

// Result is one probe's outcome.
type Result struct {
	Layer     Layer  `json:"layer"`
	Operation string `json:"operation"`
	Result    Status `json:"result"`
	// Code is the provider's error code (AccessDenied,
	// AuthorizationPermissionMismatch, EACCES, ECONNREFUSED, ...), empty
	// when the probe passed or no code applies.
	Code string `json:"code"`
	// Kind is the gateway error kind of a failure: permission, not_found,
	// exists, precondition, unavailable, unsupported, invalid_key, ...
	Kind string `json:"kind,omitempty"`
	// Message says what was found, in one line; secrets are redacted.
	Message string `json:"message"`
	// RequestID is the provider's request id of a failed request, when the
	// SDK gives one.
	RequestID string `json:"request_id,omitempty"`
	// Address is what the probe tried: a host, a host:port, an endpoint.
	Address    string  `json:"address,omitempty"`
	DurationMS float64 `json:"duration_ms"`
}

// Report is the outcome of one validate-access run.
type Report struct {
	// URL is the store URL with secrets redacted.
	URL string `json:"url"`
	// Principal is who the store sees, as well as the probes could tell
	// (an ARN, a service account email, an Azure object id, an account
	// name, an access key id, uid=N(name) gid=N(name)).
	Principal string `json:"principal"`
	// OK is true when no probe failed.
	OK bool `json:"ok"`
	// ProbeKey is the key the authorization probes wrote (always removed).
	ProbeKey string `json:"probe_key,omitempty"`
	// Warnings are what the caller should know about the run itself, in
	// one line each: a run as root on a local disk, whose permission checks
	// the kernel skips, says the job principal is probably not root and
	// points at --as-user.
	Warnings   []string `json:"warnings,omitempty"`
	Results    []Result `json:"results"`
	DurationMS float64  `json:"duration_ms"`
}

// Failed returns the results that failed, in report order.
func (r *Report) Failed() []Result {
	var out []Result
	for _, res := range r.Results {
		if res.Result == Fail {
			out = append(out, res)
		}
	}
	return out
}

// Find returns the result of layer/op, and whether there is one.
func (r *Report) Find(layer Layer, op string) (Result, bool) {
	for _, res := range r.Results {
		if res.Layer == layer && res.Operation == op {
			return res, true
		}
	}
	return Result{}, false
}

func (r *Report) finish(took time.Duration) {
	r.OK = true
	for _, res := range r.Results {
		if res.Result == Fail {
			r.OK = false
		}
	}
	r.DurationMS = ms(took)
}

// ms turns d into milliseconds with microsecond precision.
func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

// String is a one-line summary: "ok (14 probes)" or "2 of 14 probes
// failed, first: authorization/put (AccessDenied)".
func (r *Report) String() string {
	failed := r.Failed()
	if len(failed) == 0 {
		return fmt.Sprintf("ok (%d probes)", len(r.Results))
	}
	first := failed[0]
	s := fmt.Sprintf("%d of %d probes failed, first: %s/%s", len(failed), len(r.Results), first.Layer, first.Operation)
	if first.Code != "" {
		s += " (" + first.Code + ")"
	}
	return s
}
