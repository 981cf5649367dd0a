package emulator

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"os"
	"strconv"
	"testing"
	"time"
)

// Azurite's well-known development account (published by Microsoft, the
// same in every installation; not a secret).
const (
	AzuriteAccount = "devstoreaccount1"
	AzuriteKey     = "Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw=="
)

// AzureEmulator is a running Azurite blob service.
type AzureEmulator struct {
	*Process
	// ServiceURL is the blob service URL with the account path:
	// http://127.0.0.1:PORT/devstoreaccount1.
	ServiceURL string
	// Account and Key are the well-known development account.
	Account, Key string
	// ConnectionString names the account, key and blob endpoint.
	ConnectionString string
}

// StartAzurite starts azurite-blob (npm azurite@3.37.0, installed by
// scripts/install-tools.sh into .tools/node_modules) on a free loopback
// port with a private data directory. A missing binary is an error that
// wraps ErrMissing. Stop it with Stop.
func StartAzurite(ctx context.Context) (*AzureEmulator, error) {
	bin, err := Find("azurite-blob", "node_modules/.bin/azurite-blob")
	if err != nil {
		return nil, err
	}
	// The port may be taken between FreePort and the start: try again.
	var last error
	for range 3 {
		em, err := startAzurite(ctx, bin)
		if err == nil {
			return em, nil
		}
		last = err
		if ctx.Err() != nil {
			break
		}
	}
	return nil, last
}

func startAzurite(ctx context.Context, bin string) (*AzureEmulator, error) {
	port, err := FreePort()
	if err != nil {
		return nil, fmt.Errorf("azurite: %w", err)
	}
	dir, err := os.MkdirTemp("", "ckgate-azurite-")
	if err != nil {
		return nil, fmt.Errorf("azurite: %w", err)
	}
	addr := net.JoinHostPort("127.0.0.1", strconv.Itoa(port))
	serviceURL := "http://" + addr + "/" + AzuriteAccount
	args := []string{
		"--blobHost", "127.0.0.1",
		"--blobPort", strconv.Itoa(port),
		"--location", dir,
		"--skipApiVersionCheck", // azblob sends a newer x-ms-version
		"--disableProductStyleUrl",
		"--disableTelemetry",
		"--silent",
	}
	// Ready when the service answers HTTP (any status: an anonymous
	// request is refused, which proves the blob service runs).
	client := &http.Client{Timeout: 2 * time.Second}
	ready := func(ctx context.Context) error {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, serviceURL+"?comp=list", nil)
		if err != nil {
			return err
		}
		resp, err := client.Do(req)
		if err != nil {
			return err
		}
		resp.Body.Close()
		return nil
	}
	p, err := Start(ctx, "azurite-blob", bin, args, nil, addr, dir, ready)
	if err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	return &AzureEmulator{
		Process:    p,
		ServiceURL: serviceURL,
		Account:    AzuriteAccount,
		Key:        AzuriteKey,
		ConnectionString: "DefaultEndpointsProtocol=http;AccountName=" + AzuriteAccount +
			";AccountKey=" + AzuriteKey + ";BlobEndpoint=" + serviceURL + ";",
	}, nil
}

// SetEnv gives the test process (and the children it starts) only the
// development account's shared key: no connection string or SAS token.
func (a *AzureEmulator) SetEnv(t testing.TB) {
	t.Setenv("AZURE_STORAGE_CONNECTION_STRING", "")
	t.Setenv("AZURE_STORAGE_SAS_TOKEN", "")
	t.Setenv("AZURE_STORAGE_KEY", a.Key)
}

// Stop kills Azurite and removes its data directory.
func (a *AzureEmulator) Stop() {
	a.Process.Stop()
	_ = os.RemoveAll(a.Dir)
}
