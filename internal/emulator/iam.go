package emulator

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
)

// S3User is an account of versitygw's internal IAM. Role "user" may use
// only the buckets it owns; "userplus" may also create buckets; "admin"
// may do everything.
type S3User struct {
	AccessKey string
	SecretKey string
	Role      string
}

// NewS3User returns a user with random keys and role "user".
func NewS3User() S3User {
	return S3User{AccessKey: "CKGATEU" + rand.Text()[:13], SecretKey: rand.Text() + rand.Text()[:14], Role: "user"}
}

// StartVersitygwIAM is StartVersitygw with versitygw's internal IAM
// (--iam-dir) holding users besides the root account, so that tests can
// be refused for real: a bucket the root creates belongs to the root, and
// a "user" account gets 403 AccessDenied on it.
func StartVersitygwIAM(ctx context.Context, users ...S3User) (*S3Emulator, error) {
	return startVersitygw(ctx, "ckgate-versitygw-iam-", func(dir string) ([]string, error) {
		iam := filepath.Join(dir, "iam")
		if err := os.Mkdir(iam, 0o755); err != nil {
			return nil, err
		}
		// The internal IAM keeps its accounts in users.json (versitygw
		// auth/iam_internal.go: {"accessAccounts":{ACCESS:{...}}}).
		type account struct {
			Access    string `json:"access"`
			Secret    string `json:"secret"`
			Role      string `json:"role"`
			UserID    int    `json:"userID"`
			GroupID   int    `json:"groupID"`
			ProjectID int    `json:"projectID"`
		}
		accounts := map[string]account{}
		for _, u := range users {
			accounts[u.AccessKey] = account{Access: u.AccessKey, Secret: u.SecretKey, Role: u.Role}
		}
		b, err := json.Marshal(map[string]any{"accessAccounts": accounts})
		if err != nil {
			return nil, err
		}
		if err := os.WriteFile(filepath.Join(iam, "users.json"), b, 0o600); err != nil {
			return nil, err
		}
		return []string{"--iam-dir", iam}, nil
	})
}

// STSEmulator is versitygw's standalone IAM API server, which answers
// STS GetCallerIdentity for the root account it is started with.
type STSEmulator struct {
	Endpoint string // "http://127.0.0.1:PORT"
	proc     *Process
	dir      string
}

// StartVersitygwSTS starts `versitygw iam` on a free loopback port with
// the given root credentials (those of an S3Emulator, so that one key is
// known to both). Point AWS_ENDPOINT_URL_STS at Endpoint.
func StartVersitygwSTS(ctx context.Context, accessKey, secretKey string) (*STSEmulator, error) {
	bin, err := Find("versitygw", "bin/versitygw")
	if err != nil {
		return nil, err
	}
	port, err := FreePort()
	if err != nil {
		return nil, fmt.Errorf("versitygw iam: free port: %w", err)
	}
	dir, err := os.MkdirTemp("", "ckgate-versitygw-sts-")
	if err != nil {
		return nil, fmt.Errorf("versitygw iam: %w", err)
	}
	addr := "127.0.0.1:" + strconv.Itoa(port)
	env := []string{"ROOT_ACCESS_KEY=" + accessKey, "ROOT_SECRET_KEY=" + secretKey, "VGW_REGION=us-east-1"}
	p, err := Start(ctx, "versitygw iam", bin, []string{"--port", addr, "iam", "--quiet", "--dir", dir}, env, addr, dir, nil)
	if err != nil {
		_ = os.RemoveAll(dir)
		return nil, err
	}
	return &STSEmulator{Endpoint: "http://" + addr, proc: p, dir: dir}, nil
}

// Stop kills the server and removes its directory.
func (e *STSEmulator) Stop() {
	if e == nil || e.proc == nil {
		return
	}
	e.proc.Stop()
	_ = os.RemoveAll(e.dir)
}
