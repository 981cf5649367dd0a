package main

import (
	"context"
	"testing"

	"github.com/ckgate/ckgate/gateway"
	"github.com/ckgate/ckgate/gateway/stores"
	"github.com/ckgate/ckgate/internal/emulator"
)

// The classes of the hostile suite that apply to object stores, against
// the real emulators: the root spelled at the bucket, above or inside the
// checkpoint; a planted metadata; the check-then-write race; a log entry
// created by someone other than the owning query.

func TestHostileS3(t *testing.T) {
	emu := emulator.Versitygw(t)
	q := s3Query(emu, emu.Endpoint).Encode()
	b := bucketName()
	hostileCloud(t, "s3://"+b+"?"+q, func(p string) string { return "s3://" + b + "/" + p + "?" + q })
}

func TestHostileGCS(t *testing.T) {
	emu := emulator.FakeGCS(t)
	t.Setenv("STORAGE_EMULATOR_HOST", emu.Host)
	b := bucketName()
	hostileCloud(t, "gs://"+b+"?project=ckgate-test", func(p string) string { return "gs://" + b + "/" + p })
}

func TestHostileAzure(t *testing.T) {
	account, q := azurite(t)
	c := bucketName()
	hostileCloud(t, "az://"+account+"/"+c+"?"+q, func(p string) string { return "az://" + account + "/" + c + "/" + p + "?" + q })
}

// objects maps every key of s to its content.
func objects(t *testing.T, s gateway.Store) map[string]string {
	t.Helper()
	out := map[string]string{}
	for a, err := range s.List(context.Background(), "") {
		if err != nil {
			t.Fatal(err)
		}
		b, _, err := s.Get(context.Background(), a.Key)
		if err != nil {
			t.Fatal(err)
		}
		out[a.Key] = string(b)
	}
	return out
}

func hostileCloud(t *testing.T, bucketURL string, at func(path string) string) {
	ctx := context.Background()
	ckgate(t, Options{}, "", "store", "mb", bucketURL).want(t, 0)
	bucket, err := stores.Open(ctx, bucketURL)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { gateway.Close(bucket) })
	for k, v := range map[string]string{ // the job's checkpoint, written as the job would
		"team/x/ck/metadata":          `{"id":"0b7f6f0c-6d3c-4f5e-9d7a-2f0c8c1d9e01"}`,
		"team/x/ck/offsets/0":         "v1\n{}\n{}",
		"team/x/ck/offsets/1":         "v1\n{}\n{}",
		"team/x/ck/offsets/2":         "v1\n{}\n{}",
		"team/x/ck/commits/0":         "v1\n{}",
		"team/x/ck/commits/1":         "v1\n{}",
		"team/x/ck/state/0/0/1.delta": "state",
	} {
		if _, err := bucket.Put(ctx, k, []byte(v), gateway.IfAbsent()); err != nil {
			t.Fatal(err)
		}
	}
	refusedHere := func(t *testing.T, stdin string, args ...string) {
		t.Helper()
		refusedOn(t, func() map[string]string { return objects(t, bucket) }, stdin, args...)
	}
	hit := func(t *testing.T, root, key string) {
		t.Helper()
		refusedHere(t, "", append(append([]string{"store", "rm"}, housekeeping...), root, key)...)
		refusedHere(t, "PWNED", append(append([]string{"store", "put", "--overwrite"}, housekeeping...), "-", root, key)...)
	}

	t.Run("root spellings", func(t *testing.T) {
		hit(t, bucketURL, "team/x/ck/offsets/2")
		hit(t, bucketURL, "team/x/ck/commits/1")
		hit(t, bucketURL, "team/x/ck/state/0/0/1.delta")
		hit(t, at("team"), "x/ck/offsets/2")
		hit(t, at("team/x/ck/offsets"), "2") // the store's root inside the checkpoint
		hit(t, at("team/x/ck/state/0"), "0/1.delta")
		hit(t, at("team/x/ck"), "metadata")
		hit(t, at("team/x/%63k"), "offsets/1") // percent-encoded
	})
	t.Run("planted metadata", func(t *testing.T) {
		refusedHere(t, "{}", append(append([]string{"store", "put"}, housekeeping...), "-", at("team/x/ck"), "offsets/metadata")...)
		if _, err := bucket.Put(ctx, "team/x/ck/offsets/metadata", []byte(`{"id":"evil"}`), gateway.IfAbsent()); err != nil {
			t.Fatal(err)
		}
		hit(t, at("team/x/ck/offsets"), "2")
		hit(t, at("team/x/ck"), "offsets/2")
		refusedHere(t, "", "store", "rm", "--kind", "job", at("team/x/ck/commits"), "1")
	})
	t.Run("log entry creation", func(t *testing.T) {
		for _, kind := range []string{"housekeeping", "retention", "job", "admin"} {
			refusedHere(t, "v1\n{}", "store", "put", "--kind", kind, "-", at("team/x/ck"), "commits/2")
			refusedHere(t, "v1\n{}", "store", "put", "--kind", kind, "-", bucketURL, "team/x/ck/offsets/3")
		}
	})
	t.Run("check then write", func(t *testing.T) {
		r := racedOverwrite(t, at("team/x/ck"), "offsets/50", func() {
			if _, err := bucket.Put(ctx, "team/x/ck/offsets/50", []byte("the job's entry"), gateway.IfAbsent()); err != nil {
				t.Fatal(err)
			}
		})
		r.wantErr(t, 3, `"offsets/50"`)
		if got, _, _ := bucket.Get(ctx, "team/x/ck/offsets/50"); string(got) != "the job's entry" {
			t.Fatalf("offsets/50 = %.40q: the job's entry was replaced", got)
		}
	})
}
