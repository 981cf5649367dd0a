package validate

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials/stscreds"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/sts"

	"github.com/ckgate/ckgate/gateway"
	"github.com/ckgate/ckgate/gateway/s3store"
)

// identityTimeout bounds the identity lookups (STS, token info): when
// they do not answer quickly, the identity is reported as unknown.
const identityTimeout = 5 * time.Second

// openS3 opens an s3:// store with the AWS flags applied: a profile, a role
// and an external id become the URL's own parameters; a web identity token
// file other than the environment's gets its own provider.
func openS3(ctx context.Context, u *url.URL, id Identity, red *redactor) (*backend, error) {
	q := newParams(u)
	if id.AWSProfile != os.Getenv("AWS_PROFILE") {
		if err := q.set("profile", id.AWSProfile, "--aws-profile"); err != nil {
			return nil, err
		}
	}
	envToken, envRole := os.Getenv("AWS_WEB_IDENTITY_TOKEN_FILE"), os.Getenv("AWS_ROLE_ARN")
	webToken := id.AWSWebIdentityTokenFile
	// The SDK's chain does web identity by itself when the token file
	// and the role are the environment's.
	sdkWeb := webToken != "" && webToken == envToken && (id.AWSRoleARN == "" || id.AWSRoleARN == envRole)
	explicitWeb := webToken != "" && !sdkWeb
	switch {
	case explicitWeb && id.AWSRoleARN == "":
		return nil, usagef("--aws-web-identity-token-file needs --aws-role-arn (or AWS_ROLE_ARN)")
	case !explicitWeb && !sdkWeb:
		for _, p := range []struct{ name, value, flag string }{
			{"role_arn", id.AWSRoleARN, "--aws-role-arn"},
			{"role_session_name", id.AWSRoleSessionName, "--aws-role-session-name"},
			{"external_id", id.AWSExternalID, "--aws-external-id"},
		} {
			if p.name != "role_arn" && q.get("role_arn") == "" {
				continue // session name and external id only go with a role
			}
			if err := q.set(p.name, p.value, p.flag); err != nil {
				return nil, err
			}
		}
	}
	c := q.apply(u)
	shown := gateway.Redact(c.String())
	b := &backend{shown: shown, red: red}

	s, err := s3store.Open(ctx, &c)
	if errors.Is(err, gateway.ErrInvalidURL) {
		return nil, usagef("%w", err)
	}
	if err != nil {
		return failedOpen(b, err), nil
	}
	st := s.(*s3store.Store)
	client := st.Client()
	opts := client.Options()
	if explicitWeb {
		stsClient := sts.New(sts.Options{Region: opts.Region, HTTPClient: opts.HTTPClient})
		provider := stscreds.NewWebIdentityRoleProvider(stsClient, id.AWSRoleARN, stscreds.IdentityTokenFile(webToken),
			func(o *stscreds.WebIdentityRoleOptions) {
				if id.AWSRoleSessionName != "" {
					o.RoleSessionName = id.AWSRoleSessionName
				}
			})
		client = s3.New(opts, func(o *s3.Options) { o.Credentials = aws.NewCredentialsCache(provider) })
		opts = client.Options()
		st = s3store.New(client, st.BucketName(), st.Prefix())
	}
	b.store = st
	b.closers = append(b.closers, st.Close)

	red.add(id.AWSExternalID)
	t := &s3Target{client: client, opts: opts, bucket: st.BucketName(), red: red}
	ep, err := opts.EndpointResolverV2.ResolveEndpoint(ctx, s3.EndpointParameters{
		Bucket:         aws.String(t.bucket),
		Region:         aws.String(opts.Region),
		Endpoint:       opts.BaseEndpoint,
		ForcePathStyle: aws.Bool(opts.UsePathStyle),
	})
	if err != nil {
		return nil, usagef("s3 store %s: endpoint: %w", shown, err)
	}
	b.endpoint = &ep.URI
	b.credentials = t.credentials
	b.identify = t.identify
	b.hint = func() string { return t.keyID }
	b.container = t.headBucket
	b.info = []infoProbe{{OpVersioning, t.versioning}, {OpObjectLock, t.objectLock}}
	return b, nil
}

type s3Target struct {
	client *s3.Client
	opts   s3.Options
	bucket string
	keyID  string // the access key id credentials found: shown masked (gateway.MaskID)
	red    *redactor
}

// s3Sources names the SDK's credential providers for people.
var s3Sources = map[string]string{
	"EnvConfigCredentials":        "environment (AWS_ACCESS_KEY_ID)",
	"SharedConfigCredentials":     "shared credentials file",
	"AssumeRoleProvider":          "assumed role (STS AssumeRole)",
	"WebIdentityCredentials":      "web identity (STS AssumeRoleWithWebIdentity)",
	"SSOProvider":                 "IAM Identity Center (SSO)",
	"ProcessProvider":             "credential_process",
	"EC2RoleProvider":             "EC2 instance role (IMDS)",
	"CredentialsEndpointProvider": "container credentials endpoint (ECS, EKS Pod Identity)",
	"StaticCredentials":           "static credentials",
}

func s3Source(src string) string {
	name, detail, _ := strings.Cut(src, ":")
	if s, ok := s3Sources[name]; ok {
		if detail = strings.TrimSpace(detail); detail != "" {
			return s + " " + detail
		}
		return s
	}
	if src == "" {
		return "anonymous (no credentials)"
	}
	return src
}

func (t *s3Target) credentials(ctx context.Context) outcome {
	if t.opts.Credentials == nil {
		return passf("anonymous (no credentials)")
	}
	creds, err := t.opts.Credentials.Retrieve(ctx)
	if err != nil {
		return failErr("no credentials from the AWS chain (environment, profile, web identity, container, instance role)", err)
	}
	t.keyID = creds.AccessKeyID
	t.red.addID(t.keyID)
	msg := s3Source(creds.Source)
	if creds.AccessKeyID != "" {
		msg += ", access key " + gateway.MaskID(creds.AccessKeyID)
	}
	if creds.SessionToken != "" {
		msg += ", temporary"
	}
	if creds.CanExpire {
		left := time.Until(creds.Expires).Round(time.Second)
		if left <= 0 {
			return outcome{status: Fail, code: "ExpiredToken", message: msg + ": expired at " + creds.Expires.UTC().Format(time.RFC3339)}
		}
		msg += ", expires in " + left.String()
	}
	return passf(msg)
}

// awsHost reports whether endpoint is one of AWS's own (a VPC endpoint
// included) rather than an S3-compatible server's.
func awsHost(endpoint string) bool {
	u, err := url.Parse(endpoint)
	if err != nil {
		return false
	}
	h := strings.ToLower(u.Hostname())
	return strings.HasSuffix(h, ".amazonaws.com") || strings.HasSuffix(h, ".amazonaws.com.cn")
}

// stsEndpoint is where GetCallerIdentity is asked: AWS_ENDPOINT_URL_STS
// (the SDK's variable) when set; for an S3-compatible server, the server
// itself; otherwise AWS's regional STS ("").
func (t *s3Target) stsEndpoint() string {
	if e := os.Getenv("AWS_ENDPOINT_URL_STS"); e != "" {
		return e
	}
	if e := aws.ToString(t.opts.BaseEndpoint); e != "" && !awsHost(e) {
		return e
	}
	return ""
}

func (t *s3Target) identify(ctx context.Context) identity {
	ctx, cancel := context.WithTimeout(ctx, identityTimeout)
	defer cancel()
	so := sts.Options{
		Region:           t.opts.Region,
		Credentials:      t.opts.Credentials,
		HTTPClient:       t.opts.HTTPClient,
		RetryMaxAttempts: 1,
	}
	where, endpoint := "STS", t.stsEndpoint()
	if endpoint != "" {
		so.BaseEndpoint = aws.String(endpoint)
		where = "STS at " + endpoint
	}
	out, err := sts.New(so).GetCallerIdentity(ctx, &sts.GetCallerIdentityInput{})
	if err != nil {
		id := identity{principal: t.keyID, aliases: []string{t.keyID}}
		info := inspect(err)
		switch {
		case (endpoint == "" || awsHost(endpoint)) && (info.status == http.StatusForbidden || info.status == http.StatusUnauthorized) &&
			info.code != "AccessDenied":
			// AWS refused the credentials themselves (InvalidClientTokenId,
			// SignatureDoesNotMatch, ExpiredToken): the store will too.
			id.outcome = failErr("STS refused the credentials of access key "+gateway.MaskID(t.keyID), err)
		default:
			id.outcome = unknownErr("no identity from "+where+"; the store sees access key "+gateway.MaskID(t.keyID), err)
		}
		return id
	}
	arn := aws.ToString(out.Arn)
	id := identity{principal: arn, aliases: []string{aws.ToString(out.Account), aws.ToString(out.UserId), t.keyID}}
	if role := roleOfAssumedRole(arn); role != "" {
		id.aliases = append(id.aliases, role)
	}
	id.outcome = passf(fmt.Sprintf("%s (account %s, user id %s, access key %s)", arn, aws.ToString(out.Account), aws.ToString(out.UserId), gateway.MaskID(t.keyID)))
	return id
}

// roleOfAssumedRole turns arn:aws:sts::ACCOUNT:assumed-role/NAME/SESSION
// into arn:aws:iam::ACCOUNT:role/NAME (without the role's path, which the
// session ARN does not carry).
func roleOfAssumedRole(arn string) string {
	parts := strings.SplitN(arn, ":", 6)
	if len(parts) != 6 || parts[2] != "sts" || !strings.HasPrefix(parts[5], "assumed-role/") {
		return ""
	}
	name, _, _ := strings.Cut(strings.TrimPrefix(parts[5], "assumed-role/"), "/")
	return "arn:" + parts[1] + ":iam::" + parts[4] + ":role/" + name
}

// s3Kind classifies an error of a bucket-level request.
func s3Kind(err error) error {
	return containerKind(err, func(info errInfo) bool { return info.code == "NoSuchBucket" || info.code == "NotFound" })
}

func (t *s3Target) headBucket(ctx context.Context) outcome {
	_, err := t.client.HeadBucket(ctx, &s3.HeadBucketInput{Bucket: aws.String(t.bucket)})
	if err == nil {
		return passf("bucket " + t.bucket + " exists")
	}
	kind := s3Kind(err)
	err = gateway.E("head-bucket", t.bucket, kind, err)
	info := inspect(err)
	switch {
	case kind == gateway.ErrNotFound:
		return failErr("bucket "+t.bucket+" does not exist", err)
	case kind == gateway.ErrPermission:
		return unknownErr("cannot tell whether bucket "+t.bucket+" exists (HeadBucket needs s3:ListBucket on the bucket)", err)
	case info.status == http.StatusMovedPermanently:
		region := ""
		if info.header != nil {
			region = info.header.Get("X-Amz-Bucket-Region")
		}
		return outcome{status: Fail, code: "WrongRegion", err: err,
			message: fmt.Sprintf("bucket %s is in region %q, not %q: add ?region=%s", t.bucket, region, t.opts.Region, region)}
	}
	return failErr("", err)
}

func (t *s3Target) versioning(ctx context.Context) outcome {
	out, err := t.client.GetBucketVersioning(ctx, &s3.GetBucketVersioningInput{Bucket: aws.String(t.bucket)})
	if err != nil {
		return unknownErr("cannot read the bucket's versioning (s3:GetBucketVersioning)", gateway.E("get-bucket-versioning", t.bucket, s3Kind(err), err))
	}
	switch out.Status {
	case "":
		return passf("versioning was never enabled: a deleted or overwritten checkpoint file is gone")
	default:
		msg := "versioning " + strings.ToLower(string(out.Status))
		if out.Status == "Enabled" {
			msg += ": overwritten and deleted files stay as noncurrent versions (mind lifecycle rules that expire them)"
		}
		return passf(msg)
	}
}

func (t *s3Target) objectLock(ctx context.Context) outcome {
	out, err := t.client.GetObjectLockConfiguration(ctx, &s3.GetObjectLockConfigurationInput{Bucket: aws.String(t.bucket)})
	if err != nil {
		if info := inspect(err); info.code == "ObjectLockConfigurationNotFoundError" {
			return passf("object lock is not enabled")
		}
		return unknownErr("cannot read the bucket's object lock configuration (s3:GetBucketObjectLockConfiguration)",
			gateway.E("get-object-lock-configuration", t.bucket, s3Kind(err), err))
	}
	cfg := out.ObjectLockConfiguration
	if cfg == nil || cfg.ObjectLockEnabled != "Enabled" {
		return passf("object lock is not enabled")
	}
	msg := "object lock enabled"
	if cfg.Rule != nil && cfg.Rule.DefaultRetention != nil {
		r := cfg.Rule.DefaultRetention
		switch {
		case r.Days != nil:
			msg += fmt.Sprintf(", default retention %s %d days", r.Mode, *r.Days)
		case r.Years != nil:
			msg += fmt.Sprintf(", default retention %s %d years", r.Mode, *r.Years)
		}
		msg += ": retention cannot delete checkpoint files before their retention ends"
	}
	return passf(msg)
}
