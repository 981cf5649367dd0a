// Package stores builds the default registry of ckgate's storage backends.
// It is the one place that imports every backend, so that package gateway
// stays free of SDKs and nothing registers itself at init time.
//
// # URLs
//
//	/var/ckpt/query-1, ./ckpt            a directory on the local disk
//	file:///var/ckpt/query-1             the same, as a URL
//	s3://bucket/prefix?region=R&endpoint=E&path_style=true
//	gs://bucket/prefix
//	az://account/container/prefix
//
// Each backend package documents its query parameters and the credential
// environment it reads.
package stores

import (
	"context"

	"github.com/ckgate/ckgate/gateway"
	"github.com/ckgate/ckgate/gateway/azstore"
	"github.com/ckgate/ckgate/gateway/filestore"
	"github.com/ckgate/ckgate/gateway/gcsstore"
	"github.com/ckgate/ckgate/gateway/s3store"
)

// Registry returns a new registry with every backend: file (plain paths
// too), s3, gs and az.
func Registry() *gateway.Registry {
	return gateway.NewRegistry().
		Register("file", filestore.Open).
		Register("s3", s3store.Open).
		Register("gs", gcsstore.Open).
		Register("az", azstore.Open)
}

// Open opens the store named by raw (a URL or a plain path) with the
// default registry.
func Open(ctx context.Context, raw string) (gateway.Store, error) {
	return Registry().Open(ctx, raw)
}
