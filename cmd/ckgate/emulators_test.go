package main

import (
	"context"
	"crypto/rand"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/ckgate/ckgate/internal/emulator"
)

// The real emulators the CLI tests run against (versitygw, fake-gcs-server,
// Azurite), each started with the environment pointing the CLI at it and
// stopped when the test ends, and the names and URLs that reach them.

func bucketName() string { return "ckgate-" + strings.ToLower(rand.Text()[:12]) }

// containerName is a fresh Azure container name (no hyphen after the
// prefix: Azure allows letters, digits and single hyphens).
func containerName() string { return "ckgate" + strings.ToLower(bucketName()[7:]) }

func startCtx(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	t.Cleanup(cancel)
	return ctx
}

// s3Query is the URL query that reaches emu through endpoint (its own, or
// a proxy of it): path-style, in its region.
func s3Query(emu *emulator.S3Emulator, endpoint string) url.Values {
	return url.Values{"endpoint": {endpoint}, "path_style": {"true"}, "region": {emu.Region}}
}

// s3URL is the bucket's URL through endpoint.
func s3URL(emu *emulator.S3Emulator, bucket, endpoint string) string {
	return "s3://" + bucket + "?" + s3Query(emu, endpoint).Encode()
}

// s3Bucket makes a new bucket on emu through `ckgate store mb` and returns
// its name and the URL of a prefix in it (at("") is the bucket's).
func s3Bucket(t *testing.T, emu *emulator.S3Emulator) (bucket string, at func(prefix string) string) {
	t.Helper()
	b, q := bucketName(), s3Query(emu, emu.Endpoint).Encode()
	at = func(prefix string) string {
		if prefix == "" {
			return "s3://" + b + "?" + q
		}
		return "s3://" + b + "/" + prefix + "?" + q
	}
	ckgate(t, Options{}, "", "store", "mb", at("")).want(t, 0)
	return b, at
}

// azureContainer makes a new container on emu through `ckgate store mb`
// (of its prefix ck) and returns its name and the root URL NAME/ck.
func azureContainer(t *testing.T, emu *emulator.AzureEmulator) (name, root string) {
	t.Helper()
	name = containerName()
	root = "az://" + emu.Account + "/" + name + "/ck?endpoint=" + emu.ServiceURL
	ckgate(t, Options{}, "", "store", "mb", root).want(t, 0)
	return name, root
}

// azurite starts Azurite (emulator.Azurite) and returns its account and the
// URL query (endpoint) that reaches it.
func azurite(t *testing.T) (account, query string) {
	t.Helper()
	emu := emulator.Azurite(t)
	return emu.Account, url.Values{"endpoint": {emu.ServiceURL}}.Encode()
}
