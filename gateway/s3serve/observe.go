package s3serve

import (
	"encoding/json"
	"io"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/gofiber/fiber/v3"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/versity/versitygw/auth"
)

// AccessRecord is one line of the access log (JSON): who asked what, what
// was decided and how long it took. It never holds a secret: the
// signature, the query's credentials and the body stay out.
type AccessRecord struct {
	Time      time.Time `json:"time"`
	Principal string    `json:"principal,omitempty"` // the credentials file's principal id
	Kind      string    `json:"kind,omitempty"`
	Operation string    `json:"operation"`
	Bucket    string    `json:"bucket,omitempty"`
	Key       string    `json:"key,omitempty"`
	Status    int       `json:"status"`
	// Decision is the gateway's answer to a mutation: "allow", or "deny"
	// (refused by the policy: 403 AccessDenied); "" for reads.
	Decision  string  `json:"decision,omitempty"`
	LatencyMs float64 `json:"latency_ms"`
	Process   string  `json:"process,omitempty"` // S3A's audit referrer process id
}

// observer writes the access log and the Prometheus metrics of every
// request.
type observer struct {
	creds *Credentials

	mu  sync.Mutex
	log io.Writer // nil: no access log

	requests  *prometheus.CounterVec
	latency   *prometheus.HistogramVec
	decisions *prometheus.CounterVec
}

func newObserver(creds *Credentials, log io.Writer, reg prometheus.Registerer) (*observer, error) {
	o := &observer{creds: creds, log: log,
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "ckgate_serve_requests_total",
			Help: "S3 requests through ckgate serve by operation and HTTP status.",
		}, []string{"operation", "status"}),
		latency: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "ckgate_serve_request_seconds",
			Help:    "Latency of S3 requests through ckgate serve by operation.",
			Buckets: prometheus.ExponentialBuckets(0.0005, 2, 16),
		}, []string{"operation"}),
		decisions: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "ckgate_serve_decisions_total",
			Help: "The gateway's decisions on S3 mutations by operation and decision (allow, deny).",
		}, []string{"operation", "decision"}),
	}
	if reg != nil {
		for _, c := range []prometheus.Collector{o.requests, o.latency, o.decisions} {
			if err := reg.Register(c); err != nil {
				return nil, err
			}
		}
	}
	return o, nil
}

// middleware observes one request after the S3 handlers answered it.
func (o *observer) middleware(c fiber.Ctx) error {
	start := time.Now()
	err := c.Next()
	status := c.Response().StatusCode()
	if err != nil {
		if fe, ok := err.(*fiber.Error); ok {
			status = fe.Code
		}
	}
	method := c.Method()
	bucket, key := splitPath(c.Path())
	op := operation(method, bucket, key, c.RequestCtx().QueryArgs().String(), len(c.Get("X-Amz-Copy-Source")) > 0)
	elapsed := time.Since(start)
	decision := ""
	if method == fiber.MethodPut || method == fiber.MethodDelete || (method == fiber.MethodPost && key != "") {
		decision = "allow"
		if status == fiber.StatusForbidden {
			decision = "deny"
		}
		o.decisions.WithLabelValues(op, decision).Inc()
	}
	o.requests.WithLabelValues(op, strconv.Itoa(status)).Inc()
	o.latency.WithLabelValues(op).Observe(elapsed.Seconds())
	if o.log == nil {
		return err
	}
	rec := AccessRecord{Time: start.UTC(), Operation: op, Bucket: bucket, Key: key, Status: status, Decision: decision,
		LatencyMs: float64(elapsed.Microseconds()) / 1000, Process: referrerProcess(c.RequestCtx())}
	if acc, ok := c.Locals("account").(auth.Account); ok {
		if p, ok := o.creds.Lookup(acc.Access); ok {
			rec.Principal, rec.Kind = p.ID, p.Kind
		}
	}
	line, merr := json.Marshal(rec)
	if merr == nil {
		o.mu.Lock()
		_, _ = o.log.Write(append(line, '\n'))
		o.mu.Unlock()
	}
	return err
}

// splitPath is the bucket and key of a path-style request path (a
// virtual-host request's path is rewritten to this form by the router).
func splitPath(p string) (bucket, key string) {
	p = strings.TrimPrefix(p, "/")
	if u, err := url.PathUnescape(p); err == nil {
		p = u
	}
	bucket, key, _ = strings.Cut(p, "/")
	return bucket, key
}

// operation names a request as S3's API does, for metrics and the log.
func operation(method, bucket, key, query string, copySource bool) string {
	q, _ := url.ParseQuery(query)
	has := func(k string) bool { _, ok := q[k]; return ok }
	switch {
	case bucket == "":
		return "ListBuckets"
	case key == "":
		switch method {
		case fiber.MethodGet:
			if q.Get("list-type") == "2" {
				return "ListObjectsV2"
			}
			return "ListObjects"
		case fiber.MethodHead:
			return "HeadBucket"
		case fiber.MethodPut:
			return "CreateBucket"
		case fiber.MethodDelete:
			return "DeleteBucket"
		case fiber.MethodPost:
			if has("delete") {
				return "DeleteObjects"
			}
		}
		return method + "Bucket"
	}
	switch method {
	case fiber.MethodGet:
		return "GetObject"
	case fiber.MethodHead:
		return "HeadObject"
	case fiber.MethodPut:
		switch {
		case has("partNumber") && copySource:
			return "UploadPartCopy"
		case has("partNumber"):
			return "UploadPart"
		case copySource:
			return "CopyObject"
		}
		return "PutObject"
	case fiber.MethodDelete:
		if has("uploadId") {
			return "AbortMultipartUpload"
		}
		return "DeleteObject"
	case fiber.MethodPost:
		if has("uploads") {
			return "CreateMultipartUpload"
		}
		if has("uploadId") {
			return "CompleteMultipartUpload"
		}
	}
	return method + "Object"
}
