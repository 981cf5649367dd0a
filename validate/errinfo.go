package validate

import (
	"context"
	"crypto/x509"
	"errors"
	"net"
	"net/http"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"golang.org/x/sys/unix"
	"google.golang.org/api/googleapi"

	"github.com/ckgate/ckgate/gateway"
)

// errInfo is what a probe reports about an error: the provider's code,
// the HTTP status, the request id and the gateway kind.
type errInfo struct {
	code      string
	status    int
	requestID string
	kind      string
	header    http.Header // of the failed response, when known
}

// inspect digs the provider's details out of err's chain: AWS (smithy
// API errors and response errors), Azure (*azcore.ResponseError), Google
// (*googleapi.Error), and the local ones (errno, DNS, TLS, timeouts).
func inspect(err error) errInfo {
	var info errInfo
	if err == nil {
		return info
	}
	info.kind = gateway.KindName(err)

	var (
		apiCode interface{ ErrorCode() string }
		reqID   interface{ ServiceRequestID() string }
		status  interface{ HTTPStatusCode() int }
		azErr   *azcore.ResponseError
		gErr    *googleapi.Error
		dnsErr  *net.DNSError
		errno   syscall.Errno
		unknown x509.UnknownAuthorityError
		host    x509.HostnameError
		invalid x509.CertificateInvalidError
		netErr  net.Error
	)
	switch {
	case errors.As(err, &azErr):
		info.code, info.status = azErr.ErrorCode, azErr.StatusCode
		if azErr.RawResponse != nil {
			info.header = azErr.RawResponse.Header
			info.requestID = azErr.RawResponse.Header.Get("x-ms-request-id")
		}
	case errors.As(err, &gErr):
		info.status = gErr.Code
		if len(gErr.Errors) > 0 {
			info.code = gErr.Errors[0].Reason
		}
		info.header = gErr.Header
		if gErr.Header != nil {
			info.requestID = gErr.Header.Get("X-Guploader-Uploadid")
		}
	case errors.As(err, &apiCode):
		info.code = apiCode.ErrorCode()
	}
	if info.requestID == "" && errors.As(err, &reqID) {
		info.requestID = reqID.ServiceRequestID()
	}
	if info.status == 0 && errors.As(err, &status) {
		info.status = status.HTTPStatusCode()
	}
	if info.code != "" {
		return info
	}
	switch {
	case errors.Is(err, context.DeadlineExceeded):
		info.code = "TIMEOUT"
	case errors.Is(err, context.Canceled):
		info.code = "CANCELED"
	case errors.As(err, &dnsErr):
		switch {
		case dnsErr.IsNotFound:
			info.code = "NXDOMAIN"
		case dnsErr.IsTimeout:
			info.code = "DNS_TIMEOUT"
		default:
			info.code = "DNS_ERROR"
		}
	case errors.As(err, &errno):
		if name := unix.ErrnoName(errno); name != "" {
			info.code = name
		} else {
			info.code = "ERRNO_" + strconv.Itoa(int(errno))
		}
	case errors.As(err, &unknown):
		info.code = "X509_UNKNOWN_AUTHORITY"
	case errors.As(err, &host):
		info.code = "X509_HOSTNAME_MISMATCH"
	case errors.As(err, &invalid):
		info.code = "X509_INVALID"
	case errors.As(err, &netErr) && netErr.Timeout():
		info.code = "TIMEOUT"
	case info.status != 0:
		info.code = "HTTP_" + strconv.Itoa(info.status)
	}
	return info
}

// sdkNoise matches the parts of AWS SDK messages a result shows in its
// own fields (the request id) or that help nobody here (the host id).
var sdkNoise = regexp.MustCompile(`, (RequestID|HostID): [^,]*`)

// firstLine returns s up to its first line break, without SDK noise, cut
// at 400 bytes.
func firstLine(s string) string {
	if i := strings.IndexAny(s, "\r\n"); i >= 0 {
		s = s[:i]
	}
	s = sdkNoise.ReplaceAllString(s, "")
	if len(s) > 400 {
		s = s[:400] + "..."
	}
	return strings.TrimSpace(s)
}

// redactor masks, in every message a report carries, the secret values
// registered at run time (SAS tokens, account keys, connection strings from
// flags and the environment) and the access key ids (to their last 4
// characters), then redacts the rest with gateway.Redact (URL user info,
// fragments and query values, tokens in text).
// It is safe for concurrent use (probes run in parallel).
type redactor struct {
	mu      sync.Mutex
	secrets []string
	ids     []string
}

// add registers a secret; short values are ignored (they would mask
// ordinary words).
func (r *redactor) add(secrets ...string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, s := range secrets {
		s = strings.TrimPrefix(strings.TrimSpace(s), "?")
		if len(s) >= 8 {
			r.secrets = append(r.secrets, s)
		}
	}
}

// addID registers an identifier shown only as gateway.MaskID shows it (an
// access key id).
func (r *redactor) addID(id string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if len(id) >= 4 && !slices.Contains(r.ids, id) {
		r.ids = append(r.ids, id)
	}
}

// clean returns msg with every registered secret and id masked, then
// redacted.
func (r *redactor) clean(msg string) string {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, s := range r.secrets {
		msg = strings.ReplaceAll(msg, s, gateway.Redacted)
	}
	for _, id := range r.ids {
		msg = strings.ReplaceAll(msg, id, gateway.MaskID(id))
	}
	return gateway.Redact(msg)
}

// containerKind classifies an error of a bucket- or container-level request
// by its HTTP status; notFound reports provider codes that also mean "no
// such bucket".
func containerKind(err error, notFound func(errInfo) bool) error {
	info := inspect(err)
	switch {
	case info.status == http.StatusNotFound || (notFound != nil && notFound(info)):
		return gateway.ErrNotFound
	case info.status == http.StatusForbidden || info.status == http.StatusUnauthorized:
		return gateway.ErrPermission
	case info.status >= 500 || info.status == 0:
		return gateway.ErrUnavailable
	}
	return gateway.ErrUnsupported
}
