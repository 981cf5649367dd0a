package main

import (
	"context"
	"fmt"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/ckgate/ckgate/gateway"
	"github.com/ckgate/ckgate/gateway/s3serve"
	"github.com/ckgate/ckgate/policy"
)

// serveCommand is `ckgate serve`: an S3 endpoint over a ckgate store that
// Spark, Flink or any S3 client writes checkpoints through.
func (e *env) serveCommand() *cli.Command {
	return &cli.Command{
		Name:  "serve",
		Usage: "serve an S3 API over a store, every mutation through the gateway's guard",
		Description: "Answers S3 requests (path-style, or virtual-host style with --virtual-host; AWS SigV4: header,\n" +
			"presigned and chunked uploads) on --listen over the store at --store: each bucket is a first-level prefix of it. Clients sign with the access\n" +
			"keys of --credentials (YAML, readable by its owner only); each key is a principal of a kind (job,\n" +
			"retention, housekeeping, admin) that the policies decide every PUT, COPY and DELETE for, as for\n" +
			"the engine. A write of a checkpoint log entry (offsets/N, commits/N, metadata, sources/*/N,\n" +
			"_spark_metadata/N) is create-only on the store: of racing writers one wins, the others get\n" +
			"412 PreconditionFailed. The first job principal to write a root's metadata owns the root\n" +
			"(<root>/_ckgate/root-owner): other principals' writes under it are refused (CKG-P014). A job\n" +
			"deletes only what its own purge removes (CKG-P002: entries below the restart floor, compacted\n" +
			"ones). With S3A's audit referrer, a driver process that a newer one has committed over is\n" +
			"fenced (CKG-P015). --dry-run decides and logs every request without enforcing it.\n" +
			"See docs/serve.md for pointing Spark's S3A at it.\n\n" +
			"Handled: ListBuckets, CreateBucket, HeadBucket, ListObjects(V2), HeadObject, GetObject (Range,\n" +
			"If-Match/If-None-Match), PutObject (If-None-Match *, If-Match), CopyObject (copy-source\n" +
			"conditions), DeleteObject (If-Match), DeleteObjects, CreateMultipartUpload, UploadPart(Copy),\n" +
			"CompleteMultipartUpload, AbortMultipartUpload, ListParts, ListMultipartUploads, DeleteBucket (empty\n" +
			"only). Anything else answers NotImplemented. Uploads left incomplete are aborted after --upload-expiry.\n\n" +
			"The first SIGINT or SIGTERM stops accepting requests and lets in-flight ones finish.\n\n" +
			"Exit status: 0 stopped by a signal; 1 the server failed; 2 a bad flag, credentials file or store URL.",
		Flags: append([]cli.Flag{
			&cli.StringFlag{Name: "listen", Value: "127.0.0.1:9000", Usage: "serve on `HOST:PORT`"},
			&cli.StringFlag{Name: "store", Required: true, Usage: "the store `URL` buckets live in (file://, s3://, gs://, az://, a path)"},
			&cli.StringFlag{Name: "credentials", Required: true, Usage: "the access keys and principals, a YAML `FILE` (mode 600)"},
			&cli.StringFlag{Name: "region", Usage: "accept only signatures for `REGION` (default: any)"},
			&cli.StringFlag{Name: "tls-cert", Usage: "answer HTTPS with the certificate in `PEM_FILE` (needs --tls-key; the SDKs send chunked uploads with trailing checksums only over HTTPS)"},
			&cli.StringFlag{Name: "tls-key", Usage: "the private key of --tls-cert, a `PEM_FILE`"},
			&cli.StringFlag{Name: "virtual-host", Usage: "serve virtual-host-style requests for `DOMAIN` (BUCKET.DOMAIN) beside path-style ones"},
			&cli.StringFlag{Name: "access-log", Usage: "write one JSON line per request (principal, operation, key, status, decision, latency) to `FILE` (- for stderr)"},
			&cli.StringFlag{Name: "metrics-addr", Usage: "serve Prometheus metrics on http://`HOST:PORT`/metrics and readiness on /ready (200 once serving, 503 before and while stopping)"},
			&cli.BoolFlag{Name: "dry-run", Usage: "decide and log every request without enforcing the policy: refusals are recorded in --decision-log (result deny, dry_run true) and let through; log entries stay create-only (for onboarding a production job)"},
			durationFlag("upload-expiry", 24*time.Hour, "abort multipart uploads initiated longer than `DURATION` ago (an executor that crashed mid-upload leaves its parts; 0s: never), checked every quarter of it, at most hourly"),
			decisionLogFlag(),
		}, policyFlags()...),
		Action: e.serve,
	}
}

func (e *env) serve(c *cli.Context) error {
	if _, err := args(c, 0, 0); err != nil {
		return err
	}
	if c.Bool("dry-run") && c.String("decision-log") == "" {
		return &InputError{Err: fmt.Errorf("--dry-run needs --decision-log FILE: it is where the refusals it lets through are recorded")}
	}
	creds, err := s3serve.LoadCredentials(c.String("credentials"))
	if err != nil {
		return &InputError{Err: err}
	}
	eng, err := e.policyEngine(c)
	if err != nil {
		return err
	}
	log, closeLog, err := e.decisionLog(c)
	if err != nil {
		return err
	}
	defer closeLog()
	storeURL := c.String("store")
	st, err := e.openStore(c.Context, c, storeURL)
	if err != nil {
		return err
	}
	defer gateway.Close(st)
	var closers []func()
	defer func() {
		for _, f := range closers {
			f()
		}
	}()
	guard := func(p s3serve.Principal) (gateway.Store, error) {
		g, done, err := e.guard(c.Context, c, st, policy.GuardConfig{Engine: eng, Log: log, StoreURL: storeURL,
			Principal: policy.Principal{ID: p.ID, Kind: p.Kind}, WriterSession: p.Kind == policy.KindJob, RootOwners: true, DryRun: c.Bool("dry-run")})
		if err == nil {
			closers = append(closers, done) // under the backend's lock: one guard per principal
		}
		return g, err
	}
	addr := c.String("listen")
	accessLog, closeAccess, err := e.accessLog(c.String("access-log"))
	if err != nil {
		return err
	}
	defer closeAccess()
	obs, err := startObservability(c.String("metrics-addr"))
	if err != nil {
		return &InputError{Err: err}
	}
	defer obs.close()
	scheme := "http"
	if c.String("tls-cert") != "" {
		scheme = "https"
	}
	srv, err := s3serve.New(s3serve.Config{Store: st, Guard: guard, Credentials: creds, Region: c.String("region"),
		TLSCert: c.String("tls-cert"), TLSKey: c.String("tls-key"), VirtualHost: c.String("virtual-host"),
		AccessLog: accessLog, Metrics: obs.registerer(),
		Ready: func() {
			obs.ready.Store(true)
			fmt.Fprintf(e.stderr, "ckgate serve: listening on %s://%s, store %s\n", scheme, addr, gateway.Redact(storeURL))
		}})
	if err != nil {
		return &InputError{Err: err}
	}
	served := make(chan error, 1)
	go func() { served <- srv.Serve(addr) }()
	if expiry := flagDuration(c, "upload-expiry"); expiry > 0 {
		sweepCtx, stopSweep := context.WithCancel(c.Context)
		swept := make(chan struct{})
		go func() { defer close(swept); e.expireUploads(sweepCtx, srv, expiry) }()
		defer func() { stopSweep(); <-swept }()
	}
	select {
	case err := <-served:
		return fmt.Errorf("serve on %s: %w", addr, err)
	case <-c.Context.Done():
	}
	obs.ready.Store(false) // a load balancer stops sending while in-flight requests finish
	if err := srv.Shutdown(); err != nil {
		return fmt.Errorf("serve: shutdown: %w", err)
	}
	<-served // the listener's "closed" error: the end Shutdown asked for
	return nil
}

// expireUploads aborts the multipart uploads older than expiry now and then
// every quarter of expiry (at most hourly, at least a second apart) until
// ctx ends, saying on stderr what it aborted or could not.
func (e *env) expireUploads(ctx context.Context, srv *s3serve.Server, expiry time.Duration) {
	every := min(max(expiry/4, time.Second), time.Hour)
	tick := time.NewTicker(every)
	defer tick.Stop()
	for {
		n, err := srv.ExpireUploads(ctx, time.Now().Add(-expiry))
		if n > 0 {
			fmt.Fprintf(e.stderr, "ckgate serve: aborted %d multipart upload(s) initiated more than %s ago\n", n, durationText(expiry))
		}
		if err != nil && ctx.Err() == nil {
			fmt.Fprintf(e.stderr, "ckgate serve: expiring multipart uploads: %v\n", gateway.Redact(err.Error()))
		}
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
	}
}
