package validate_test

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/ckgate/ckgate/gateway"
	"github.com/ckgate/ckgate/gateway/stores"
	"github.com/ckgate/ckgate/internal/emulator"
	"github.com/ckgate/ckgate/validate"
)

// childEnv makes the test binary the --as-user child (see asUserChild).
const childEnv = "CKGATE_VALIDATE_TEST_CHILD"

// kind is one backend the tests run against: a local directory or an
// emulator, opened through its URL as a user would.
type kind struct {
	name  string
	setup func(ctx context.Context, k *kind) // starts the emulator, once
	once  sync.Once
	err   error // why the emulator is not there
	// newURL makes a fresh, empty bucket (or directory) and returns the
	// store URL of a prefix inside it.
	newURL func(t testing.TB) string
}

// start starts k's emulator on first use, so that tests that need none
// (and fuzzing workers) start nothing.
func (k *kind) start() {
	k.once.Do(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
		defer cancel()
		k.setup(ctx, k)
	})
}

var (
	kinds    []*kind
	s3emu    *emulator.S3Emulator
	s3second emulator.S3User
	azemu    *emulator.AzureEmulator
	mu       sync.Mutex // guards stopping
	stopping []func()
)

func atExit(f func()) {
	mu.Lock()
	defer mu.Unlock()
	stopping = append(stopping, f)
}

func TestMain(m *testing.M) {
	if os.Getenv(childEnv) == "1" {
		os.Exit(serveChild())
	}
	kinds = []*kind{
		{name: "file", setup: fileKind},
		{name: "s3", setup: s3Kind},
		{name: "gcs", setup: gcsKind},
		{name: "azure", setup: azureKind},
	}
	code := m.Run()
	mu.Lock()
	defer mu.Unlock()
	for _, stop := range stopping {
		stop()
	}
	os.Exit(code)
}

// serveChild is the --as-user child: what `ckgate validate-access
// --child` does in the ckgate binary.
func serveChild() int {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := validate.ServeChild(ctx, os.Stdin, os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "ckgate:", err)
		if errors.Is(err, validate.ErrUsage) {
			return 2
		}
		return 1
	}
	return 0
}

func unique(prefix string) string { return prefix + strings.ToLower(rand.Text()[:12]) }

// admin opens raw with the environment's (root) credentials.
func admin(t testing.TB, raw string) gateway.Store {
	t.Helper()
	st, err := stores.Open(context.Background(), raw)
	if err != nil {
		t.Fatalf("open %s: %v", raw, err)
	}
	t.Cleanup(func() { gateway.Close(st) })
	return st
}

func makeBucket(t testing.TB, raw string) {
	t.Helper()
	if err := gateway.MakeBucket(context.Background(), admin(t, raw)); err != nil {
		t.Fatalf("make bucket %s: %v", raw, err)
	}
}

func fileKind(_ context.Context, k *kind) {
	k.newURL = func(t testing.TB) string {
		dir := filepath.Join(t.TempDir(), "ckpt")
		if err := os.Mkdir(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		return dir
	}
}

func s3Kind(ctx context.Context, k *kind) {
	s3second = emulator.NewS3User()
	emu, err := emulator.StartVersitygwIAM(ctx, s3second)
	if err != nil {
		k.err = err
		return
	}
	atExit(emu.Stop)
	s3emu = emu
	// Root: the environment. The second user: profile "second" of a
	// shared credentials file (how --aws-profile is exercised).
	dir, err := os.MkdirTemp("", "ckgate-validate-aws-")
	if err != nil {
		k.err = err
		return
	}
	atExit(func() { os.RemoveAll(dir) })
	creds := filepath.Join(dir, "credentials")
	body := fmt.Sprintf("[second]\naws_access_key_id = %s\naws_secret_access_key = %s\n", s3second.AccessKey, s3second.SecretKey)
	if err := os.WriteFile(creds, []byte(body), 0o600); err != nil {
		k.err = err
		return
	}
	config := filepath.Join(dir, "config")
	if err := os.WriteFile(config, nil, 0o600); err != nil {
		k.err = err
		return
	}
	for name, v := range map[string]string{
		"AWS_ACCESS_KEY_ID": emu.AccessKey, "AWS_SECRET_ACCESS_KEY": emu.SecretKey,
		"AWS_SHARED_CREDENTIALS_FILE": creds, "AWS_CONFIG_FILE": config,
		"AWS_EC2_METADATA_DISABLED": "true",
	} {
		os.Setenv(name, v)
	}
	for _, name := range []string{"AWS_PROFILE", "AWS_SESSION_TOKEN", "AWS_ROLE_ARN", "AWS_WEB_IDENTITY_TOKEN_FILE"} {
		os.Unsetenv(name)
	}
	k.newURL = func(t testing.TB) string {
		bucket := unique("ckgate-")
		makeBucket(t, s3URL(bucket, "", emu.Endpoint))
		return s3URL(bucket, "ck", emu.Endpoint)
	}
}

func s3URL(bucket, prefix, endpoint string) string {
	return fmt.Sprintf("s3://%s/%s?region=us-east-1&endpoint=%s&path_style=true", bucket, prefix, endpoint)
}

func gcsKind(ctx context.Context, k *kind) {
	emu, err := emulator.StartFakeGCS(ctx)
	if err != nil {
		k.err = err
		return
	}
	atExit(emu.Stop)
	os.Setenv("STORAGE_EMULATOR_HOST", emu.Host)
	k.newURL = func(t testing.TB) string {
		bucket := unique("ckgate-")
		makeBucket(t, "gs://"+bucket)
		return "gs://" + bucket + "/ck"
	}
}

func azureKind(ctx context.Context, k *kind) {
	emu, err := emulator.StartAzurite(ctx)
	if err != nil {
		k.err = err
		return
	}
	atExit(emu.Stop)
	azemu = emu
	os.Setenv("AZURE_STORAGE_CONNECTION_STRING", emu.ConnectionString)
	for _, name := range []string{"AZURE_STORAGE_KEY", "AZURE_STORAGE_SAS_TOKEN"} {
		os.Unsetenv(name)
	}
	k.newURL = func(t testing.TB) string {
		c := unique("ckgate")
		makeBucket(t, "az://"+emu.Account+"/"+c)
		return "az://" + emu.Account + "/" + c + "/ck"
	}
}

// each runs f for every backend as a subtest; a missing emulator fails
// under CI and skips otherwise.
func each(t *testing.T, f func(t *testing.T, k *kind)) {
	for _, k := range kinds {
		t.Run(k.name, func(t *testing.T) {
			k.start()
			emulator.Require(t, k.err)
			f(t, k)
		})
	}
}

func kindNamed(t *testing.T, name string) *kind {
	t.Helper()
	for _, k := range kinds {
		if k.name == name {
			k.start()
			emulator.Require(t, k.err)
			return k
		}
	}
	t.Fatalf("no backend %q", name)
	return nil
}
