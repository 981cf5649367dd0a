package s3store

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"slices"
	"strconv"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/credentials/stscreds"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/sts"

	"github.com/ckgate/ckgate/gateway"
)

// Scheme is the URL scheme of this backend.
const Scheme = "s3"

// Part sizes accepted by the part_size parameter (S3's own limits).
const (
	MinPartSize     = 5 << 20
	MaxPartSize     = 5 << 30
	DefaultPartSize = 8 << 20
)

// params are the query parameters Open accepts, in the order they are
// documented.
var params = []string{
	"region", "endpoint", "path_style", "profile",
	"role_arn", "role_session_name", "external_id",
	"part_size", "max_attempts",
}

// settings is a parsed s3:// URL.
type settings struct {
	Bucket          string
	Prefix          string // "" or "a/b/" (always ends with '/')
	Region          string
	Endpoint        string
	PathStyle       bool
	Profile         string
	RoleARN         string
	RoleSessionName string
	ExternalID      string
	PartSize        int64
	MaxAttempts     int // 0: the SDK's default
}

// parseURL checks u and returns its settings. Errors never contain a
// secret: the URL is redacted before it is printed.
func parseURL(u *url.URL) (settings, error) {
	bad := func(format string, args ...any) error {
		return fmt.Errorf("%w %q: %s", gateway.ErrInvalidURL, shown(u), fmt.Sprintf(format, args...))
	}
	var s settings
	if u == nil {
		return s, fmt.Errorf("%w: nil URL", gateway.ErrInvalidURL)
	}
	if !strings.EqualFold(u.Scheme, Scheme) {
		return s, bad("scheme %q is not %q", u.Scheme, Scheme)
	}
	if u.Opaque != "" {
		return s, bad("want s3://bucket/prefix")
	}
	if u.User != nil {
		return s, bad("credentials in the URL are refused: use AWS_* environment variables, a profile or a role")
	}
	if u.Fragment != "" || u.RawFragment != "" {
		return s, bad("a fragment is not allowed")
	}
	if u.Port() != "" || strings.Contains(u.Host, ":") {
		return s, bad("the host part is a bucket name and takes no port; use ?endpoint= for a custom server")
	}
	s.Bucket = u.Host
	if reason := bucketProblem(s.Bucket); reason != "" {
		return s, bad("bucket %q: %s", s.Bucket, reason)
	}
	if p := strings.Trim(u.Path, "/"); p != "" {
		if err := gateway.ValidateKey("open", p); err != nil {
			return s, bad("prefix: %v", err)
		}
		s.Prefix = p + "/"
	}

	q, err := url.ParseQuery(u.RawQuery)
	if err != nil {
		return s, bad("query: %v", err)
	}
	for name, vals := range q {
		if !slices.Contains(params, name) {
			if secretLooking(name) {
				return s, bad("parameter %q: credentials in the URL are refused: use AWS_* environment variables, a profile or a role", name)
			}
			return s, bad("unknown parameter %q (known: %s)", name, strings.Join(params, ", "))
		}
		if len(vals) != 1 {
			return s, bad("parameter %q given %d times", name, len(vals))
		}
		if vals[0] == "" {
			return s, bad("parameter %q is empty", name)
		}
	}
	s.Region = q.Get("region")
	s.Profile = q.Get("profile")
	s.RoleARN = q.Get("role_arn")
	s.RoleSessionName = q.Get("role_session_name")
	s.ExternalID = q.Get("external_id")
	if s.RoleARN == "" && (s.RoleSessionName != "" || s.ExternalID != "") {
		return s, bad("role_session_name and external_id need role_arn")
	}
	if s.RoleARN != "" && !strings.HasPrefix(s.RoleARN, "arn:") {
		return s, bad("role_arn %q is not an ARN", s.RoleARN)
	}
	if e := q.Get("endpoint"); e != "" {
		eu, err := url.Parse(e)
		if err != nil || (eu.Scheme != "http" && eu.Scheme != "https") || eu.Host == "" {
			return s, bad("endpoint: want http(s)://host[:port]")
		}
		if eu.User != nil {
			return s, bad("endpoint: credentials in the URL are refused")
		}
		if eu.RawQuery != "" || eu.Fragment != "" {
			return s, bad("endpoint: want http(s)://host[:port], without a query or fragment")
		}
		s.Endpoint = e
	}
	if v := q.Get("path_style"); v != "" {
		b, err := strconv.ParseBool(v)
		if err != nil {
			return s, bad("path_style %q: want true or false", v)
		}
		s.PathStyle = b
	}
	s.PartSize = DefaultPartSize
	if v := q.Get("part_size"); v != "" {
		n, err := parseSize(v)
		if err != nil {
			return s, bad("part_size %q: %v", v, err)
		}
		if n < MinPartSize || n > MaxPartSize {
			return s, bad("part_size %q: must be between 5MiB and 5GiB", v)
		}
		s.PartSize = n
	}
	if v := q.Get("max_attempts"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 || n > 20 {
			return s, bad("max_attempts %q: want 1 to 20", v)
		}
		s.MaxAttempts = n
	}
	return s, nil
}

// bucketProblem checks S3's bucket naming rules (general purpose buckets).
func bucketProblem(b string) string {
	switch {
	case b == "":
		return "missing bucket name (want s3://bucket/prefix)"
	case len(b) < 3 || len(b) > 63:
		return "must be 3 to 63 characters"
	}
	for i := 0; i < len(b); i++ {
		c := b[i]
		if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-' || c == '.') {
			return "only lowercase letters, digits, '-' and '.' are allowed"
		}
	}
	first, last := b[0], b[len(b)-1]
	if first == '-' || first == '.' || last == '-' || last == '.' {
		return "must begin and end with a letter or digit"
	}
	if strings.Contains(b, "..") {
		return "must not contain '..'"
	}
	return ""
}

// shown is u for messages, redacted.
func shown(u *url.URL) string {
	if u == nil {
		return ""
	}
	return gateway.Redact(u.String())
}

// secretLooking names the parameters refused as credentials (a better
// message than "unknown parameter"); it redacts nothing.
func secretLooking(name string) bool {
	n := strings.ToLower(name)
	for _, s := range []string{"secret", "key", "token", "password", "credential", "sig"} {
		if strings.Contains(n, s) {
			return true
		}
	}
	return false
}

// parseSize reads "8388608", "8MiB", "512KiB" or "1GiB".
func parseSize(v string) (int64, error) {
	mult := int64(1)
	for _, u := range []struct {
		suffix string
		mult   int64
	}{{"KiB", 1 << 10}, {"MiB", 1 << 20}, {"GiB", 1 << 30}} {
		if strings.HasSuffix(v, u.suffix) {
			v, mult = strings.TrimSuffix(v, u.suffix), u.mult
			break
		}
	}
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil || n <= 0 {
		return 0, errors.New("want a positive byte count, optionally with KiB, MiB or GiB")
	}
	if n > MaxPartSize/mult+1 {
		return 0, errors.New("too large")
	}
	return n * mult, nil
}

// Open opens the store named by an s3:// URL (see the package
// documentation for the parameters). It loads credentials the way the AWS
// CLI does but sends no request: use validate-access or MakeBucket to
// reach the service.
func Open(ctx context.Context, u *url.URL) (gateway.Store, error) {
	s, err := parseURL(u)
	if err != nil {
		return nil, err
	}
	where := shown(u)
	opts := []func(*config.LoadOptions) error{config.WithLogger(sdkLogger{gateway.LoggerFrom(ctx)})}
	if s.Region != "" {
		opts = append(opts, config.WithRegion(s.Region))
	}
	if s.Profile != "" {
		opts = append(opts, config.WithSharedConfigProfile(s.Profile))
	}
	if s.MaxAttempts > 0 {
		opts = append(opts, config.WithRetryMaxAttempts(s.MaxAttempts))
	}
	opts = append(opts, config.WithHTTPClient(httpClient(ctx)))
	cfg, err := config.LoadDefaultConfig(ctx, opts...)
	if err != nil {
		return nil, fmt.Errorf("s3 store %q: load AWS configuration: %w", where, err)
	}
	if cfg.Region == "" {
		if s.Endpoint == "" {
			return nil, fmt.Errorf("%w %q: no region: add ?region= or set AWS_REGION", gateway.ErrInvalidURL, where)
		}
		cfg.Region = "us-east-1"
	}
	if s.RoleARN != "" {
		provider := stscreds.NewAssumeRoleProvider(sts.NewFromConfig(cfg), s.RoleARN, func(o *stscreds.AssumeRoleOptions) {
			if s.RoleSessionName != "" {
				o.RoleSessionName = s.RoleSessionName
			}
			if s.ExternalID != "" {
				o.ExternalID = aws.String(s.ExternalID)
			}
		})
		cfg.Credentials = aws.NewCredentialsCache(provider)
	}
	client := s3.NewFromConfig(cfg, func(o *s3.Options) {
		if s.Endpoint != "" {
			o.BaseEndpoint = aws.String(s.Endpoint)
		}
		o.UsePathStyle = s.PathStyle
	})
	st := New(client, s.Bucket, s.Prefix)
	st.d.partSize = s.PartSize
	return st, nil
}
