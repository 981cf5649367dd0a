package s3serve

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/versity/versitygw/iamapi"
	"github.com/versity/versitygw/s3api"
	"github.com/versity/versitygw/s3api/middlewares"

	"github.com/ckgate/ckgate/gateway"
)

// Config is what a Server serves.
type Config struct {
	// Store is the store at --store, read directly: each bucket is a
	// first-level prefix of it.
	Store gateway.Store
	// Guard returns the store that p's mutations go through (the policy
	// guard of the store at --store for principal p). It is called once
	// per principal.
	Guard func(p Principal) (gateway.Store, error)
	// Credentials are the access keys clients sign with.
	Credentials *Credentials
	// Region, when set, is the only region name accepted in signatures.
	Region string
	// Ready, when set, is called once the server listens.
	Ready func()
	// TLSCert and TLSKey, when set, are the PEM files the server answers
	// HTTPS with (the SDKs send chunked uploads with trailing checksums
	// only over HTTPS).
	TLSCert, TLSKey string
	// VirtualHost, when set, is the domain of virtual-host-style requests
	// (BUCKET.DOMAIN); path-style requests are served either way.
	VirtualHost string
	// AccessLog, when set, gets one JSON line per request (AccessRecord).
	AccessLog io.Writer
	// Metrics, when set, registers the per-operation and per-decision
	// Prometheus metrics (ckgate_serve_*).
	Metrics prometheus.Registerer
	// BucketTTL is how long a bucket seen to exist is taken to exist
	// without asking the store again (0: 2s; negative: ask on every
	// request). It saves a request per write; a bucket another replica
	// deletes is seen as gone within it.
	BucketTTL time.Duration
}

// Server is an S3 endpoint over a ckgate store.
type Server struct {
	api *s3api.S3ApiServer
	be  *storeBackend
}

// New builds the server; Serve starts it.
func New(cfg Config) (*Server, error) {
	if cfg.Store == nil || cfg.Guard == nil || cfg.Credentials == nil {
		return nil, errors.New("s3serve: a store, a guard and credentials are required")
	}
	be := &storeBackend{raw: cfg.Store, creds: cfg.Credentials, guard: cfg.Guard, guarded: map[string]gateway.Store{}, bucketTTL: cfg.BucketTTL}
	if be.bucketTTL == 0 {
		be.bucketTTL = defaultBucketTTL
	}
	// versitygw wants a root account; nobody holds this one (random, never
	// shown), so every request signs with a credentials-file key.
	root := middlewares.RootUserConfig{Access: "ckgate-root-" + randomHex(8), Secret: randomHex(32)}
	region := cfg.Region
	if region == "" {
		region = "us-east-1"
	}
	obs, err := newObserver(cfg.Credentials, cfg.AccessLog, cfg.Metrics)
	if err != nil {
		return nil, err
	}
	opts := []s3api.Option{s3api.WithQuiet(), s3api.WithKeepAlive(), s3api.WithConcurrencyLimiter(maxConnections, maxRequests),
		s3api.WithMiddleware("/", obs.middleware)}
	if cfg.Ready != nil {
		opts = append(opts, s3api.WithOnListen(cfg.Ready))
	}
	if (cfg.TLSCert == "") != (cfg.TLSKey == "") {
		return nil, errors.New("s3serve: a TLS certificate needs its key, and a key its certificate")
	}
	if cfg.TLSCert != "" {
		cs := iamapi.NewCertStorage()
		if err := cs.SetCertificate(cfg.TLSCert, cfg.TLSKey); err != nil {
			return nil, fmt.Errorf("s3serve: TLS certificate %s, key %s: %w", cfg.TLSCert, cfg.TLSKey, err)
		}
		opts = append(opts, s3api.WithTLS(cs))
	}
	if cfg.VirtualHost != "" {
		opts = append(opts, s3api.WithHostStyle(cfg.VirtualHost))
	}
	api, err := s3api.New(be, root, region, iam{creds: cfg.Credentials}, nil, nil, nil, nil, opts...)
	if err != nil {
		return nil, err
	}
	return &Server{api: api, be: be}, nil
}

// Serve listens on addr (host:port) and serves until Shutdown.
func (s *Server) Serve(addr string) error { return s.api.ServeMultiPort([]string{addr}) }

// Shutdown stops accepting requests and lets in-flight ones finish.
func (s *Server) Shutdown() error { return s.api.ShutDown() }

func randomHex(n int) string {
	b := make([]byte, n)
	if _, err := rand.Read(b); err != nil {
		panic(err) // crypto/rand never fails on Linux
	}
	return hex.EncodeToString(b)
}

// The connection and in-flight request limits (versitygw answers SlowDown
// beyond them).
const maxConnections, maxRequests = 4096, 1024
